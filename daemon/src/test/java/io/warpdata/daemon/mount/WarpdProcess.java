package io.warpdata.daemon.mount;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A warpd started from the shaded jar (target/warp.jar, built by `package` before failsafe
 * runs), as a user would start it. {@link #close()} always leaves no mount and no process
 * behind: SIGTERM, then SIGKILL, then fusermount -u / -u -z; it only ever signals its own pid.
 */
final class WarpdProcess implements AutoCloseable {
    static final Path JAR = Path.of("target/warp.jar").toAbsolutePath();

    private final Process process;
    private final Path mountPoint;
    private final StringBuffer output = new StringBuffer();
    private final CountDownLatch mounted = new CountDownLatch(1);

    private WarpdProcess(Process process, Path mountPoint) {
        this.process = process;
        this.mountPoint = mountPoint;
        Thread reader = new Thread(this::pump, "warpd-output-" + process.pid());
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts warpd and waits for its "mounted" line. */
    static WarpdProcess start(Path mountPoint, String remote, Path cacheDir, Map<String, String> env, String... extra) {
        return startWithHeap("512m", mountPoint, remote, cacheDir, env, extra);
    }

    /** As {@link #start}, with the heap given ({@code -Xmx}), e.g. warpd's default from scripts/lib/common.sh. */
    static WarpdProcess startWithHeap(String heap, Path mountPoint, String remote, Path cacheDir, Map<String, String> env,
                                      String... extra) {
        WarpdProcess w = launch(heap, mountPoint, remote, cacheDir, env, extra);
        try {
            if (!w.mounted.await(60, TimeUnit.SECONDS)) {
                w.close();
                throw new AssertionError("warpd did not mount within 60 s; output:\n" + w.output());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            w.close();
            throw new AssertionError("interrupted");
        }
        return w;
    }

    /** Starts warpd and returns at once, without waiting for its "mounted" line. */
    static WarpdProcess launch(String heap, Path mountPoint, String remote, Path cacheDir, Map<String, String> env,
                               String... extra) {
        if (!Files.isRegularFile(JAR)) {
            throw new IllegalStateException(JAR + " is missing: run the ITs with 'mvn verify' (package builds it)");
        }
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xmx" + heap,
                "-jar", JAR.toString(), "warpd",
                "--mount", mountPoint.toString(), "--remote", remote, "--cache-dir", cacheDir.toString(),
                // Never the shared default socket: other warpds may run on this machine.
                "--socket", cacheDir.resolve("warpd.sock").toString()));
        cmd.addAll(List.of(extra));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().putAll(env);
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new WarpdProcess(p, mountPoint);
    }

    /** Starts warpd expecting it to fail; returns its exit code and output. */
    static Shell.Result runToFailure(Path mountPoint, String remote, Path cacheDir, Map<String, String> env) {
        String java = ProcessHandle.current().info().command().orElse("java");
        return Shell.run(null, env, 60, List.of(java, "--enable-native-access=ALL-UNNAMED", "-jar", JAR.toString(), "warpd",
                "--mount", mountPoint.toString(), "--remote", remote, "--cache-dir", cacheDir.toString(),
                "--socket", cacheDir.resolve("warpd.sock").toString()));
    }

    private void pump() {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                output.append(line).append('\n');
                if (line.startsWith("warpd: mounted")) {
                    mounted.countDown();
                }
            }
        } catch (IOException e) {
            // process gone
        }
    }

    String output() {
        return output.toString();
    }

    long pid() {
        return process.pid();
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** SIGTERM; returns the exit code, or throws if it did not exit within the timeout. */
    int terminate(int timeoutSeconds) throws InterruptedException {
        process.destroy();
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            throw new AssertionError("warpd did not exit within " + timeoutSeconds + " s of SIGTERM; output:\n" + output());
        }
        return process.exitValue();
    }

    /** SIGKILL: leaves a stale mount behind, like a crash. */
    void kill9() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        try {
            if (process.isAlive()) {
                process.destroy();
                if (!process.waitFor(20, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    process.waitFor(10, TimeUnit.SECONDS);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            unmount(mountPoint);
        }
    }

    /**
     * What an IT's {@code @AfterAll} does: stops warpd (if started), unmounts, closes the servers
     * it started (nulls skipped; all of them, even after one failed to stop), and deletes the
     * work directory unless something is still mounted under it. Each step runs even if one
     * before it failed.
     */
    static void stopAll(WarpdProcess warpd, Path mount, Path work, AutoCloseable... servers) throws IOException {
        try {
            if (warpd != null) {
                warpd.close();
            }
        } finally {
            try {
                if (mount != null) {
                    unmount(mount);
                }
            } finally {
                IOException failed = null;
                for (AutoCloseable server : servers) {
                    if (server != null) {
                        try {
                            server.close();
                        } catch (Exception e) {
                            if (failed == null) {
                                failed = new IOException("could not stop " + server, e);
                            } else {
                                failed.addSuppressed(e);
                            }
                        }
                    }
                }
                if (work != null && (mount == null || !isMounted(mount))) {
                    try (java.util.stream.Stream<Path> all = Files.walk(work)) {
                        all.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                    }
                }
                if (failed != null) {
                    throw failed;
                }
            }
        }
    }

    /** warpctl from the shaded jar, talking to the warpd whose socket is {@code socket}. */
    static Shell.Result warpctl(Path socket, Map<String, String> env, String... args) {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>(List.of(java, "-jar", JAR.toString(), "warpctl"));
        cmd.addAll(List.of(args));
        cmd.addAll(List.of("--socket", socket.toString()));
        return Shell.run(null, env, 120, cmd);
    }

    /** Unmounts if anything is still mounted there: fusermount -u, then -u -z. */
    static void unmount(Path mountPoint) {
        if (!isMounted(mountPoint)) {
            return;
        }
        Shell.run("fusermount", "-u", mountPoint.toString());
        if (isMounted(mountPoint)) {
            Shell.run("fusermount", "-u", "-z", mountPoint.toString());
        }
    }

    static boolean isMounted(Path mountPoint) {
        try {
            String want = " " + mountPoint.toAbsolutePath().normalize() + " ";
            return Files.readAllLines(Path.of("/proc/self/mountinfo")).stream().anyMatch(l -> l.contains(want));
        } catch (IOException e) {
            return false;
        }
    }
}
