package io.warpdata.daemon.cli;

import io.warpdata.daemon.ByteSize;
import io.warpdata.store.BlobStore;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;

/** {@code warpctl doctor}: checks this machine can run and use Warp; exit 1 if anything fails. */
@Command(name = "doctor", mixinStandardHelpOptions = true, description = "Check FUSE, libfuse2, credentials, the remote, the cache dir, the control socket and DuckDB; print the fix for each failure.")
public final class DoctorCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--cache-dir", paramLabel = "DIR", description = "cache directory (default: $WARP_CACHE_DIR or ~/.cache/warpdata)")
    Path cacheDir;

    @Option(names = "--cache-size", paramLabel = "SIZE", converter = SizeConverter.class,
            description = "cache limit (default: $WARP_CACHE_SIZE_GB GB, else 100GB)")
    Long cacheSize;

    @Option(names = "--allow-other", description = "warpd is configured with --allow-other (then user_allow_other is required)")
    boolean allowOther;

    @Override
    public Integer call() {
        CliContext context = DaemonCalls.root(spec).context;
        Map<String, String> env = context.env();
        BiFunction<String, Optional<String>, BlobStore> stores = (uri, ep) -> context.stores().open(uri, ep.orElse(null));
        Path home = Path.of(env.getOrDefault("HOME", System.getProperty("user.home")));
        WarpctlCommand root = DaemonCalls.root(spec);
        Optional<String> remote = root.remoteUri();
        Optional<String> endpoint = root.endpointUrl();
        Path cache = cacheDir != null ? cacheDir
                : Optional.ofNullable(env.get("WARP_CACHE_DIR")).filter(s -> !s.isBlank()).map(Path::of)
                .orElse(home.resolve(".cache/warpdata"));
        long size = cacheSize != null ? cacheSize : cacheSizeFromEnvironment(env);
        Doctor doctor = new Doctor(new Doctor.Settings(remote, endpoint, cache, size, DaemonCalls.socket(spec), allowOther),
                new Doctor.Host(env, Path.of("/dev/fuse"), Path.of("/etc/fuse.conf"), home, DoctorCommand::ldconfig, stores));
        List<Doctor.Check> checks = doctor.run();
        boolean failed = checks.stream().anyMatch(c -> c.status() == Doctor.Status.FAIL);
        PrintWriter out = spec.commandLine().getOut();
        if (DaemonCalls.json(spec)) {
            DaemonCalls.printJson(out, new Report(!failed, checks));
        } else {
            for (Doctor.Check c : checks) {
                out.printf("%-4s  %-17s %s%n", c.status(), c.name(), c.detail());
                if (c.status() != Doctor.Status.PASS) {
                    out.printf("      %-17s fix: %s%n", "", c.fix());
                }
            }
            long warnings = checks.stream().filter(c -> c.status() == Doctor.Status.WARN).count();
            out.println(failed ? "Some checks failed; run the fixes above, then warpctl doctor again."
                    : warnings > 0 ? "No check failed; " + warnings + " warning(s) above, with their fixes."
                    : "All checks passed.");
            out.flush();
        }
        return failed ? 1 : 0;
    }

    /** {@code $WARP_CACHE_SIZE_GB} GB, else 100GB; a value that is not a number is a usage error. */
    private static long cacheSizeFromEnvironment(Map<String, String> env) {
        String gb = env.getOrDefault("WARP_CACHE_SIZE_GB", "100");
        try {
            return ByteSize.parse(gb.strip() + "GB");
        } catch (IllegalArgumentException e) {
            throw new UsageException("WARP_CACHE_SIZE_GB=" + gb + " is not a number of gigabytes",
                    "Set WARP_CACHE_SIZE_GB to a number such as 200, or pass --cache-size 200GB.");
        }
    }

    static String ldconfig() {
        for (String exe : List.of("/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig")) {
            try {
                Process p = new ProcessBuilder(exe, "-p").redirectErrorStream(true).start();
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0) {
                    return out;
                }
            } catch (IOException e) {
                continue;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new UncheckedIOException(new IOException("interrupted running ldconfig", e));
            }
        }
        return "";
    }

    /** What {@code warpctl doctor --json} prints: whether all passed, and each check. */
    record Report(boolean ok, List<Doctor.Check> checks) {
    }
}
