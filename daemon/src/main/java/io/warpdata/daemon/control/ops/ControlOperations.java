package io.warpdata.daemon.control.ops;

import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.Operation;
import io.warpdata.daemon.control.OperationRegistry;
import io.warpdata.daemon.control.SourceAccess;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The standard set of control operations, built from the daemon's parts. */
public final class ControlOperations {
    private ControlOperations() {
    }

    /**
     * status, info, cache.stats, cache.gc, cache.verify, warm, refresh, and publish when a
     * publisher is given.
     */
    public static OperationRegistry standard(DaemonInfo daemon, CacheControl cache, CatalogControl catalog,
                                             Optional<PublishRunner> publisher, AccessPolicy policy, Clock clock) {
        List<Operation> ops = new ArrayList<>(List.of(
                new StatusOperation(daemon, policy, clock),
                new InfoOperation(catalog),
                new CacheStatsOperation(cache),
                new CacheGcOperation(cache),
                new CacheVerifyOperation(cache, clock),
                new WarmOperation(catalog, cache, clock),
                new RefreshOperation(catalog)));
        publisher.ifPresent(p -> ops.add(new PublishOperation(p, catalog, new SourceAccess())));
        return new OperationRegistry(ops);
    }
}
