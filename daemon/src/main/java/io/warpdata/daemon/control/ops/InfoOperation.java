package io.warpdata.daemon.control.ops;

import io.warpdata.catalog.Catalog;
import io.warpdata.catalog.RefNames;
import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.TypedOperation;
import io.warpdata.daemon.control.protocol.Calls;
import io.warpdata.daemon.control.protocol.DatasetArg;
import io.warpdata.daemon.control.protocol.Empty;
import io.warpdata.daemon.control.protocol.InfoCall;
import io.warpdata.manifest.Artifact;
import io.warpdata.manifest.Binding;
import io.warpdata.manifest.Column;
import io.warpdata.manifest.Manifest;
import io.warpdata.manifest.Table;
import io.warpdata.manifest.TableShard;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code info {dataset}}: one version as the daemon sees it: tables (shard files, rows, bytes,
 * schema), artifacts (shards, members), bindings, the names it goes by and where a view came from. {@code warpctl init} builds its loader from this.
 */
public final class InfoOperation extends TypedOperation<DatasetArg, InfoCall.Reply, Empty> {
    private final Catalog catalog;

    public InfoOperation(Catalog catalog) {
        super(Calls.INFO, AccessPolicy.Access.OPEN);
        this.catalog = catalog;
    }

    @Override
    protected InfoCall.Reply run(DatasetArg request, Events<Empty> events) {
        Catalog.Resolved v = catalog.resolve(Datasets.ref(request.dataset()));
        return describe(v, names(catalog, v));
    }

    /** The longest {@code info} waits for the version's names: they are a courtesy, the rest is what training needs. */
    static final Duration NAMES_WAIT = Duration.ofSeconds(1);

    /**
     * The names the version goes by ({@code latest}, {@code tag v1}, {@code branch dev}), as
     * {@code warpctl info} shows them; none when the store cannot say within {@link #NAMES_WAIT}
     * (a hung store made a lookup of names never listed wait 10 s, and must not slow or fail the
     * info of a version that is known). The lookup goes on and fills the catalog for next time.
     */
    static List<String> names(Catalog catalog, Catalog.Resolved v) {
        CompletableFuture<List<String>> names = CompletableFuture.supplyAsync(
                () -> RefNames.of(catalog, v.id()).of(v.version()), Thread::startVirtualThread);
        try {
            return names.get(NAMES_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException unknownNow) {
            return List.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return List.of();
        }
    }

    /** The {@code info} result for one resolved version that goes by {@code names}. */
    public static InfoCall.Reply describe(Catalog.Resolved v, List<String> names) {
        Manifest m = v.manifest();
        Map<String, InfoCall.TableInfo> tables = new LinkedHashMap<>();
        for (Map.Entry<String, Table> t : m.tables().entrySet()) {
            List<InfoCall.ShardInfo> shards = new ArrayList<>();
            for (TableShard s : t.getValue().shards()) {
                shards.add(new InfoCall.ShardInfo(s.name(), s.rowCount(), s.blob().size()));
            }
            List<InfoCall.ColumnInfo> schema = new ArrayList<>();
            for (Column c : t.getValue().schema()) {
                schema.add(new InfoCall.ColumnInfo(c.name(), c.type()));
            }
            tables.put(t.getKey(), new InfoCall.TableInfo(t.getValue().rowCount(), t.getValue().byteSize(), shards, schema));
        }
        Map<String, InfoCall.ArtifactInfo> artifacts = new LinkedHashMap<>();
        for (Map.Entry<String, Artifact> a : m.artifacts().entrySet()) {
            Artifact art = a.getValue();
            artifacts.put(a.getKey(), new InfoCall.ArtifactInfo(art.kind().json(), art.shards().size(), art.memberCount(),
                    art.memberBytes(), art.shardNames().isEmpty() ? null : art.shardNames(),
                    art.facts().isEmpty() ? null : art.facts()));
        }
        List<InfoCall.BindingInfo> bindings = new ArrayList<>();
        for (Binding b : m.bindings()) {
            bindings.add(new InfoCall.BindingInfo(b.table(), b.column(), b.artifact(), b.refType().json()));
        }
        InfoCall.DerivedFromInfo derived = m.derivedFrom().map(d -> new InfoCall.DerivedFromInfo(d.parent().toString(),
                d.parentVersion().hex(), d.table(), d.query())).orElse(null);
        return new InfoCall.Reply(v.id().toString(), v.version().hex(), tables, artifacts, bindings,
                m.stats().totalRows(), m.readableBytes(), names, derived);
    }
}
