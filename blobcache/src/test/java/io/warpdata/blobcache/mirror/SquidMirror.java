package io.warpdata.blobcache.mirror;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Debian's Squid running the shipped configuration (systemd/mirror/squid/) with only its port,
 * paths, parent and BASE replaced (each exactly once), as documented for a private bucket: its
 * parent is the shipped nginx mirror, which signs. Started in the foreground ({@code -N}) and
 * stopped by its pid.
 */
final class SquidMirror implements AutoCloseable {
    static final Path SQUID = Path.of("/usr/sbin/squid");

    private final Process process;
    private final Path dir;
    private final int port;

    private SquidMirror(Process process, Path dir, int port) {
        this.process = process;
        this.dir = dir;
        this.port = port;
    }

    /** Starts Squid in a directory of its own (Squid drops to the user 'proxy', which must write there). */
    static SquidMirror start(int parentPort) throws IOException, InterruptedException {
        if (!Files.isExecutable(SQUID)) {
            throw new IllegalStateException("Debian's squid is needed: apt-get install squid (scripts/test installs it)");
        }
        Path dir = Files.createTempDirectory("warp-squid", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        Path spool = Files.createDirectories(dir.resolve("spool"));
        UserPrincipal proxy = dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("proxy");
        Files.setOwner(dir, proxy);
        Files.setOwner(spool, proxy);
        int port = freePort();

        String site = Files.readString(NginxMirror.repoRoot().resolve("systemd/mirror/squid/warp-mirror.conf"));
        site = replaceOnce(site, "http_port 3129 accel", "http_port 127.0.0.1:" + port + " accel");
        site = replaceOnce(site, "acl warp_port localport 3129", "acl warp_port localport " + port);
        site = replaceOnce(site, "cache_peer 127.0.0.1 parent 9000 0", "cache_peer 127.0.0.1 parent " + parentPort + " 0");
        // The signing nginx serves the store's keys under /warp (docs/fleet.md, private buckets).
        site = replaceOnce(site, "urlpath_regex ^/my-bucket/warp/", "urlpath_regex ^/warp/");
        site = replaceOnce(site, "cache_dir aufs /var/spool/squid-warp 500000 ", "cache_dir aufs " + spool + " 200 ");
        Files.writeString(dir.resolve("warp-mirror.conf"), site);
        // What Debian's squid.conf gives the shipped file, and a quick stop.
        Files.writeString(dir.resolve("squid.conf"), String.join("\n",
                "include " + dir.resolve("warp-mirror.conf"),
                "http_access deny all",
                "pid_filename " + dir.resolve("squid.pid"),
                "access_log stdio:" + dir.resolve("access.log"),
                "cache_log " + dir.resolve("cache.log"),
                "cache_store_log none",
                "coredump_dir " + dir,
                "shutdown_lifetime 1 seconds",
                ""));
        Process init = new ProcessBuilder(SQUID.toString(), "-N", "-z", "-f", dir.resolve("squid.conf").toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("squid-z.out").toFile()).start();
        if (!init.waitFor(60, TimeUnit.SECONDS) || init.exitValue() != 0) {
            init.destroyForcibly();
            throw new IllegalStateException("squid -z failed: " + Files.readString(dir.resolve("squid-z.out")));
        }
        Process p = new ProcessBuilder(SQUID.toString(), "-N", "-f", dir.resolve("squid.conf").toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("squid.out").toFile()).start();
        SquidMirror squid = new SquidMirror(p, dir, port);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            if (!p.isAlive()) {
                String out = Files.readString(dir.resolve("squid.out"));
                squid.close();
                throw new IllegalStateException("squid exited with " + p.exitValue() + ": " + out);
            }
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
                return squid;
            } catch (IOException notYet) {
                if (System.nanoTime() > deadline) {
                    squid.close();
                    throw new IllegalStateException("squid did not listen on " + port + " within 60 s");
                }
                Thread.sleep(50);
            }
        }
    }

    private static String replaceOnce(String text, String shipped, String replacement) {
        int at = text.indexOf(shipped);
        if (at < 0 || text.indexOf(shipped, at + 1) >= 0) {
            throw new IllegalStateException("the shipped Squid configuration no longer has '" + shipped
                    + "' exactly once; update SquidMirror's templating to match it");
        }
        return text.replace(shipped, replacement);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** {@code http://127.0.0.1:PORT/warp}. */
    URI base() {
        return URI.create("http://127.0.0.1:" + port + "/warp");
    }

    List<String> accessLog() throws IOException {
        Path log = dir.resolve("access.log");
        return Files.exists(log) ? Files.readAllLines(log) : List.of();
    }

    /** Squid's access log and the end of its cache.log, for a failing test's message. */
    String logs() throws IOException {
        Path cache = dir.resolve("cache.log");
        List<String> lines = Files.exists(cache) ? Files.readAllLines(cache) : List.of();
        return "Squid's access log:\n" + String.join("\n", accessLog()) + "\nSquid's cache.log (end):\n"
                + String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    }

    /** Stops Squid by its pid (SIGTERM), then removes its directory. */
    @Override
    public void close() {
        List<ProcessHandle> kids = process.descendants().toList();
        process.destroy();
        try {
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        kids.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException ignored) {
            // a temporary directory left behind is harmless
        }
    }
}
