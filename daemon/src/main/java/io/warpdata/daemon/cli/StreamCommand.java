package io.warpdata.daemon.cli;

import io.warpdata.blobcache.cache.BlobReader;
import io.warpdata.daemon.ByteSize;
import io.warpdata.daemon.inspect.RowStream;
import io.warpdata.manifest.Table;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code warpctl stream DATASET [--table T] [--columns a,b] [--batch-size N] [--shard auto|R/W]
 * [--format jsonl|csv]}: a table's rows to stdout, read by DuckDB from ranged, verified reads of
 * only the columns asked for, sharded as the generated loader shards.
 */
@Command(name = "stream", description = "Write a table's rows to stdout as JSON lines or CSV (ranged reads of the"
        + " columns asked for; sharded like the 'warpctl init' loader).")
final class StreamCommand implements Callable<Integer> {
    @ParentCommand
    WarpctlCommand root;

    @Parameters(index = "0", paramLabel = "DATASET", description = "workspace/name[@version]")
    String dataset;

    @Option(names = "--table", paramLabel = "TABLE", description = "Table (default: main, else the first one).")
    String table;

    @Option(names = "--columns", paramLabel = "a,b", split = ",", description = "Only these columns, in this order,"
            + " each once (default: all). A name with a comma is written in double quotes, as in SQL:"
            + " --columns '\"a,b\",c' (a double quote inside them doubled).")
    List<String> columns;

    @Option(names = "--batch-size", paramLabel = "N", defaultValue = "1024",
            description = "Rows fetched and written at a time (default: ${DEFAULT-VALUE}).")
    int batchSize;

    @Option(names = "--shard", paramLabel = "auto|R/W", defaultValue = "0/1",
            description = "Rank R of W takes one contiguous run of the table's rows (whole files when they split evenly),"
                    + " as the Python package warpdata and the 'warpctl init' stub do;"
                    + " auto: RANK/WORLD_SIZE from the environment (as torchrun sets them). Default: all rows.")
    String shard;

    @Option(names = "--format", paramLabel = "jsonl|csv", defaultValue = "jsonl",
            description = "jsonl (one JSON object per row) or csv (with a header line). Default: ${DEFAULT-VALUE}.")
    String format;

    @Override
    public Integer call() {
        if (batchSize < 1) {
            throw new UsageException("--batch-size " + batchSize + " is not positive", "Pass --batch-size 1024 or so.");
        }
        RowStream.Shard selected = shard(shard, root.context.env());
        RowStream.Format fmt = format(format);
        try (Remote remote = root.openRemote()) {
            ChosenTable chosen = ChosenTable.of(remote, dataset, table,
                    "Use 'warpctl inspect' to see its artifacts; 'warpctl cat' writes one member.");
            String name = chosen.name();
            Table t = chosen.table();
            RowStream.Result result;
            try (BlobReader reader = root.context.readers().open(remote.store)) {
                // Each column once, as Python's columns= (id,id gave id and id_1).
                List<String> asked = columns == null ? List.of() : List.copyOf(new java.util.LinkedHashSet<>(unquoted(columns)));
                result = new RowStream(reader, Path.of(System.getProperty("java.io.tmpdir")))
                        .stream(name, t, asked, batchSize, selected, fmt, root.context.out());
            }
            if (root.context.stderrIsTerminal()) {
                root.context.err().println("table " + name + ": " + result.rows() + " rows (shard " + selected.rank() + "/"
                        + selected.world() + "), read " + ByteSize.format(result.bytesRead()) + " of "
                        + ByteSize.format(result.shardBytes()) + " (" + result.bytesRead() + " / " + result.shardBytes()
                        + " bytes)");
            }
        }
        return 0;
    }

    /**
     * The names {@code --columns} gave: picocli does not split inside double quotes, so
     * {@code "a,b"} arrives whole, and is unquoted here as an SQL identifier ({@code ""} is one quote).
     */
    static List<String> unquoted(List<String> names) {
        List<String> out = new java.util.ArrayList<>(names.size());
        for (String name : names) {
            if (name.length() >= 2 && name.startsWith("\"") && name.endsWith("\"")) {
                out.add(name.substring(1, name.length() - 1).replace("\"\"", "\""));
            } else {
                out.add(name);
            }
        }
        return out;
    }

    /** {@code R/W}, or {@code auto}: {@code RANK}/{@code WORLD_SIZE} from the environment (defaults 0/1). */
    static RowStream.Shard shard(String text, java.util.Map<String, String> env) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        String rank;
        String world;
        if (t.equals("auto")) {
            rank = env.getOrDefault("RANK", "0");
            world = env.getOrDefault("WORLD_SIZE", "1");
        } else {
            String[] parts = t.split("/", -1);
            if (parts.length != 2) {
                throw badShard(text);
            }
            rank = parts[0];
            world = parts[1];
        }
        try {
            return new RowStream.Shard(Integer.parseInt(rank.trim()), Integer.parseInt(world.trim()));
        } catch (IllegalArgumentException e) {
            throw t.equals("auto")
                    ? new UsageException("--shard auto: RANK=" + rank + " WORLD_SIZE=" + world + " is not a shard",
                            "Set RANK and WORLD_SIZE with 0 <= RANK < WORLD_SIZE (torchrun does), or pass --shard R/W.")
                    : badShard(text);
        }
    }

    private static UsageException badShard(String text) {
        return new UsageException("--shard " + text + " is not a shard",
                "Pass --shard R/W with 0 <= R < W (e.g. --shard 0/4), or --shard auto to take RANK/WORLD_SIZE.");
    }

    private static RowStream.Format format(String text) {
        try {
            return RowStream.Format.valueOf(text.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new UsageException("--format " + text + " is not a format",
                    "Pass --format " + String.join(" or --format ", Arrays.stream(RowStream.Format.values())
                            .map(f -> f.name().toLowerCase(Locale.ROOT)).toList()) + ".");
        }
    }
}
