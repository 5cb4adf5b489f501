package io.warpdata.blobcache.mirror;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A small HTTP cache stand-in on loopback for unit tests: serves objects under {@code /BASE/} with
 * Range, records every request (method, URI, headers), and can be switched to answer a status,
 * a wrong range, or hang.
 */
public final class MirrorServer implements AutoCloseable {
    public enum Behaviour { SERVE, STATUS_500, STATUS_403, WRONG_RANGE, SHORT_BODY, IGNORE_RANGE, HANG, CHUNKED }

    /** One request as the server saw it. */
    public record Seen(String method, URI uri, Headers headers) {
    }

    private static final Pattern RANGE = Pattern.compile("bytes=(\\d+)-(\\d+)");

    private final HttpServer server;
    private final ExecutorService executor = Executors.newCachedThreadPool();
    public final Map<String, byte[]> objects = new ConcurrentHashMap<>();
    public final List<Seen> seen = new CopyOnWriteArrayList<>();
    public final AtomicReference<Behaviour> behaviour = new AtomicReference<>(Behaviour.SERVE);
    private final CountDownLatch release = new CountDownLatch(1);

    public MirrorServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(executor);
        server.createContext("/", this::handle);
        server.start();
    }

    public URI base() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/warp");
    }

    private void handle(HttpExchange x) throws IOException {
        seen.add(new Seen(x.getRequestMethod(), x.getRequestURI(), x.getRequestHeaders()));
        try (x) {
            Behaviour b = behaviour.get();
            switch (b) {
                case HANG -> {
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    x.sendResponseHeaders(503, -1);
                    return;
                }
                case STATUS_500 -> {
                    x.sendResponseHeaders(500, -1);
                    return;
                }
                case STATUS_403 -> {
                    x.sendResponseHeaders(403, -1);
                    return;
                }
                default -> {
                }
            }
            String path = x.getRequestURI().getPath();
            byte[] data = path.startsWith("/warp/") ? objects.get(path.substring("/warp/".length())) : null;
            if (data == null) {
                x.sendResponseHeaders(404, -1);
                return;
            }
            String range = x.getRequestHeaders().getFirst("Range");
            Matcher m = range == null ? null : RANGE.matcher(range);
            if (m == null || !m.matches() || b == Behaviour.IGNORE_RANGE) {
                send(x, 200, data);
                return;
            }
            long first = Long.parseLong(m.group(1));
            long last = Math.min(Long.parseLong(m.group(2)), data.length - 1);
            long shownFirst = b == Behaviour.WRONG_RANGE ? first + 1 : first;
            x.getResponseHeaders().set("Content-Range", "bytes " + shownFirst + "-" + last + "/" + data.length);
            byte[] body = java.util.Arrays.copyOfRange(data, (int) first, (int) last + 1);
            if (b == Behaviour.SHORT_BODY) {
                body = java.util.Arrays.copyOf(body, body.length - 1);
            }
            if (b == Behaviour.CHUNKED) {
                x.sendResponseHeaders(206, 0); // no Content-Length: Transfer-Encoding: chunked
                try (OutputStream out = x.getResponseBody()) {
                    out.write(body);
                }
                return;
            }
            send(x, 206, body);
        }
    }

    private static void send(HttpExchange x, int status, byte[] body) throws IOException {
        x.sendResponseHeaders(status, body.length);
        try (OutputStream out = x.getResponseBody()) {
            out.write(body);
        }
    }

    @Override
    public void close() {
        release.countDown();
        server.stop(0);
        executor.shutdownNow();
    }
}
