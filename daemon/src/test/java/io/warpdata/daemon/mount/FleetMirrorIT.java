package io.warpdata.daemon.mount;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warpdata.blobcache.mirror.NginxMirror;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;
import io.warpdata.store.BlobStore;
import io.warpdata.store.S3ProxyFixture;
import io.warpdata.store.StoreLayout;
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
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
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
 *       succeeds from the store, the failure counted.
 * </ol>
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FleetMirrorIT {
    private static final DatasetId DATASET = new DatasetId("fleet", "data");
    private static final String PREFIX = "it-fleet";
    private static final ObjectMapper JSON = new ObjectMapper();

    private static Path work;
    private static Path src;
    private static S3ProxyFixture s3;
    private static NginxMirror nginx;
    private static Path nginxDir;
    private static VersionHash version;
    private static Map<String, String> expected;
    private static long datasetBytes;

    @BeforeAll
    static void publishAndStartTheMirror() throws Exception {
        s3 = S3ProxyFixture.start();
        work = Files.createTempDirectory("warp-fleet-it");
        src = Files.createDirectories(work.resolve("src"));
        SampleData.writeParquet(src, 2_000, 7);
        // Incompressible files: many small ones in shards (members), and one large one.
        Random random = new Random(25);
        for (int i = 0; i < 30; i++) {
            byte[] b = new byte[40_000 + random.nextInt(40_000)];
            random.nextBytes(b);
            Path f = src.resolve("images").resolve("c" + (i % 3)).resolve("f" + i + ".bin");
            Files.createDirectories(f.getParent());
            Files.write(f, b);
        }
        byte[] large = new byte[3 * (1 << 20) + 12_345];
        random.nextBytes(large);
        Files.write(src.resolve("images").resolve("large.bin"), large);
        try (BlobStore store = s3.openStore(PREFIX)) {
            version = SampleData.publish(store, work, DATASET, src, true);
            expected = new TreeMap<>();
            SampleData.hashes(src.resolve("main")).forEach((p, h) -> expected.put("main/" + p, h));
            SampleData.hashes(src.resolve("images")).forEach((p, h) -> expected.put("images/" + p, h));
            expected.put(".warp/manifest.json", SampleData.sha256(store.get(StoreLayout.version(DATASET, version))));
        }
        try (Stream<Path> files = Files.walk(src)) {
            datasetBytes = files.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
        }
        nginxDir = Files.createDirectories(work.resolve("nginx"));
        nginx = NginxMirror.start(nginxDir, s3.port(), "/" + S3ProxyFixture.BUCKET + "/" + PREFIX,
                S3ProxyFixture.ACCESS_KEY, S3ProxyFixture.SECRET_KEY);
    }

    @AfterAll
    static void stop() throws IOException {
        WarpdProcess.stopAll(null, null, work, nginx, s3);
    }

    /** A node: its own warpd, cache, mount and socket, reading through {@code mirrorArgs}. */
    private record Node(WarpdProcess warpd, Path mount, Path cache) implements AutoCloseable {
        static Node start(String name, String... mirrorArgs) throws IOException {
            Path mount = Files.createDirectories(work.resolve(name).resolve("mnt"));
            Path cache = work.resolve(name).resolve("cache");
            return new Node(WarpdProcess.start(mount, s3.remote(PREFIX), cache, s3.env(), mirrorArgs), mount, cache);
        }

        /** SHA-256 of every file of the version, read through the mount. */
        Map<String, String> readAll() {
            Path dir = mount.resolve(DATASET.workspace()).resolve(DATASET.name() + "@" + version.hex());
            Shell.Result r = Shell.run(dir, Map.of(), 300,
                    List.of("bash", "-c", "find . -type f -print0 | sort -z | xargs -0 sha256sum")).requireSuccess();
            Map<String, String> mounted = new TreeMap<>();
            for (String line : r.out().split("\n")) {
                if (!line.isBlank()) {
                    mounted.put(line.substring(66).replaceFirst("^\\./", ""), line.substring(0, 64));
                }
            }
            return mounted;
        }

        /** The node's one mirror as {@code warpctl cache stats --json} shows it. */
        JsonNode mirrorStats() throws IOException {
            JsonNode stats = JSON.readTree(WarpdProcess.warpctl(cache.resolve("warpd.sock"), s3.env(), "cache", "stats", "--json")
                    .requireSuccess().out());
            assertThat(stats.path("mirrors")).hasSize(1);
            return stats.path("mirrors").get(0);
        }

        String status() {
            return WarpdProcess.warpctl(cache.resolve("warpd.sock"), s3.env(), "status").requireSuccess().out();
        }

        long warnings(String mirror) {
            return warpd.output().lines().filter(l -> l.contains("mirror " + mirror + " skipped for")).count();
        }

        @Override
        public void close() {
            warpd.close();
        }
    }

    @Test
    @Order(1)
    void twoNodesThroughTheMirrorCostTheStoreAboutOneDataset() throws IOException {
        s3.resetCounters();
        String mirror = nginx.base().toString();
        try (Node node1 = Node.start("node1", "--mirror", mirror)) {
            assertThat(node1.readAll()).isEqualTo(expected);
            JsonNode m = node1.mirrorStats();
            assertThat(m.path("mirror").asText()).isEqualTo(mirror);
            assertThat(m.path("served_bytes").asLong()).as("node 1's blocks came through the mirror").isPositive();
            assertThat(m.path("errors").asLong()).isZero();
            assertThat(m.path("verification_failures").asLong()).isZero();
        }
        long afterOne = s3.counters().bytesServed();
        try (Node node2 = Node.start("node2", "--mirror", mirror)) {
            assertThat(node2.readAll()).isEqualTo(expected);
            JsonNode m = node2.mirrorStats();
            assertThat(m.path("served_bytes").asLong()).isPositive();
            assertThat(m.path("hit_rate").asDouble()).isEqualTo(1.0);
            assertThat(node2.status()).contains("mirror:     " + mirror + " up");
            String metrics = WarpdProcess.warpctl(node2.cache.resolve("warpd.sock"), s3.env(), "metrics").requireSuccess().out();
            assertThat(metrics).contains("warp_mirror_served_bytes_total{mirror=\"" + mirror + "\"}");
        }
        long served = s3.counters().bytesServed();
        System.out.printf("fleet mirror: dataset %d bytes; store served %d after node 1, %d after node 2 (%.3fx)%n",
                datasetBytes, afterOne, served, (double) served / datasetBytes);
        assertThat((double) served).as("store bytes for two nodes over the dataset's bytes").isLessThanOrEqualTo(1.15 * datasetBytes);
        assertThat(nginx.accessLog()).isNotEmpty().allSatisfy(l -> assertThat(l).contains("client_auth=none"));
    }

    @Test
    @Order(2)
    void aCorruptedMirrorServesNoWrongByteAndIsCounted() throws IOException {
        int corrupted = 0;
        try (Stream<Path> files = Files.walk(nginxDir.resolve("cache"))) {
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
        String mirror = nginx.base().toString();
        try (Node node3 = Node.start("node3", "--mirror", mirror)) {
            assertThat(node3.readAll()).isEqualTo(expected);
            JsonNode m = node3.mirrorStats();
            assertThat(m.path("verification_failures").asLong()).isPositive();
            assertThat(m.path("served_bytes").asLong()).isZero();
            assertThat(node3.status()).contains(mirror).containsPattern("[1-9][0-9]* verification failure");
            assertThat(node3.warnings(mirror)).as("logged when it goes, not per read").isBetween(1L, 3L);
        }
    }

    @Test
    @Order(3)
    void aStoppedMirrorLeavesEveryReadToTheStore() throws IOException {
        String mirror = nginx.base().toString();
        nginx.close();
        try (Node node4 = Node.start("node4", "--mirror", mirror)) {
            assertThat(node4.readAll()).isEqualTo(expected);
            JsonNode m = node4.mirrorStats();
            assertThat(m.path("errors").asLong()).isPositive();
            assertThat(m.path("state").asText()).isEqualTo("down");
            assertThat(node4.warnings(mirror)).isBetween(1L, 3L);
        }
    }

    @Test
    @Order(4)
    void aHangingMirrorLeavesEveryReadToTheStore() throws Exception {
        List<Socket> held = new CopyOnWriteArrayList<>();
        try (ServerSocket hanging = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread acceptor = Thread.ofVirtual().start(() -> {
                while (!hanging.isClosed()) {
                    try {
                        held.add(hanging.accept()); // and never answer
                    } catch (IOException closed) {
                        return;
                    }
                }
            });
            String mirror = "http://127.0.0.1:" + hanging.getLocalPort() + "/warp";
            try (Node node5 = Node.start("node5", "--mirror", mirror, "--mirror-timeout", "500ms")) {
                assertThat(node5.readAll()).isEqualTo(expected);
                JsonNode m = node5.mirrorStats();
                assertThat(m.path("timeouts").asLong()).isPositive();
                assertThat(m.path("errors").asLong()).isGreaterThanOrEqualTo(m.path("timeouts").asLong());
                assertThat(m.path("served_bytes").asLong()).isZero();
            } finally {
                hanging.close();
                acceptor.join();
                for (Socket s : held) {
                    s.close();
                }
            }
        }
    }
}
