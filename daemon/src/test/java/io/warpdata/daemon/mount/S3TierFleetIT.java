package io.warpdata.daemon.mount;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;
import io.warpdata.store.BlobStore;
import io.warpdata.store.S3ProxyFixture;
import io.warpdata.store.StoreLayout;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.HashMap;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An S3-compatible shared tier that warpd fills itself (issue 25): node 1 (a real warpd mount
 * with {@code --mirror s3://BUCKET/tier?endpoint=...} and the tier's own key pair) reads a
 * dataset from the store and, after verifying it, writes its blocks to the tier in the
 * background, and its block hash lists too; node 2, with its own cache, reads the same files with
 * 0 GETs of the store's blobs (blocks, hash lists), every file byte-identical to its source. The
 * version manifest is read from the store by each node, once: its metadata is not covered by
 * the version hash, so no mirror is trusted with it. Both the store and the tier are prefixes of one
 * real S3Proxy; requests are told apart by key.
 */
class S3TierFleetIT {
    private static final DatasetId DATASET = new DatasetId("fleet", "tiered");
    private static final String PREFIX = "it-tier-store";
    private static final String TIER = "it-tier-cache";
    private static final ObjectMapper JSON = new ObjectMapper();

    private static Path work;
    private static S3ProxyFixture s3;
    private static VersionHash version;
    private static Map<String, String> expected;

    @BeforeAll
    static void publish() throws Exception {
        s3 = S3ProxyFixture.start();
        work = Files.createTempDirectory("warp-tier-it");
        Path src = Files.createDirectories(work.resolve("src"));
        SampleData.writeParquet(src, 2_000, 9);
        Random random = new Random(26);
        for (int i = 0; i < 12; i++) {
            byte[] b = new byte[40_000 + random.nextInt(40_000)];
            random.nextBytes(b);
            Path f = src.resolve("images").resolve("c" + (i % 3)).resolve("f" + i + ".bin");
            Files.createDirectories(f.getParent());
            Files.write(f, b);
        }
        byte[] large = new byte[2 * (1 << 20) + 777];
        random.nextBytes(large);
        Files.write(src.resolve("images").resolve("large.bin"), large);
        try (BlobStore store = s3.openStore(PREFIX)) {
            version = SampleData.publish(store, work, DATASET, src, true);
            expected = new TreeMap<>();
            SampleData.hashes(src.resolve("main")).forEach((p, h) -> expected.put("main/" + p, h));
            SampleData.hashes(src.resolve("images")).forEach((p, h) -> expected.put("images/" + p, h));
            byte[] manifest = store.get(StoreLayout.version(DATASET, version));
            expected.put(".warp/manifest.json", SampleData.sha256(manifest));
        }
    }

    @AfterAll
    static void stop() throws IOException {
        WarpdProcess.stopAll(null, null, work, s3);
    }

    private static Map<String, String> readAll(Path mount) {
        return FleetWorld.readAll(mount.resolve(DATASET.workspace()).resolve(DATASET.name() + "@" + version.hex()));
    }

    private static JsonNode tierStats(Path cache) throws IOException {
        JsonNode stats = JSON.readTree(WarpdProcess.warpctl(cache.resolve("warpd.sock"), s3.env(), "cache", "stats", "--json")
                .requireSuccess().out());
        assertThat(stats.path("mirrors")).hasSize(1);
        return stats.path("mirrors").get(0);
    }

    /** GETs of the store's blobs (data blobs and block hash lists) since the counters were reset. */
    private static List<String> storeBlobGets() {
        return s3.counters().timeline.stream().map(Object::toString)
                .filter(r -> r.startsWith("GET") && r.contains(PREFIX + "/blobs/"))
                .toList();
    }

    /** GETs of the store's version manifests since the counters were reset. */
    private static List<String> storeManifestGets() {
        return s3.counters().timeline.stream().map(Object::toString)
                .filter(r -> r.startsWith("GET") && r.contains(PREFIX + "/datasets/") && r.contains("/versions/"))
                .toList();
    }

    @Test
    void aTierFilledByNodeOneServesNodeTwoWithoutBlockGetsToTheStore() throws Exception {
        String tier = "s3://" + S3ProxyFixture.BUCKET + "/" + TIER + "?endpoint=" + s3.endpoint();
        Map<String, String> env = new HashMap<>(s3.env());
        env.put("WARP_MIRROR_AWS_ACCESS_KEY_ID", S3ProxyFixture.ACCESS_KEY);
        env.put("WARP_MIRROR_AWS_SECRET_ACCESS_KEY", S3ProxyFixture.SECRET_KEY);

        Path mount1 = Files.createDirectories(work.resolve("node1/mnt"));
        Path cache1 = work.resolve("node1/cache");
        try (WarpdProcess node1 = WarpdProcess.start(mount1, s3.remote(PREFIX), cache1, env, "--mirror", tier)) {
            assertThat(readAll(mount1)).isEqualTo(expected);
            JsonNode m = tierStats(cache1);
            assertThat(m.path("served_bytes").asLong()).as("an empty tier serves nothing").isZero();
            assertThat(m.path("fills_failed").asLong()).isZero();
            assertThat(m.path("fills_dropped").asLong()).isZero();
        }
        // Stopping node 1 wrote what was still queued.
        try (BlobStore tierView = s3.openStore(TIER)) {
            assertThat(tierView.list("blobs/")).as("blocks in the tier").isNotEmpty();
        }

        s3.resetCounters();
        Path mount2 = Files.createDirectories(work.resolve("node2/mnt"));
        Path cache2 = work.resolve("node2/cache");
        try (WarpdProcess node2 = WarpdProcess.start(mount2, s3.remote(PREFIX), cache2, env, "--mirror", tier)) {
            assertThat(readAll(mount2)).isEqualTo(expected);
            JsonNode m = tierStats(cache2);
            List<String> blobGets = storeBlobGets();
            List<String> manifestGets = storeManifestGets();
            System.out.printf("S3 tier: node 2 read %d bytes from the tier; GETs of the store's blobs: %s; of its"
                    + " manifests: %s%n", m.path("served_bytes").asLong(), blobGets, manifestGets);
            assertThat(m.path("served_bytes").asLong()).isPositive();
            assertThat(m.path("verification_failures").asLong()).isZero();
            assertThat(blobGets).as("GETs of blocks and block hash lists to the store").isEmpty();
            assertThat(manifestGets).as("GETs of the version manifest to the store (never a mirror's copy)").hasSize(1);
        }
    }
}
