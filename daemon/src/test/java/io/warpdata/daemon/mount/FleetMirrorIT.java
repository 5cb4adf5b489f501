package io.warpdata.daemon.mount;

import com.fasterxml.jackson.databind.JsonNode;
import io.warpdata.daemon.publish.PublishRequest;
import io.warpdata.manifest.DatasetId;
import io.warpdata.store.S3ProxyFixture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fleets (issue 25) end to end: real warpd mounts (the shaded jar) reading through the shipped
 * nginx mirror configuration, run as shipped by Debian's nginx in front of a real S3Proxy store.
 * Each node is its own warpd with its own cache directory, mount and socket.
 * <ol>
 *   <li>node 1 reads the dataset through the mirror, node 2 reads it too: the store served at most
 *       1.15x the dataset's bytes in all, and no Authorization header reached the mirror;
 *   <li>the mirror's cache files corrupted on disk: node 3 reads every file byte-identical to its
 *       source, the verification failures counted in {@code cache stats} and {@code status};
 *   <li>the mirror stopped (node 4) or hanging (node 5, a socket that never answers): every read
 *       succeeds from the store, the failure counted;
 *   <li>a mirror that answers at once and then drips its bodies (node 6, a byte every 100 ms, never
 *       silent for a timeout): every read succeeds from the store within seconds, not at the
 *       60 s ceiling of one answer, which left the store no time and failed reads with EIO;
 *   <li>a mirror serving a version manifest whose {@code metadata} (not covered by the version
 *       hash) was changed (node 7): never asked for it; the mount shows the store's manifest.
 * </ol>
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FleetMirrorIT {
    private static FleetWorld world;
    private static String mirror;

    @BeforeAll
    static void publishAndStartTheMirror() throws Exception {
        world = FleetWorld.start("it-fleet", new DatasetId("fleet", "data"), 30, 3, 3 * (1 << 20) + 12_345,
                PublishRequest.DEFAULT_SHARD_SIZE, 25);
        mirror = world.mirror();
    }

    @AfterAll
    static void stop() throws IOException {
        if (world != null) {
            world.close();
        }
    }

    @Test
    @Order(1)
    void twoNodesThroughTheMirrorCostTheStoreAboutOneDataset() throws IOException {
        S3ProxyFixture s3 = world.s3;
        long datasetBytes = world.datasetBytes();
        s3.resetCounters();
        try (FleetWorld.Node node1 = world.node("node1", "--mirror", mirror)) {
            assertThat(node1.readAll()).isEqualTo(world.expected());
            JsonNode m = node1.mirrorStats();
            assertThat(m.path("mirror").asText()).isEqualTo(mirror);
            assertThat(m.path("served_bytes").asLong()).as("node 1's blocks came through the mirror").isPositive();
            assertThat(m.path("errors").asLong()).isZero();
            assertThat(m.path("verification_failures").asLong()).isZero();
        }
        long afterOne = s3.counters().bytesServed();
        try (FleetWorld.Node node2 = world.node("node2", "--mirror", mirror)) {
            assertThat(node2.readAll()).isEqualTo(world.expected());
            JsonNode m = node2.mirrorStats();
            assertThat(m.path("served_bytes").asLong()).isPositive();
            assertThat(m.path("hit_rate").asDouble()).isEqualTo(1.0);
            assertThat(node2.status()).contains("mirror:     " + mirror + " up");
            String metrics = node2.warpctl("metrics").out();
            assertThat(metrics).contains("warp_mirror_served_bytes_total{mirror=\"" + mirror + "\"}");
        }
        long served = s3.counters().bytesServed();
        System.out.printf("fleet mirror: dataset %d bytes; store served %d after node 1, %d after node 2 (%.3fx)%n",
                datasetBytes, afterOne, served, (double) served / datasetBytes);
        assertThat((double) served).as("store bytes for two nodes over the dataset's bytes").isLessThanOrEqualTo(1.15 * datasetBytes);
        assertThat(world.nginx().accessLog()).isNotEmpty().allSatisfy(l -> assertThat(l).contains("client_auth=none"));
    }

    @Test
    @Order(2)
    void aCorruptedMirrorServesNoWrongByteAndIsCounted() throws IOException {
        int corrupted = 0;
        try (Stream<Path> files = Files.walk(world.nginxDir.resolve("cache"))) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                // A cache file ends with the response body: flip its last byte.
                try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
                    raf.seek(raf.length() - 1);
                    int b = raf.read();
                    raf.seek(raf.length() - 1);
                    raf.write(b ^ 0x5A);
                }
                corrupted++;
            }
        }
        assertThat(corrupted).as("nginx cached slices").isPositive();
        try (FleetWorld.Node node3 = world.node("node3", "--mirror", mirror)) {
            assertThat(node3.readAll()).isEqualTo(world.expected());
            JsonNode m = node3.mirrorStats();
            assertThat(m.path("verification_failures").asLong()).isPositive();
            assertThat(m.path("served_bytes").asLong()).isZero();
            assertThat(node3.status()).contains(mirror).containsPattern("[1-9][0-9]* verification failure");
            // doctor says so too (it said "All checks passed" with a poisoned or dead mirror).
            assertThat(node3.warpctl("doctor").out()).containsPattern("WARN +mirror " + java.util.regex.Pattern.quote(mirror)
                    + ".*[1-9][0-9]* verification failures");
            assertThat(node3.warnings(mirror)).as("logged when it goes, not per read").isBetween(1L, 3L);
        }
    }

    @Test
    @Order(3)
    void aStoppedMirrorLeavesEveryReadToTheStore() throws IOException {
        world.nginx().close();
        try (FleetWorld.Node node4 = world.node("node4", "--mirror", mirror)) {
            assertThat(node4.readAll()).isEqualTo(world.expected());
            JsonNode m = node4.mirrorStats();
            assertThat(m.path("errors").asLong()).isPositive();
            assertThat(m.path("state").asText()).isEqualTo("down");
            assertThat(node4.warnings(mirror)).isBetween(1L, 3L);
        }
    }

    @Test
    @Order(4)
    void aHangingMirrorLeavesEveryReadToTheStore() throws Exception {
        try (SilentMirror hanging = new SilentMirror(s -> {})) { // connections taken, never answered
            try (FleetWorld.Node node5 = world.node("node5", "--mirror", hanging.url(), "--mirror-timeout", "500ms")) {
                assertThat(node5.readAll()).isEqualTo(world.expected());
                JsonNode m = node5.mirrorStats();
                assertThat(m.path("timeouts").asLong()).isPositive();
                assertThat(m.path("errors").asLong()).isGreaterThanOrEqualTo(m.path("timeouts").asLong());
                assertThat(m.path("served_bytes").asLong()).isZero();
            }
        }
    }

    @Test
    @Order(5)
    void aMirrorThatDripsLeavesEveryReadToTheStoreInTime() throws Exception {
        try (SilentMirror dripping = new SilentMirror(s -> Thread.ofVirtual().start(() -> drip(s)))) {
            String drippingMirror = dripping.url();
            try (FleetWorld.Node node6 = world.node("node6", "--mirror", drippingMirror, "--mirror-timeout", "1s")) {
                long start = System.nanoTime();
                assertThat(node6.readAll()).isEqualTo(world.expected());
                long seconds = (System.nanoTime() - start) / 1_000_000_000L;
                // Each answer is given up 5 s after it was asked (the grace), then the store serves it.
                assertThat(seconds).as("seconds to read through a dripping mirror").isLessThan(45);
                JsonNode m = node6.mirrorStats();
                assertThat(m.path("timeouts").asLong()).isPositive();
                assertThat(m.path("served_bytes").asLong()).isZero();
                assertThat(node6.warnings(drippingMirror)).isPositive();
            }
        }
    }

    @Test
    @Order(6)
    void aMirrorThatChangesAManifestsMetadataIsNeverAskedForIt() throws Exception {
        String key = io.warpdata.store.StoreLayout.version(world.dataset, world.version());
        byte[] real;
        try (var store = world.s3.openStore(world.prefix)) {
            real = store.get(key);
        }
        // The version hash leaves metadata out: this copy passes the hash check, yet claims
        // another creation time (every mtime of the version) and creator.
        var tampered = (com.fasterxml.jackson.databind.node.ObjectNode) new com.fasterxml.jackson.databind.ObjectMapper().readTree(real);
        tampered.putObject("metadata").put("created_at", "1999-01-01T00:00:00Z").put("creator", "mallory");
        byte[] served = tampered.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        List<String> asked = new CopyOnWriteArrayList<>();
        var server = com.sun.net.httpserver.HttpServer.create(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/warp/", exchange -> {
            String path = exchange.getRequestURI().getPath().substring("/warp/".length());
            asked.add(path);
            if (path.equals(key)) {
                exchange.sendResponseHeaders(200, served.length);
                exchange.getResponseBody().write(served);
            } else {
                exchange.sendResponseHeaders(404, -1);
            }
            exchange.close();
        });
        server.start();
        try (FleetWorld.Node node7 = world.node("node7", "--mirror", "http://127.0.0.1:" + server.getAddress().getPort() + "/warp")) {
            assertThat(node7.readAll()).as("the manifest as stored, byte for byte").isEqualTo(world.expected());
            Path versionDir = node7.versionDir();
            assertThat(Files.getLastModifiedTime(versionDir.resolve(".warp/manifest.json")).toInstant().getEpochSecond())
                    .as("mtime from the store's metadata, not the mirror's 1999").isGreaterThan(946_684_800L);
            assertThat(asked).as("requests to the mirror").isNotEmpty().doesNotContain(key);
        } finally {
            server.stop(0);
        }
    }

    /**
     * A mirror on loopback that accepts every connection and hands it to {@code onAccept}, which
     * may answer badly or not at all; closing it closes the listener and every connection.
     */
    private static final class SilentMirror implements AutoCloseable {
        private final ServerSocket listener;
        private final List<Socket> held = new CopyOnWriteArrayList<>();
        private final Thread acceptor;

        SilentMirror(java.util.function.Consumer<Socket> onAccept) throws IOException {
            listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            acceptor = Thread.ofVirtual().start(() -> {
                while (!listener.isClosed()) {
                    try {
                        Socket s = listener.accept();
                        held.add(s);
                        onAccept.accept(s);
                    } catch (IOException closed) {
                        return;
                    }
                }
            });
        }

        String url() {
            return "http://127.0.0.1:" + listener.getLocalPort() + "/warp";
        }

        @Override
        public void close() throws Exception {
            listener.close();
            acceptor.join();
            for (Socket s : held) {
                s.close();
            }
        }
    }

    /**
     * Answers every request on the connection at once with a 206 of the asked range, then sends
     * its body a byte every 100 ms (zeros: it never finishes anyway) until the reader gives up.
     */
    private static void drip(Socket s) {
        try (s) {
            var in = new java.io.BufferedReader(new java.io.InputStreamReader(s.getInputStream(),
                    java.nio.charset.StandardCharsets.US_ASCII));
            long first = 0;
            long last = 0;
            for (String line; (line = in.readLine()) != null && !line.isEmpty(); ) {
                var m = java.util.regex.Pattern.compile("(?i)range: bytes=(\\d+)-(\\d+)").matcher(line);
                if (m.matches()) {
                    first = Long.parseLong(m.group(1));
                    last = Long.parseLong(m.group(2));
                }
            }
            var out = s.getOutputStream();
            out.write(("HTTP/1.1 206 Partial Content\r\nContent-Length: " + (last - first + 1) + "\r\nContent-Range: bytes "
                    + first + "-" + last + "/*\r\n\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            out.flush();
            for (long i = first; i <= last; i++) {
                out.write(0);
                out.flush();
                Thread.sleep(100);
            }
        } catch (IOException | InterruptedException gone) {
            // The reader gave up on this answer (or the test ended): the point of the exercise.
        }
    }
}
