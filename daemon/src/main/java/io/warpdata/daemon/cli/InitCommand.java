package io.warpdata.daemon.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warpdata.daemon.control.ControlClient;
import io.warpdata.daemon.control.ControlException;
import io.warpdata.daemon.control.ControlProtocol;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code warpctl init DATASET [-o FILE] [--mount DIR] [--table T] [--rows auto|file|none]}: writes
 * a Python loader that reads the dataset through the mount (see {@link LoaderGenerator}). Asks
 * the running warpd for the version and its structure; with {@code --rows file} (or {@code auto}
 * and a table of at most {@value #AUTO_ROWS_LIMIT} rows) also writes the table's rows as a gzipped
 * JSON-lines file next to the loader, for Pythons without a Parquet reader.
 */
@Command(name = "init", mixinStandardHelpOptions = true, description = "Write a Python (PyTorch-style) loader for a dataset that reads it through the mount.")
public final class InitCommand implements Callable<Integer> {
    static final long AUTO_ROWS_LIMIT = 1_000_000;

    enum Rows { auto, file, none }


    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "DATASET", description = "workspace/name (pinned to its latest version) or workspace/name@version")
    String dataset;

    @Option(names = {"-o", "--output"}, paramLabel = "FILE", description = "where to write the loader (default: ./<ws>_<name>_loader.py)")
    Path output;

    @Option(names = "--mount", paramLabel = "DIR", description = "the Warp mount the loader reads (default: the running warpd's)")
    Path mount;

    @Option(names = "--table", paramLabel = "NAME", description = "table whose rows the dataset yields (default: main, else the bound one)")
    String table;

    @Option(names = "--rows", paramLabel = "auto|file|none", defaultValue = "auto",
            description = "also write the rows as <loader>_rows.jsonl.gz for Pythons without duckdb/pyarrow (auto: when <= 1M rows)")
    Rows rows;


    @Override
    public Integer call() {
        JsonNode info;
        Path mountDir = mount;
        try (ControlClient c = DaemonCalls.connect(spec)) {
            info = c.call("info", ControlProtocol.object().put("dataset", dataset));
            if (mountDir == null) {
                mountDir = Path.of(c.call("status", ControlProtocol.object()).path("mount").asText());
            }
        }
        String stem = info.path("dataset").asText().replace('/', '_').replace('-', '_') + "_loader";
        Path out = DaemonCalls.root(spec).context.cwd().resolve(output != null ? output : Path.of(stem + ".py")).toAbsolutePath().normalize();
        String outStem = out.getFileName().toString().replaceFirst("\\.py$", "");
        Path rowsPath = out.resolveSibling(outStem + "_rows.jsonl.gz");

        LoaderGenerator.Target found = LoaderGenerator.target(info, mountDir, Optional.ofNullable(table), Optional.empty());
        LoaderGenerator.Target target = found;
        Path root = mountDir.resolve(found.dataset().split("/")[0]).resolve(found.dataset().split("/")[1] + "@" + found.version());
        boolean writeRows = target.table().isPresent()
                && (rows == Rows.file || (rows == Rows.auto && target.totalRows() <= AUTO_ROWS_LIMIT));
        long written = -1;
        if (writeRows) {
            if (!Files.isDirectory(root)) {
                throw new ControlException("MountUnavailable", root + " is not visible, so the rows cannot be read",
                        "check the mount (ls " + mountDir + "; warpctl status), or pass --mount DIR, or --rows none");
            }
            written = RowsFile.write(found.shardFiles().stream()
                    .map(f -> root.resolve(found.table().get()).resolve(f)).toList(), rowsPath);
            target = new LoaderGenerator.Target(target.dataset(), target.version(), target.mount(), target.table(),
                    target.shardFiles(), target.columns(), target.totalRows(), target.bindings(),
                    Optional.of(rowsPath.getFileName().toString()));
        }
        try {
            Files.createDirectories(out.getParent());
            Files.writeString(out, LoaderGenerator.generate(target, Optional.of(DaemonCalls.socket(spec).toAbsolutePath())),
                    StandardCharsets.UTF_8);
            Files.setPosixFilePermissions(out, PosixFilePermissions.fromString("rwxr-xr-x"));
        } catch (IOException e) {
            throw new ControlException("WriteFailed", "cannot write " + out + ": " + e.getMessage(), "pass -o to a writable place");
        }
        PrintWriter pw = spec.commandLine().getOut();
        if (DaemonCalls.json(spec)) {
            ObjectNode r = ControlProtocol.object();
            r.put("loader", out.toString());
            r.put("dataset", target.dataset());
            r.put("version", target.version());
            r.put("root", root.toString());
            target.table().ifPresentOrElse(t -> r.put("table", t), () -> r.putNull("table"));
            if (writeRows) {
                r.put("rows_file", rowsPath.toString());
                r.put("rows", written);
            } else {
                r.putNull("rows_file");
            }
            DaemonCalls.printJson(pw, r);
        } else {
            pw.printf("wrote %s (%s@%s, table %s, %d rows)%n", out, target.dataset(), target.version().substring(0, 12),
                    target.table().orElse("(none: artifact members)"), target.totalRows());
            if (writeRows) {
                pw.printf("wrote %s (%d rows, for Pythons without duckdb/pyarrow)%n", rowsPath, written);
            }
            pw.printf("try it: python3 %s    (RANK=0 WORLD_SIZE=2 python3 %s for one of two ranks)%n", out, out);
            pw.flush();
        }
        return 0;
    }
}
