package io.warpdata.daemon.mount;

import com.fasterxml.jackson.databind.JsonNode;
import io.warpdata.daemon.publish.PublishRequest;
import io.warpdata.daemon.publish.StagedIndex;
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
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 25, item 5's first test: a fleet reading at once. Four real warpd nodes (each its own
 * cache directory, mount and socket) read the same dataset (files in class folders packed into
 * several tar shards, plus one large file) at the same moment, each everything in folder order,
 * through the shipped nginx mirror (run as shipped) in front of a real S3Proxy store:
 * <ol>
 *   <li>every file is byte-identical on every node, the store served at most 1.15x the dataset's
 *       bytes for all four (counted at the store: every GET's bytes, data blobs, hash lists and
 *       manifests together), and no Authorization header reached nginx (its access log). The
 *       nodes use the default {@code --mirror-timeout}: it bounds a mirror's silence, not its whole
 *       answer, so nodes waiting on nginx's {@code proxy_cache_lock} while another node's miss
 *       fetches the slices are not sent to the store;
 *   <li>a dataset whose member index is published in parts (more than
 *       {@link StagedIndex#PART_MEMBERS} members), read by a fresh node through the mirror: its
 *       listing and every file right, and the index's top and parts (the blobs the node kept)
 *       were asked of nginx, which answered them, with no mirror error on the node.
 * </ol>
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FleetAtOnceIT {
    private static final int NODES = 4;
    /** Enough members for an index in parts: top + 2 parts. */
    private static final int PARTED_CLASSES = 17;
    private static final int PARTED_PER_CLASS = 1000;
    private static final DatasetId PARTED = new DatasetId("fleet", "parted");

    private static FleetWorld world;

    @BeforeAll
    static void publishAndStartTheMirror() throws Exception {
        // About 4.5 MB of files in 4 class folders in shards of about 1 MiB, and a 5 MiB file.
        world = FleetWorld.start("it-atonce", new DatasetId("fleet", "atonce"), 60, 4, 5 * (1 << 20) + 4_321, 1 << 20, 2025);
    }

    @AfterAll
    static void stop() throws IOException {
        if (world != null) {
            world.close();
        }
    }

    @Test
    @Order(1)
    void fourNodesReadingAtOnceCostTheStoreAboutOneDataset() throws Exception {
        S3ProxyFixture s3 = world.s3;
        String mirror = world.mirror();
        s3.resetCounters();
        List<FleetWorld.Node> nodes = new ArrayList<>();
        ExecutorService readers = Executors.newFixedThreadPool(NODES);
        try {
            for (int i = 1; i <= NODES; i++) {
                nodes.add(world.node("node" + i, "--mirror", mirror));
            }
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Map<String, String>>> reads = new ArrayList<>();
            for (FleetWorld.Node node : nodes) {
                reads.add(readers.submit(() -> {
                    go.await();
                    return node.readAll();
                }));
            }
            long start = System.nanoTime();
            go.countDown();
            for (int i = 0; i < NODES; i++) {
                assertThat(reads.get(i).get(300, TimeUnit.SECONDS)).as("node %d's files", i + 1).isEqualTo(world.expected());
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            long served = s3.counters().bytesServed();
            StringBuilder perNode = new StringBuilder();
            for (FleetWorld.Node node : nodes) {
                JsonNode m = node.mirrorStats();
                perNode.append(String.format(" [served %d B, hit rate %.2f, errors %d, timeouts %d]",
                        m.path("served_bytes").asLong(), m.path("hit_rate").asDouble(), m.path("errors").asLong(),
                        m.path("timeouts").asLong()));
                assertThat(m.path("served_bytes").asLong()).as("the node's blocks came through the mirror").isPositive();
                assertThat(m.path("verification_failures").asLong()).isZero();
            }
            System.out.printf("fleet at once: %d nodes, dataset %d bytes; store served %d bytes (%.3fx) in %d GETs;"
                            + " all read in %.1f s; per node:%s%n", NODES, world.datasetBytes(), served, (double) served / world.datasetBytes(),
                    s3.counters().gets(), seconds, perNode);
            assertThat((double) served).as("store bytes for %d nodes at once over the dataset's bytes", NODES)
                    .isLessThanOrEqualTo(1.15 * world.datasetBytes());
            assertThat(world.nginx().accessLog()).isNotEmpty().allSatisfy(l -> assertThat(l).contains("client_auth=none"));
        } finally {
            readers.shutdownNow();
            for (FleetWorld.Node node : nodes) {
                node.close();
            }
        }
    }

    @Test
    @Order(2)
    void anIndexInPartsComesThroughTheMirror() throws Exception {
        Path src = Files.createDirectories(world.work.resolve("parted-src"));
        // Not the first dataset's Parquet: its blobs must not be in nginx's cache already.
        SampleData.writeParquet(src, 500, 3);
        for (int c = 0; c < PARTED_CLASSES; c++) {
            Path dir = Files.createDirectories(src.resolve("images").resolve(String.format("n%03d", c)));
            for (int i = 0; i < PARTED_PER_CLASS; i++) {
                Files.writeString(dir.resolve(String.format("%05d.cls", i)), (c + ":" + i + ";").repeat(1 + i % 5),
                        StandardCharsets.US_ASCII);
            }
        }
        int members = PARTED_CLASSES * PARTED_PER_CLASS;
        assertThat(members).isGreaterThan(StagedIndex.PART_MEMBERS);
        VersionHash version;
        Map<String, String> expected = new TreeMap<>();
        try (BlobStore store = world.s3.openStore(world.prefix)) {
            version = SampleData.publish(store, world.work.resolve("parted-staging"), PARTED, src, false,
                    PublishRequest.DEFAULT_SHARD_SIZE);
            SampleData.hashes(src.resolve("main")).forEach((p, h) -> expected.put("main/" + p, h));
            SampleData.hashes(src.resolve("images")).forEach((p, h) -> expected.put("images/" + p, h));
            expected.put(".warp/manifest.json", SampleData.sha256(store.get(StoreLayout.version(PARTED, version))));
        }

        try (FleetWorld.Node node = world.node("parted", "--mirror", world.mirror())) {
            Path dir = node.mount.resolve(PARTED.workspace()).resolve(PARTED.name() + "@" + version.hex());
            try (Stream<Path> classes = Files.list(dir.resolve("images"))) {
                assertThat(classes.count()).isEqualTo(PARTED_CLASSES);
            }
            assertThat(FleetWorld.readAll(dir)).as("listing and bytes of every file").isEqualTo(expected);

            List<String> indexBlobs;
            try (Stream<Path> kept = Files.list(node.cache.resolve("catalog/v1/blobs"))) {
                indexBlobs = kept.map(p -> p.getFileName().toString()).sorted().toList();
            }
            // Parts are cut at PART_MEMBERS members or 1 MiB, whichever comes first: at least two here.
            assertThat(indexBlobs).as("the index's top and its parts, kept by the node").hasSizeGreaterThanOrEqualTo(3);
            List<String> log = world.nginx().accessLog();
            for (String hex : indexBlobs) {
                String key = "/warp/blobs/sha256/" + hex.substring(0, 2) + "/" + hex;
                assertThat(log).as("nginx answered a GET of index blob " + hex)
                        .anySatisfy(l -> assertThat(l).contains("\"GET " + key + " ").containsPattern("\" 20[06] "));
            }
            JsonNode m = node.mirrorStats();
            assertThat(m.path("errors").asLong()).as("no read fell back to the store").isZero();
            assertThat(m.path("verification_failures").asLong()).isZero();
            assertThat(log).allSatisfy(l -> assertThat(l).contains("client_auth=none"));
        }
    }
}
