package io.warpdata.daemon.control.ops;

import com.fasterxml.jackson.databind.util.RawValue;
import io.warpdata.blobcache.cache.BlobReader;
import io.warpdata.catalog.Catalog;
import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.TypedOperation;
import io.warpdata.daemon.control.protocol.Calls;
import io.warpdata.daemon.control.protocol.Names;
import io.warpdata.daemon.control.protocol.TableBatchesCall;
import io.warpdata.daemon.inspect.TableBatches;
import io.warpdata.manifest.Table;
import io.warpdata.manifest.WarpException;

import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * {@code table.batches {dataset, table?, columns?, where?, limit?, batch_size?, rank?, world?,
 * worker?, workers?}}: a table's rows as columnar batches, one {@code "event":"batch"} line each
 * ({@code rows}, {@code columns: {name: [values]}}, {@code base64: [BLOB columns]}), then a result
 * with the counts and the row range read. The rows are those {@link io.warpdata.daemon.inspect.RowSplit}
 * gives the (rank, worker); the Python package {@code warpdata} reads tables through this.
 * Reads go through warpd's cache. Cancelled when the client goes away.
 */
public final class TableBatchesOperation
        extends TypedOperation<TableBatchesCall.Request, TableBatchesCall.Reply, TableBatchesCall.Batch> {
    /** Largest batch accepted: a batch is one line, held whole by both sides. */
    static final int MAX_BATCH = 1 << 20;

    private final Catalog catalog;
    private final TableBatches batches;

    /** @param tempDir where each call keeps the sparse mirrors of the shards it reads (deleted after) */
    public TableBatchesOperation(Catalog catalog, BlobReader reader, Path tempDir) {
        super(Calls.TABLE_BATCHES, AccessPolicy.Access.OPEN);
        this.catalog = catalog;
        this.batches = new TableBatches(reader, tempDir);
    }

    @Override
    protected TableBatchesCall.Reply run(TableBatchesCall.Request q, Events<TableBatchesCall.Batch> events) {
        Catalog.Resolved v = catalog.resolve(Datasets.ref(q.dataset()));
        Map<String, Table> tables = v.manifest().tables();
        String name = q.table() != null ? q.table() : tables.containsKey("main") || tables.isEmpty() ? "main"
                : tables.keySet().iterator().next();
        Table table = tables.get(name);
        if (table == null) {
            throw new TableNotFoundException(v.id() + "@" + v.version().hex().substring(0, 12), name,
                    String.join(", ", tables.keySet()));
        }
        int world = atLeastZero("world", q.world(), 1);
        int rank = atLeastZero("rank", q.rank(), 0);
        int workers = atLeastZero("workers", q.workers(), 1);
        int worker = atLeastZero("worker", q.worker(), 0);
        if (world < 1 || rank >= world) {
            throw bad("rank", "must be in [0, world): rank " + rank + ", world " + world);
        }
        if (workers < 1 || worker >= workers) {
            throw bad("worker", "must be in [0, workers): worker " + worker + ", workers " + workers);
        }
        int batchSize = atLeastZero("batch_size", q.batchSize(), 1024);
        if (batchSize < 1 || batchSize > MAX_BATCH) {
            throw bad("batch_size", "must be from 1 to " + MAX_BATCH);
        }
        if (q.limit() != null && q.limit() < 0) {
            throw bad("limit", "must be a whole number from 0");
        }
        long limit = q.limit() == null ? -1 : q.limit();
        Optional<String> where = Optional.ofNullable(q.where()).filter(w -> !w.isBlank());
        TableBatches.Query query = new TableBatches.Query(Names.list(q.columns()), where, limit, batchSize,
                rank, world, worker, workers, Boolean.TRUE.equals(q.even()));
        var ctx = events.context();
        TableBatches.Result r = batches.read(name, table, query, batch -> events.send(new TableBatchesCall.Batch(
                batch.rows(), new RawValue(batch.columnsJson()), batch.base64().isEmpty() ? null : batch.base64())),
                ctx::cancelled);
        ctx.cancellation().throwIfCancelled("table.batches of " + v.id());
        return new TableBatchesCall.Reply(v.id().toString(), v.version().hex(), name, r.rows(), r.batches(), r.bytesRead(),
                new TableBatchesCall.RowRange(r.range().start(), r.range().end(), r.how()));
    }

    private int atLeastZero(String field, Integer value, int dflt) {
        if (value == null) {
            return dflt;
        }
        if (value < 0) {
            throw bad(field, "must be a whole number from 0");
        }
        return value;
    }

    /** A table the version does not have. */
    public static final class TableNotFoundException extends WarpException {
        public TableNotFoundException(String version, String table, String tables) {
            super(version + " has no table '" + table + "'",
                    tables.isEmpty() ? "It has only artifacts: read their files through the mount (Dataset.root,"
                            + " e.g. torchvision's ImageFolder; 'warpctl init' writes a loader), or publish a table of"
                            + " member paths bound to the artifact (docs/views.md)." : "Pick one of its tables: " + tables + ".");
        }

        @Override
        public String type() {
            return "TableNotFound";
        }
    }
}
