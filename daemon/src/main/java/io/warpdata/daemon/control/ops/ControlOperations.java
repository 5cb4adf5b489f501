package io.warpdata.daemon.control.ops;

import io.warpdata.store.BlobStore;
import io.warpdata.catalog.Catalog;
import io.warpdata.blobcache.cache.BlockCache;
import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.Operation;
import io.warpdata.daemon.control.OperationRegistry;
import io.warpdata.daemon.control.SourceAccess;
import io.warpdata.vfs.WarpTree;

import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The standard set of control operations, over the daemon's real parts. */
public final class ControlOperations {
    private ControlOperations() {
    }

    /**
     * What a publish through the daemon writes to, and what happens around it.
     *
     * @param store         the daemon's store (uploads go there)
     * @param staging       where packed shards are staged
     * @param beforePublish run before (warpd: try the store at once, even if just found down)
     */
    public record Publishing(BlobStore store, Path staging, Runnable beforePublish) {
    }

    /**
     * status, stats, metrics, info, cache.stats, cache.gc, cache.verify, warm, table.batches, refresh, and publish when
     * {@code publishing} is given (no {@code prefetch.order}: that needs the mount's tree).
     *
     * @param afterCatalogChange run after a refresh or a publish (warpd: the mount re-checks the
     *                           links the kernel caches, so a moved pointer shows at once)
     */
    public static OperationRegistry standard(DaemonInfo daemon, BlockCache cache, Catalog catalog,
                                             Runnable afterCatalogChange, Optional<Publishing> publishing,
                                             AccessPolicy policy, Clock clock) {
        return standard(daemon, cache, catalog, afterCatalogChange, publishing, Optional.empty(), policy, clock);
    }

    /**
     * As above, plus {@code prefetch.order} when the mount's {@code tree} is given (paths in an
     * order are resolved through it).
     */
    public static OperationRegistry standard(DaemonInfo daemon, BlockCache cache, Catalog catalog,
                                             Runnable afterCatalogChange, Optional<Publishing> publishing,
                                             Optional<WarpTree> tree, AccessPolicy policy, Clock clock) {
        List<Operation> ops = new ArrayList<>(List.of(
                new StatusOperation(daemon, policy, clock),
                new StatsOperation(daemon),
                new MetricsOperation(daemon),
                new InfoOperation(catalog),
                new CacheStatsOperation(cache),
                new CacheGcOperation(cache),
                new CacheVerifyOperation(cache, clock),
                new WarmOperation(catalog, cache, clock),
                new TableBatchesOperation(catalog, cache, Path.of(System.getProperty("java.io.tmpdir"))),
                new RefreshOperation(catalog, afterCatalogChange)));
        tree.ifPresent(t -> ops.add(new PrefetchOrderOperation(t, cache, daemon.mountPoint(), clock)));
        publishing.ifPresent(p -> ops.add(new PublishOperation(catalog, p.store(), p.staging(), clock, p.beforePublish(),
                afterCatalogChange, new SourceAccess())));
        return new OperationRegistry(ops);
    }
}
