package io.warpdata.daemon.mount;

import io.warpdata.store.S3ProxyFixture;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real S3Proxy in a process of its own (this test JVM's classpath, {@link S3ProxyFixture} on
 * disk), so that a test can stop it with SIGSTOP as a hung server, blackholed network or dead NAT
 * behaves: the kernel still accepts connections, and nothing ever answers. {@link #close()}
 * continues and kills it, by its own pid only.
 */
final class S3ProxyProcess implements AutoCloseable {
    private final Process process;
    private final int port;

    private S3ProxyProcess(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    /** Starts the server on {@code dataDir} and waits for its port. */
    static S3ProxyProcess start(Path dataDir) {
        String java = ProcessHandle.current().info().command().orElse("java");
        ProcessBuilder pb = new ProcessBuilder(List.of(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                S3ProxyProcess.class.getName(), dataDir.toString())).redirectErrorStream(true);
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        StringBuilder seen = new StringBuilder();
        try {
            String line;
            while ((line = out.readLine()) != null) {
                if (line.startsWith("port ")) {
                    int port = Integer.parseInt(line.substring(5).trim());
                    Thread drain = new Thread(() -> drain(out), "s3proxy-output-" + p.pid());
                    drain.setDaemon(true);
                    drain.start();
                    return new S3ProxyProcess(p, port);
                }
                seen.append(line).append('\n');
            }
        } catch (IOException | RuntimeException e) {
            p.destroyForcibly();
            throw new IllegalStateException("S3Proxy process failed to start: " + e + "\n" + seen, e);
        }
        p.destroyForcibly();
        throw new IllegalStateException("S3Proxy process exited before serving:\n" + seen);
    }

    private static void drain(BufferedReader out) {
        try {
            while (out.readLine() != null) {
                // S3Proxy's own log: not needed, but the pipe must not fill.
            }
        } catch (IOException gone) {
            // process ended
        }
    }

    /** The child: serves until killed. */
    public static void main(String[] args) throws InterruptedException {
        S3ProxyFixture s3 = S3ProxyFixture.start(Path.of(args[0]));
        System.out.println("port " + s3.port());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }

    String endpoint() {
        return "http://127.0.0.1:" + port;
    }

    /** What warpd and warpctl need to reach it (credentials, region, endpoint). */
    Map<String, String> env() {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("AWS_ACCESS_KEY_ID", S3ProxyFixture.ACCESS_KEY);
        env.put("AWS_SECRET_ACCESS_KEY", S3ProxyFixture.SECRET_KEY);
        env.put("AWS_REGION", S3ProxyFixture.REGION);
        env.put("WARP_S3_ENDPOINT", endpoint());
        return env;
    }

    /** SIGSTOP: the server keeps its socket (connections are still accepted) and answers nothing. */
    void stop() {
        signal("STOP");
    }

    /** SIGCONT: it answers again. */
    void resume() {
        signal("CONT");
    }

    private void signal(String name) {
        Shell.run("kill", "-" + name, Long.toString(process.pid())).requireSuccess();
    }

    @Override
    public void close() {
        if (!process.isAlive()) {
            return;
        }
        Shell.run("kill", "-CONT", Long.toString(process.pid()));
        process.destroyForcibly();
        try {
            process.waitFor(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
