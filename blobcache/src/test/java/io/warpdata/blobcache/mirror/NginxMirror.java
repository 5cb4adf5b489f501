package io.warpdata.blobcache.mirror;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Debian's nginx running the shipped mirror configuration (systemd/mirror/nginx/) as it is, with
 * only its port, paths and the store's address, bucket path and credentials replaced; every
 * replaced text must occur exactly once, so a change to the shipped files that the test no longer
 * matches fails here instead of testing something else. Started in the foreground
 * ({@code daemon off}) and stopped by its pid in {@link #close()}.
 */
public final class NginxMirror implements AutoCloseable {
    static final Path NGINX = Path.of("/usr/sbin/nginx");
    static final Path JS_MODULE = Path.of("/usr/lib/nginx/modules/ngx_http_js_module.so");

    private final Process process;
    private final Path dir;
    private final int port;

    private NginxMirror(Process process, Path dir, int port) {
        this.process = process;
        this.dir = dir;
        this.port = port;
    }

    /**
     * @param storePort the S3 server's port on 127.0.0.1
     * @param bucketPath {@code /bucket/prefix} as store.conf names it
     */
    public static NginxMirror start(Path dir, int storePort, String bucketPath, String accessKey, String secretKey)
            throws IOException, InterruptedException {
        if (!Files.isExecutable(NGINX) || !Files.isRegularFile(JS_MODULE)) {
            throw new IllegalStateException("Debian's nginx and its njs module are needed: apt-get install nginx libnginx-mod-http-js"
                    + " (scripts/test installs them)");
        }
        Path shipped = repoRoot().resolve("systemd/mirror/nginx");
        Path conf = Files.createDirectories(dir.resolve("conf"));
        Path cache = Files.createDirectories(dir.resolve("cache"));
        int port = freePort();

        Files.copy(shipped.resolve("warp-s3-sign.js"), conf.resolve("warp-s3-sign.js"));
        String store = Files.readString(shipped.resolve("store.conf"));
        store = replaceOnce(store, "set $warp_store_host \"127.0.0.1:9000\";", "set $warp_store_host \"127.0.0.1:" + storePort + "\";");
        store = replaceOnce(store, "set $warp_bucket_path \"/my-bucket/warp\";", "set $warp_bucket_path \"" + bucketPath + "\";");
        store = replaceOnce(store, "set $warp_s3_access_key \"\";", "set $warp_s3_access_key \"" + accessKey + "\";");
        store = replaceOnce(store, "set $warp_s3_secret_key \"\";", "set $warp_s3_secret_key \"" + secretKey + "\";");
        Files.writeString(conf.resolve("store.conf"), store);

        String site = Files.readString(shipped.resolve("warp-mirror.conf"));
        site = replaceOnce(site, "server 127.0.0.1:9000;", "server 127.0.0.1:" + storePort + ";");
        site = replaceOnce(site, "proxy_cache_path /var/cache/nginx/warp-mirror ", "proxy_cache_path " + cache + " ");
        site = replaceOnce(site, "js_path /etc/nginx/warp-mirror/;", "js_path " + conf + "/;");
        site = replaceOnce(site, "include /etc/nginx/warp-mirror/store.conf;", "include " + conf.resolve("store.conf") + ";");
        site = replaceOnce(site, "access_log /var/log/nginx/warp-mirror.access.log ", "access_log " + dir.resolve("access.log") + " ");
        site = replaceOnce(site, "listen 8080;", "listen 127.0.0.1:" + port + ";");
        Files.writeString(conf.resolve("warp-mirror.conf"), site);

        // What Debian's /etc/nginx/nginx.conf and modules-enabled/ give the shipped file.
        Files.writeString(conf.resolve("nginx.conf"), String.join("\n",
                "load_module " + JS_MODULE + ";",
                "user root;",
                "worker_processes 2;",
                "daemon off;",
                "pid " + dir.resolve("nginx.pid") + ";",
                "error_log " + dir.resolve("error.log") + " info;",
                "events { worker_connections 256; }",
                "http {",
                "  default_type application/octet-stream;",
                "  access_log off;",
                "  client_body_temp_path " + dir.resolve("tmp-body") + ";",
                "  proxy_temp_path " + dir.resolve("tmp-proxy") + ";",
                "  fastcgi_temp_path " + dir.resolve("tmp-fastcgi") + ";",
                "  uwsgi_temp_path " + dir.resolve("tmp-uwsgi") + ";",
                "  scgi_temp_path " + dir.resolve("tmp-scgi") + ";",
                "  include " + conf.resolve("warp-mirror.conf") + ";",
                "}", ""));

        Process p = new ProcessBuilder(List.of(NGINX.toString(), "-e", dir.resolve("error.log").toString(), "-p", dir.toString(),
                "-c", conf.resolve("nginx.conf").toString()))
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("nginx.out").toFile())
                .start();
        NginxMirror nginx = new NginxMirror(p, dir, port);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            if (!p.isAlive()) {
                throw new IllegalStateException("nginx exited with " + p.exitValue() + ": " + Files.readString(dir.resolve("nginx.out"))
                        + nginx.errorLog());
            }
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
                return nginx;
            } catch (IOException notYet) {
                if (System.nanoTime() > deadline) {
                    nginx.close();
                    throw new IllegalStateException("nginx did not listen on " + port + " within 30 s: " + nginx.errorLog());
                }
                Thread.sleep(20);
            }
        }
    }

    private static String replaceOnce(String text, String shipped, String replacement) {
        int at = text.indexOf(shipped);
        if (at < 0 || text.indexOf(shipped, at + 1) >= 0) {
            throw new IllegalStateException("the shipped nginx configuration no longer has '" + shipped
                    + "' exactly once; update NginxMirror's templating to match it");
        }
        return text.replace(shipped, replacement);
    }

    static Path repoRoot() {
        Path root = Path.of(System.getProperty("user.dir")).toAbsolutePath().getParent();
        if (!Files.isRegularFile(root.resolve("systemd/mirror/nginx/warp-mirror.conf"))) {
            throw new IllegalStateException("tests must run from the blobcache module of a Warp checkout, not " + root);
        }
        return root;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** {@code http://127.0.0.1:PORT/warp}: what {@code warpd --mirror} is given. */
    public URI base() {
        return URI.create("http://127.0.0.1:" + port + "/warp");
    }

    public List<String> accessLog() throws IOException {
        Path log = dir.resolve("access.log");
        return Files.exists(log) ? Files.readAllLines(log) : List.of();
    }

    public String errorLog() {
        try {
            return Files.readString(dir.resolve("error.log"));
        } catch (IOException e) {
            return "(no error log: " + e + ")";
        }
    }

    /** Stops nginx by its pid (SIGTERM: fast shutdown), then any worker left, by its pid. */
    @Override
    public void close() {
        List<ProcessHandle> workers = process.descendants().toList();
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        // Workers leave with their master; any that did not (a master killed hard) go by pid.
        workers.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
    }
}
