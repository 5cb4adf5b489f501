package io.warpdata.daemon.control.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.util.RawValue;
import io.warpdata.blobcache.cache.BlobReader;
import io.warpdata.catalog.Catalog;
import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.Args;
import io.warpdata.daemon.control.ControlProtocol;
import io.warpdata.daemon.control.Operation;
import io.warpdata.daemon.control.OperationContext;
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
public final class TableBatchesOperation implements Operation {
    /** Largest batch accepted: a batch is one line, held whole by both sides. */
    static final int MAX_BATCH = 1 << 20;

    private final Catalog catalog;
    private final TableBatches batches;

    /** @param tempDir where each call keeps the sparse mirrors of the shards it reads (deleted after) */
    public TableBatchesOperation(Catalog catalog, BlobReader reader, Path tempDir) {
        this.catalog = catalog;
        this.batches = new TableBatches(reader, tempDir);
    }

    @Override
    public String name() {
        return "table.batches";
    }

    @Override
    public AccessPolicy.Access access() {
        return AccessPolicy.Access.OPEN;
    }

    @Override
    public JsonNode run(OperationContext ctx) {
        Args args = ctx.args();
        Catalog.Resolved v = catalog.resolve(Datasets.ref(args));
        Map<String, Table> tables = v.manifest().tables();
        String name = args.optString("table").orElse(tables.containsKey("main") || tables.isEmpty() ? "main"
                : tables.keySet().iterator().next());
        Table table = tables.get(name);
        if (table == null) {
            throw new TableNotFoundException(v.id() + "@" + v.version().hex().substring(0, 12), name,
                    String.join(", ", tables.keySet()));
        }
        int world = args.optInt("world").orElse(1);
        int rank = args.optInt("rank").orElse(0);
        int workers = args.optInt("workers").orElse(1);
        int worker = args.optInt("worker").orElse(0);
        if (world < 1 || rank >= world) {
            throw args.bad("rank", "must be in [0, world): rank " + rank + ", world " + world);
        }
        if (workers < 1 || worker >= workers) {
            throw args.bad("worker", "must be in [0, workers): worker " + worker + ", workers " + workers);
        }
        int batchSize = args.optInt("batch_size").orElse(1024);
        if (batchSize < 1 || batchSize > MAX_BATCH) {
            throw args.bad("batch_size", "must be from 1 to " + MAX_BATCH);
        }
        JsonNode limitNode = args.node().get("limit");
        if (limitNode != null && !limitNode.isNull() && !(limitNode.canConvertToLong() && limitNode.longValue() >= 0)) {
            throw args.bad("limit", "must be a whole number from 0");
        }
        long limit = limitNode == null || limitNode.isNull() ? -1 : limitNode.longValue();
        Optional<String> where = args.optString("where").filter(w -> !w.isBlank());
        TableBatches.Query q = new TableBatches.Query(args.stringList("columns"), where, limit, batchSize,
                rank, world, worker, workers);
        TableBatches.Result r = batches.read(name, table, q, batch -> {
            ObjectNode e = ControlProtocol.object();
            e.put("rows", batch.rows());
            e.putRawValue("columns", new RawValue(batch.columnsJson()));
            if (!batch.base64().isEmpty()) {
                batch.base64().forEach(e.putArray("base64")::add);
            }
            ctx.event("batch", e);
        }, ctx::cancelled);
        ctx.cancellation().throwIfCancelled("table.batches of " + v.id());
        ObjectNode out = ControlProtocol.object();
        out.put("dataset", v.id().toString());
        out.put("version", v.version().hex());
        out.put("table", name);
        out.put("rows", r.rows());
        out.put("batches", r.batches());
        out.put("bytes_read", r.bytesRead());
        ObjectNode range = out.putObject("range");
        range.put("start", r.range().start());
        range.put("end", r.range().end());
        range.put("how", r.range().how());
        return out;
    }

    /** A table the version does not have. */
    public static final class TableNotFoundException extends WarpException {
        public TableNotFoundException(String version, String table, String tables) {
            super(version + " has no table '" + table + "'",
                    "Pick one of its tables: " + (tables.isEmpty() ? "(none: it has only artifacts)" : tables) + ".");
        }

        @Override
        public String type() {
            return "TableNotFound";
        }
    }
}
