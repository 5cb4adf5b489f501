package io.warpdata.daemon.mount;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warpdata.store.BlobStore;
import io.warpdata.catalog.Catalog;
import io.warpdata.daemon.publish.PublishProgress;
import io.warpdata.daemon.publish.PublishRequest;
import io.warpdata.daemon.publish.Publisher;
import io.warpdata.manifest.Artifact;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Member-level fetch and dedup (issue 16) through a real mount, counted at the S3 server: two
 * datasets pack the same 1,000 small files (2-30 KB) into different tar shards: another shard
 * size, the files one folder deeper (every tar header differs, so no shard can come out the
 * same: shard boundaries are content-defined and would otherwise meet again), and one more file
 * at the front that shifts every offset. A cold random read of one
 * member costs about its own bytes, not a block; reading all of the first dataset and then all
 * of the second, the second downloads (nearly) nothing: its members are found by their SHA-256
 * in the first one's cache. Every byte read is checked against the source files' SHA-256.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MemberDedupIT {
    private static final String PREFIX = "it-member";
    private static final DatasetId FIRST = new DatasetId("dedup", "first");
    private static final DatasetId SECOND = new DatasetId("dedup", "second");
    private static final int FILES = 1_000;
    /** The second dataset's files are one folder deeper. */
    private static final String DEEPER = "train/";
    /** The file only the second dataset has: it sorts first, so every member after it moves. */
    private static final String EXTRA = DEEPER + "c0/000-extra.bin";
    private static final ObjectMapper JSON = new ObjectMapper();

    private static MountedStore m;
    private static Path firstSrc;
    private static Path secondSrc;
    private static VersionHash firstVersion;
    private static VersionHash secondVersion;
    private static Artifact firstImages;
    private static Artifact secondImages;

    @BeforeAll
    static void publishTwoPackingsOfTheSameFiles() throws IOException {
        m = MountedStore.start(PREFIX);
        firstSrc = Files.createDirectories(m.work.resolve("first-src/images"));
        secondSrc = Files.createDirectories(m.work.resolve("second-src/images"));
        Random random = new Random(16);
        for (int i = 0; i < FILES; i++) {
            byte[] data = new byte[2_000 + random.nextInt(28_001)];
            random.nextBytes(data);
            String name = String.format("c%d/img%04d.bin", i % 10, i);
            Files.write(Files.createDirectories(firstSrc.resolve(name).getParent()).resolve(name.substring(3)), data);
            Path deeper = secondSrc.resolve(DEEPER + name);
            Files.write(Files.createDirectories(deeper.getParent()).resolve(deeper.getFileName()), data);
        }
        byte[] extra = new byte[20_000];
        random.nextBytes(extra);
        Files.write(secondSrc.resolve(EXTRA), extra);

        try (BlobStore store = m.s3.openStore(PREFIX)) {
            firstVersion = publish(store, FIRST, firstSrc, 4L << 20);
            secondVersion = publish(store, SECOND, secondSrc, 3L << 20);
            Catalog catalog = new Catalog(store);
            firstImages = catalog.manifest(FIRST, firstVersion).artifacts().get("images");
            secondImages = catalog.manifest(SECOND, secondVersion).artifacts().get("images");
        }
        Set<BlobId> shared = new HashSet<>(firstImages.shards().stream().map(BlobRef::id).toList());
        shared.retainAll(secondImages.shards().stream().map(BlobRef::id).toList());
        assertThat(shared).as("the two datasets share no shard").isEmpty();
        assertThat(firstImages.shards()).hasSizeGreaterThan(1);
        assertThat(secondImages.shards()).hasSizeGreaterThan(1);
        System.out.printf("MemberDedupIT: first %d shards (%d bytes), second %d shards (%d bytes)%n",
                firstImages.shards().size(), shardBytes(firstImages), secondImages.shards().size(),
                shardBytes(secondImages));
    }

    private static VersionHash publish(BlobStore store, DatasetId id, Path images, long shardSize) {
        Publisher publisher = new Publisher(store, new Catalog(store), Clock.systemUTC(), "member-it", m.work, 4,
                PublishProgress.NONE);
        PublishRequest request = new PublishRequest(id, new TreeMap<>(),
                new TreeMap<>(Map.of("images", List.of(images.toString()))), List.of(), true, shardSize, m.work);
        return publisher.publish(request).version();
    }

    @AfterAll
    static void stop() throws IOException {
        if (m != null) {
            m.close();
        }
    }

    private static long shardBytes(Artifact a) {
        return a.shards().stream().mapToLong(BlobRef::size).sum();
    }

    private static Path images(DatasetId id, VersionHash v) {
        return m.mount.resolve(id.workspace()).resolve(id.name() + "@" + v.hex()).resolve("images");
    }

    /** Lists every directory (the version's manifest and member index load now, not during the reads measured next). */
    private static long list(Path root) {
        try (Stream<Path> all = Files.walk(root)) {
            return all.count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static JsonNode counters() {
        try {
            return JSON.readTree(m.warpctl("cache", "stats", "--json").requireSuccess().out()).path("counters");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void report(String step) {
        System.out.println("MemberDedupIT " + step + ": server " + m.s3.counters() + "; warpd " + counters());
    }

    @Test
    @Order(1)
    void aColdRandomReadOfOneSmallMemberCostsAboutItsSize() throws IOException {
        Path dir = images(FIRST, firstVersion);
        assertThat(list(dir)).isGreaterThan(FILES);
        String name = "c7/img0517.bin";
        long size = Files.size(firstSrc.resolve(name));
        String expected = SampleData.sha256(Files.readAllBytes(firstSrc.resolve(name)));

        m.s3.resetCounters();
        Shell.Result r = Shell.run("sha256sum", dir.resolve(name).toString()).requireSuccess();
        assertThat(r.out()).startsWith(expected);
        report("one cold " + size + "-byte member");
        // One ranged GET of exactly the member; besides it at most its shard's block hash list
        // (32 bytes a block: a few hundred bytes for a 4 MiB shard), itself a ranged GET of a blob,
        // unless it was loaded while the folder was listed (HashListPrefetcher).
        assertThat(m.s3.counters().rangedGets()).as("%s", m.s3.counters()).isBetween(1L, 2L);
        assertThat(m.s3.counters().bytesServed()).as("%s", m.s3.counters())
                .isBetween(size, size + 4096).isLessThan(1L << 20);
        assertThat(counters().path("member_fetches").asLong()).isEqualTo(1);
        assertThat(counters().path("member_fetched_bytes").asLong()).isEqualTo(size);
    }

    @Test
    @Order(2)
    void theSecondDatasetPackingTheSameFilesDownloadsNearlyNothing() throws IOException {
        Map<String, String> expectedFirst = SampleData.hashes(firstSrc);
        Map<String, String> expectedSecond = SampleData.hashes(secondSrc);
        assertThat(expectedFirst).hasSize(FILES);
        Path first = images(FIRST, firstVersion);
        Path second = images(SECOND, secondVersion);

        m.s3.resetCounters();
        assertThat(SampleData.hashes(first)).as("every file of the first dataset, byte for byte").isEqualTo(expectedFirst);
        long firstBytes = m.s3.counters().bytesServed();
        report("all of the first dataset (" + shardBytes(firstImages) + " bytes of shards)");
        assertThat(firstBytes).as("the first dataset costs its shards about once")
                .isLessThan(shardBytes(firstImages) + (2L << 20));

        assertThat(list(second)).isGreaterThan(FILES);
        long hitsBefore = counters().path("dedup_hits").asLong() + counters().path("member_hits").asLong();
        m.s3.resetCounters();
        assertThat(SampleData.hashes(second)).as("every file of the second dataset, byte for byte")
                .isEqualTo(expectedSecond);
        report("all of the second dataset (" + shardBytes(secondImages) + " bytes of shards)");
        long extra = Files.size(secondSrc.resolve(EXTRA));
        // Only the file the first dataset does not have is fetched (one member GET), with the
        // block hash list of its shard.
        assertThat(m.s3.counters().bytesServed()).as("the second dataset, %s", m.s3.counters())
                .isLessThanOrEqualTo(extra + 4096);
        assertThat(m.s3.counters().rangedGets()).as("%s", m.s3.counters()).isLessThanOrEqualTo(2);
        long hits = counters().path("dedup_hits").asLong() + counters().path("member_hits").asLong() - hitsBefore;
        assertThat(hits).as("members served by their hash from the first dataset's cache").isGreaterThanOrEqualTo(FILES);
    }
}
