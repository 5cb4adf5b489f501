package io.warpdata.daemon.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.warpdata.daemon.ByteSize;
import io.warpdata.blobcache.cache.BlobReader;
import io.warpdata.daemon.inspect.ParquetHead;
import io.warpdata.daemon.inspect.TextTable;
import io.warpdata.manifest.Table;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code warpctl head DATASET [-n N] [--table T]}: the first rows, read by ranged reads. */
@Command(name = "head", description = "First rows of a table (reads only the row groups needed).")
final class HeadCommand implements Callable<Integer> {
    @ParentCommand
    WarpctlCommand root;

    @Parameters(index = "0", paramLabel = "DATASET", description = "workspace/name[@version]")
    String dataset;

    @Option(names = "-n", paramLabel = "N", defaultValue = "10", description = "Rows (default: ${DEFAULT-VALUE}).")
    int rows;

    @Option(names = "--table", paramLabel = "TABLE", description = "Table (default: main, else the first one).")
    String table;

    @Override
    public Integer call() {
        if (rows < 0) {
            throw new UsageException("-n " + rows + " is negative", "Pass -n with a count of rows, e.g. -n 10.");
        }
        try (Remote remote = root.openRemote()) {
            ChosenTable chosen = ChosenTable.of(remote, dataset, table, "Use 'warpctl inspect' to see its artifacts.");
            String name = chosen.name();
            Table t = chosen.table();
            ParquetHead.Result result;
            try (BlobReader reader = root.context.readers().open(remote.store)) {
                result = new ParquetHead(reader, Path.of(System.getProperty("java.io.tmpdir"))).head(name, t, rows);
            }
            if (root.json) {
                // Each row as DuckDB's to_json renders it, as 'stream' writes it: lists and structs
                // as JSON arrays and objects, BLOBs as escaped strings.
                List<JsonNode> out = new ArrayList<>();
                // Numbers kept as DuckDB wrote them: a DECIMAL(38,10) or a HUGEINT read as a double
                // lost digits and its scale, unlike 'stream' and warpdata (audit 28).
                com.fasterxml.jackson.databind.ObjectMapper mapper = new com.fasterxml.jackson.databind.ObjectMapper()
                        .enable(com.fasterxml.jackson.databind.DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
                        .setNodeFactory(com.fasterxml.jackson.databind.node.JsonNodeFactory.withExactBigDecimals(true));
                for (ParquetHead.Row row : result.rows()) {
                    try {
                        out.add(mapper.readTree(row.json()));
                    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                        throw new IllegalStateException("DuckDB rendered a row that is not JSON: " + row.json(), e);
                    }
                }
                root.printJson(new HeadOutput(name, result.columns(), out, result.bytesRead(), result.bytesFetched(),
                        result.shardBytes()));
            } else {
                TextTable text = new TextTable(result.columns());
                for (ParquetHead.Row row : result.rows()) {
                    text.add(row.text().stream().map(v -> v == null ? "NULL" : v).toList());
                }
                root.context.out().print(text.render(true));
                if (result.shardsRead() == 0) {
                    // -n 0: "read 0 B of the 0 B of 0 shard(s)" read as if the table had none.
                    // A table of no rows (audit 28) reads nothing either, for another reason.
                    root.context.err().println("table " + name + ": " + (rows <= 0 ? "no row asked, nothing read"
                            : "holds no rows (" + t.shards().size() + " shard(s) of 0 rows), nothing read"));
                } else {
                    // DuckDB reads a small file's footer more than once: then it read more than the file holds.
                    root.context.err().println("table " + name + ": " + result.rows().size() + " row(s) from "
                            + result.shardsRead() + " shard(s) of " + ByteSize.format(result.shardBytes()) + "; DuckDB read "
                            + ByteSize.format(result.bytesRead())
                            + (result.bytesRead() > result.shardBytes() ? " (some parts twice)" : "") + " of them, "
                            + ByteSize.format(result.bytesFetched())
                            + " fetched from the store (in whole blocks; none when cached)");
                }
            }
        }
        return 0;
    }

    /** What {@code warpctl head --json} prints. */
    record HeadOutput(String table, List<String> columns, List<JsonNode> rows, long bytesRead, long bytesFetched,
                      long shardBytes) {
    }
}
