package io.warpdata.daemon.cli;

import io.warpdata.daemon.control.protocol.Calls;
import io.warpdata.daemon.control.protocol.DatasetArg;
import io.warpdata.daemon.control.protocol.InfoCall;
import io.warpdata.daemon.control.ControlClient;
import io.warpdata.daemon.control.ControlException;
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
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code warpctl init DATASET [-o FILE] [--mount DIR] [--table T]}: writes the seed's short Python
 * stub (section 9.3) that imports the package {@code warpdata} and reads the dataset pinned to its
 * version (see {@link LoaderGenerator}). Asks the running warpd for the version and its structure.
 */
@Command(name = "init", mixinStandardHelpOptions = true, description = "Write a Python loader stub (importing warpdata) pinned to a dataset's version.")
public final class InitCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "DATASET", description = "workspace/name (pinned to its latest version) or workspace/name@version")
    String dataset;

    @Option(names = {"-o", "--output"}, paramLabel = "FILE", description = "where to write the loader (default: ./<ws>_<name>_loader.py)")
    Path output;

    @Option(names = "--mount", paramLabel = "DIR", description = "the Warp mount the loader reads (default: the running warpd's)")
    Path mount;

    @Option(names = "--table", paramLabel = "NAME", description = "table whose rows the loader yields (default: main, else the bound one)")
    String table;

    @Override
    public Integer call() {
        InfoCall.Reply info;
        Path mountDir = mount;
        try (ControlClient c = DaemonCalls.connect(spec)) {
            info = c.call(Calls.INFO, new DatasetArg(dataset));
            if (mountDir == null) {
                mountDir = Path.of(c.call(Calls.STATUS).mount());
            }
        }
        String stem = info.dataset().replace('/', '_').replace('-', '_') + "_loader";
        Path out = DaemonCalls.root(spec).context.cwd().resolve(output != null ? output : Path.of(stem + ".py")).toAbsolutePath().normalize();
        LoaderGenerator.Target target = LoaderGenerator.target(info, mountDir, Optional.ofNullable(table));
        Path root = mountDir.resolve(target.dataset().split("/")[0]).resolve(target.dataset().split("/")[1] + "@" + target.version());
        Optional<Path> warpdata = packageBesideWarpctl();
        try {
            Files.createDirectories(out.getParent());
            Files.writeString(out, LoaderGenerator.generate(target, Optional.of(DaemonCalls.socket(spec).toAbsolutePath()),
                    warpdata), StandardCharsets.UTF_8);
            Files.setPosixFilePermissions(out, PosixFilePermissions.fromString("rwxr-xr-x"));
        } catch (IOException e) {
            throw new ControlException("WriteFailed", "cannot write " + out + ": " + e.getMessage(), "pass -o to a writable place");
        }
        PrintWriter pw = spec.commandLine().getOut();
        if (DaemonCalls.json(spec)) {
            DaemonCalls.printJson(pw, new Written(out.toString(), target.dataset(), target.version(), root.toString(),
                    target.table().orElse(null), target.totalRows(), warpdata.map(Path::toString).orElse(null)));
        } else {
            // Without a table the count is of members, which by key are read as fewer samples (audit 25).
            pw.printf("wrote %s (%s@%s, %s)%n", out, target.dataset(), target.version().substring(0, 12),
                    target.table().isPresent() ? "table " + target.table().get() + ", " + target.totalRows() + " rows"
                            : "no table: " + target.totalRows() + " artifact members, read as "
                            + (target.samplesByKey() ? "samples (the files sharing a key)" : "rows"));
            if (warpdata.isEmpty()) {
                pw.printf("it imports warpdata: install it with pip install PATH/TO/warp/python (or scripts/install)%n");
            }
            pw.printf("try it: python3 %s    (RANK=0 WORLD_SIZE=2 python3 %s for one of two ranks)%n", out, out);
            pw.flush();
        }
        return 0;
    }

    /** What {@code warpctl init --json} prints: the loader written, and what it reads. */
    record Written(String loader, String dataset, String version, String root, String table, long rows, String warpdata) {
    }

    /**
     * The folder holding the package {@code warpdata} that came with this warpctl: {@code python/}
     * of the source tree, or {@code lib/warp/python} when installed (beside warp.jar).
     */
    static Optional<Path> packageBesideWarpctl() {
        try {
            Path here = Path.of(InitCommand.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            for (Path p = here; p != null; p = p.getParent()) {
                if (Files.isRegularFile(p.resolve("python/warpdata/__init__.py"))) {
                    return Optional.of(p.resolve("python").toAbsolutePath().normalize());
                }
            }
        } catch (java.net.URISyntaxException | SecurityException | IllegalArgumentException | NullPointerException e) {
            // No code source to look beside.
        }
        return Optional.empty();
    }
}
