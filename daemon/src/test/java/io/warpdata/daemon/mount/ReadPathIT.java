package io.warpdata.daemon.mount;

import io.warpdata.store.BlobStore;
import io.warpdata.catalog.Catalog;
import io.warpdata.store.S3ProxyFixture;
import io.warpdata.daemon.publish.PublishProgress;
import io.warpdata.daemon.publish.PublishRequest;
import io.warpdata.daemon.publish.Publisher;
import io.warpdata.manifest.BlockHashList;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The read path as a user meets it (issue 4): a real S3 server (S3Proxy) counting what it
 * serves, warpd from the shaded jar, real clients (sha256sum, cat, dd) reading the mount. Every
 * test starts its own warpd on its own, cold cache directory, so that what the server counts
 * is what that test's reads caused.
 *
 * <p>Metadata (latest.json, manifests, member indexes, block hash lists) is small; the
 * assertions allow {@link #METADATA_ALLOWANCE} bytes for it and are otherwise about blob bytes.
 */
class ReadPathIT {
    private static final DatasetId TABLE = new DatasetId("readit", "table");
    private static final DatasetId TABLE_COPY = new DatasetId("readit", "copy");
    private static final DatasetId PACKED = new DatasetId("readit", "packed");
    /** A table no other dataset shares and no test reads before its blocks are corrupted. */
    private static final DatasetId OTHER = new DatasetId("readit", "other");
    private static final long BLOCK = BlockHashList.DEFAULT_BLOCK_SIZE;
    /** Bytes the tests allow for metadata GETs (manifest, member index, block hash lists): all are a few KiB here. */
    private static final long METADATA_ALLOWANCE = 128L << 10;
    /** 300 members of ~30 KB in one tar shard of ~9 MiB: many blocks, so that "the whole shard" is easy to tell apart. */
    private static final int MEMBERS = 300;
    private static final int MEMBER_SIZE = 30_000;

    private static MountedStore fixture;
    private static S3ProxyFixture s3;
    private static BlobStore store;
    private static Path work;
    private static Path parquet;
    private static Path otherParquet;
    private static Path members;
    private static VersionHash tableVersion;
    private static VersionHash copyVersion;
    private static VersionHash packedVersion;
    private static VersionHash otherVersion;

    @BeforeAll
    static void publish() throws IOException, SQLException {
        fixture = MountedStore.serve("it-read");
        s3 = fixture.s3;
        store = fixture.store();
        work = fixture.work;

        Path tableSrc = Files.createDirectories(work.resolve("table-src/main"));
        parquet = tableSrc.resolve("data.parquet");
        writeParquet(parquet, "md5(i::VARCHAR) || md5((i * 7)::VARCHAR)");
        tableVersion = publish(TABLE, Map.of("main", List.of(tableSrc + "/*.parquet")), Map.of());
        copyVersion = publish(TABLE_COPY, Map.of("main", List.of(tableSrc + "/*.parquet")), Map.of());
        Path otherSrc = Files.createDirectories(work.resolve("other-src/main"));
        otherParquet = otherSrc.resolve("data.parquet");
        writeParquet(otherParquet, "md5((i * 13)::VARCHAR) || md5((i * 17)::VARCHAR)");
        otherVersion = publish(OTHER, Map.of("main", List.of(otherSrc + "/*.parquet")), Map.of());

        members = Files.createDirectories(work.resolve("packed-src/images"));
        Random random = new Random(42);
        for (int i = 0; i < MEMBERS; i++) {
            byte[] data = new byte[MEMBER_SIZE + random.nextInt(1000)];
            random.nextBytes(data);
            Path dir = Files.createDirectories(members.resolve("c" + (i % 3)));
            Files.write(dir.resolve(String.format("f%03d.bin", i)), data);
        }
        packedVersion = publish(PACKED, Map.of(), Map.of("images", List.of(members.toString())));
    }

    /** 60,000 rows of (id, s = {@code stringSql} of i): md5 strings barely compress, a few MiB, several blocks. */
    private static void writeParquet(Path file, String stringSql) throws SQLException {
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement s = c.createStatement()) {
            s.execute("COPY (SELECT i AS id, " + stringSql + " AS s FROM range(0, 60000) t(i))"
                    + " TO '" + file + "' (FORMAT PARQUET, COMPRESSION UNCOMPRESSED)");
        }
    }

    private static VersionHash publish(DatasetId id, Map<String, List<String>> tables, Map<String, List<String>> artifacts) {
        Publisher publisher = new Publisher(store, new Catalog(store), Clock.systemUTC(), "read-it", work, 4, PublishProgress.NONE);
        PublishRequest request = new PublishRequest(id, new TreeMap<>(tables), new TreeMap<>(artifacts), List.of(), true,
                PublishRequest.DEFAULT_SHARD_SIZE, work);
        return publisher.publish(request).version();
    }

    @AfterEach
    void stopEverything() {
        try {
            s3.faults().clear();
        } finally {
            fixture.stopWarpds();
        }
    }

    @AfterAll
    static void cleanUp() throws IOException {
        if (fixture != null) {
            fixture.close();
        }
    }

    /** A running warpd and where it mounted. */
    private record Mounted(WarpdProcess warpd, Path mount) {
    }

    /** A fresh mount point and cache directory named {@code name}, with warpd serving it. */
    private Mounted start(String name) throws IOException {
        Path m = Files.createDirectories(work.resolve("mnt-" + name));
        return new Mounted(startOn(m, work.resolve("cache-" + name)), m);
    }

    private WarpdProcess startOn(Path mount, Path cacheDir) {
        return fixture.startWarpd(mount, cacheDir);
    }

    private static Path tableFile(Path mount, DatasetId id, VersionHash v) {
        return mount.resolve(id.workspace()).resolve(id.name() + "@" + v.hex()).resolve("main/data.parquet");
    }

    private static Path member(Path mount, int i) {
        return mount.resolve(PACKED.workspace()).resolve(PACKED.name() + "@" + packedVersion.hex())
                .resolve("images/c" + (i % 3) + String.format("/f%03d.bin", i));
    }

    private static Path sourceMember(int i) {
        return members.resolve("c" + (i % 3) + String.format("/f%03d.bin", i));
    }

    private static String sha256(Path file) throws IOException {
        return SampleData.sha256(Files.readAllBytes(file));
    }

    /** sha256sum of a file in the mount, run as a separate process; the result's exit code is not checked. */
    private static Shell.Result sha256sum(Path file) {
        return Shell.run(null, Map.of(), 120, List.of("sha256sum", file.toString()));
    }

    private static String hashOf(Shell.Result r) {
        return r.requireSuccess().out().substring(0, 64);
    }

    /** Prints what the server counted for a step: the figures the read-path report quotes. */
    private static void report(String step) {
        System.out.println("ReadPathIT " + step + ": " + s3.counters());
    }

    /** So that the kernel's page cache of the mount cannot hide a refetch: the next read reaches warpd. */
    private static void dropPageCache() {
        Shell.bash("sync; echo 3 > /proc/sys/vm/drop_caches").requireSuccess();
    }

    @Test
    void cacheNoRedownload() throws Exception {
        Mounted m = start("twice");
        WarpdProcess w = m.warpd();
        Path mount = m.mount();
        Path file = tableFile(mount, TABLE, tableVersion);
        long size = Files.size(parquet);
        assertThat(size).as("the Parquet file spans several blocks").isGreaterThan(2 * BLOCK);
        assertThat(Files.size(file)).isEqualTo(size);
        String expected = sha256(parquet);

        dropPageCache();
        s3.resetCounters();
        assertThat(hashOf(sha256sum(file))).isEqualTo(expected);
        report("first read of " + size + " bytes");
        assertThat(s3.counters().rangedGets()).as("first read: ranged GETs, %s", s3.counters()).isPositive();
        assertThat(s3.counters().bytesServed()).as("first read fetches the file once, %s", s3.counters())
                .isBetween(size, size + METADATA_ALLOWANCE);

        dropPageCache();
        s3.resetCounters();
        Shell.run(null, Map.of(), 120, List.of("bash", "-c", "cat -- \"$1\" > /dev/null", "cat", file.toString())).requireSuccess();
        assertThat(hashOf(sha256sum(file))).isEqualTo(expected);
        report("second read, same daemon");
        assertThat(s3.counters().gets()).as("second read, same daemon: no GET at all, %s", s3.counters()).isZero();

        assertThat(w.terminate(30)).isZero();
        s3.resetCounters();
        WarpdProcess again = startOn(mount, work.resolve("cache-twice"));
        dropPageCache();
        assertThat(hashOf(sha256sum(file))).isEqualTo(expected);
        // After a restart the manifest is fetched again (a whole-object GET of a few KiB); the
        // file's blocks, its block hash list and member indexes come from the disk cache.
        report("read after a restart");
        assertThat(s3.counters().rangedGets()).as("ranged blob GETs after a restart, %s", s3.counters()).isZero();
        assertThat(s3.counters().bytesServed()).as("bytes served after a restart, %s", s3.counters())
                .isLessThan(METADATA_ALLOWANCE).isLessThan(size / 20);
        assertThat(again.isAlive()).isTrue();
    }

    @Test
    void twoDatasetsSharingAShardFetchItOnce() throws Exception {
        Path mount = start("shared").mount();
        Path a = tableFile(mount, TABLE, tableVersion);
        Path b = tableFile(mount, TABLE_COPY, copyVersion);
        long size = Files.size(parquet);
        String expected = sha256(parquet);

        s3.resetCounters();
        assertThat(hashOf(sha256sum(a))).isEqualTo(expected);
        assertThat(hashOf(sha256sum(b))).isEqualTo(expected);
        report("reading one " + size + "-byte shard through two datasets");
        assertThat(s3.counters().bytesServed()).as("both datasets read: one copy of the shard, %s", s3.counters())
                .isBetween(size, size + METADATA_ALLOWANCE);

        dropPageCache();
        s3.resetCounters();
        assertThat(hashOf(sha256sum(b))).isEqualTo(expected);
        assertThat(hashOf(sha256sum(a))).isEqualTo(expected);
        report("re-reading both");
        assertThat(s3.counters().gets()).as("re-reading both: nothing fetched, %s", s3.counters()).isZero();
    }

    @Test
    void memberFromColdShardFetchesAboutTheMembersBytes() throws Exception {
        Path mount = start("member").mount();
        long shardAtLeast;
        try (Stream<Path> files = Files.walk(members)) {
            shardAtLeast = files.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
        }
        assertThat(shardAtLeast).isGreaterThan(8 * BLOCK);
        int i = 150;
        long memberSize = Files.size(sourceMember(i));

        s3.resetCounters();
        assertThat(Files.size(member(mount, i))).isEqualTo(memberSize);
        assertThat(hashOf(sha256sum(member(mount, i)))).isEqualTo(sha256(sourceMember(i)));
        report("one " + memberSize + "-byte member of a >= " + shardAtLeast + "-byte shard, cold");
        // Counted from cold, metadata included: the member's block(s) (two if it straddles a
        // boundary) and at most the first read-ahead window, never the whole shard.
        assertThat(s3.counters().bytesServed()).as("one %d-byte member of a >= %d-byte shard, %s", memberSize, shardAtLeast,
                        s3.counters())
                .isLessThanOrEqualTo(memberSize + 2 * BLOCK + METADATA_ALLOWANCE)
                .isLessThan(shardAtLeast / 3);
    }

    @Test
    void faultsFailOnlyThatReadAndDaemonKeepsServing() throws Exception {
        Mounted m = start("faults");
        WarpdProcess w = m.warpd();
        Path mount = m.mount();
        Path cached = tableFile(mount, TABLE, tableVersion);
        String cachedHash = sha256(parquet);
        assertThat(hashOf(sha256sum(cached))).isEqualTo(cachedHash);
        // Load the member index and the shard's first block, so that the faults below hit blob
        // GETs of cold blocks, not metadata.
        assertThat(hashOf(sha256sum(member(mount, 0)))).isEqualTo(sha256(sourceMember(0)));

        int throttled = 100;
        assertThat(Files.size(member(mount, throttled))).isEqualTo(Files.size(sourceMember(throttled)));
        s3.resetCounters();
        s3.faults().failNextGetsWith503(2);
        Shell.Result afterThrottling = sha256sum(member(mount, throttled));
        s3.faults().clear();
        report("member read with two 503s injected (exit " + afterThrottling.exit() + ")");
        assertThat(s3.counters().faultsInjected.sum()).as("the 503s reached a read, %s", s3.counters()).isEqualTo(2);
        assertThat(hashOf(afterThrottling)).as("read after two 503s").isEqualTo(sha256(sourceMember(throttled)));

        int corrupted = 250;
        assertThat(Files.size(member(mount, corrupted))).isEqualTo(Files.size(sourceMember(corrupted)));
        s3.resetCounters();
        s3.faults().corruptNextGets(3);
        Shell.Result afterCorruption = sha256sum(member(mount, corrupted));
        s3.faults().clear();
        report("member read with 3 corrupt GETs injected (exit " + afterCorruption.exit() + ", stderr "
                + afterCorruption.err().strip() + ")");
        assertThat(s3.counters().faultsInjected.sum()).as("corrupt bytes reached a read, %s", s3.counters()).isPositive();
        if (afterCorruption.exit() == 0) {
            assertThat(hashOf(afterCorruption)).as("a read that succeeds after corruption has the right bytes")
                    .isEqualTo(sha256(sourceMember(corrupted)));
        } else {
            assertThat(afterCorruption.err()).contains("Input/output error");
            assertThat(afterCorruption.out()).as("no hash of wrong bytes").isEmpty();
        }

        // A store that keeps serving wrong bytes: the refetch is wrong too, so that read must fail.
        // A blob of its own, so that no read-ahead above can have cached it already. Its first
        // 4 KiB are read intact first, which loads its block hash list, so that the corruption
        // hits a data block's verification (not the hash list's) in block 2.
        Path alwaysCorrupt = tableFile(mount, OTHER, otherVersion);
        assertThat(Files.size(alwaysCorrupt)).isEqualTo(Files.size(otherParquet)).isGreaterThan(3 * BLOCK);
        Shell.run("dd", "if=" + alwaysCorrupt, "of=/dev/null", "bs=4096", "count=1").requireSuccess();
        s3.resetCounters();
        s3.faults().corruptNextGets(1000);
        long skip = 2 * BLOCK / 65536 + 1;
        Shell.Result wrongStore = Shell.bash("set -o pipefail; dd if='" + alwaysCorrupt + "' bs=65536 skip=" + skip
                + " count=1 status=none | sha256sum");
        s3.faults().clear();
        report("64 KiB dd read of block 2 with every GET corrupt (exit " + wrongStore.exit() + ", stderr "
                + wrongStore.err().strip() + ")");
        assertThat(s3.counters().rangedGets()).as("block GETs, %s", s3.counters()).isPositive();
        assertThat(s3.counters().faultsInjected.sum()).as("corrupt bytes reached the read, %s", s3.counters()).isPositive();
        assertThat(wrongStore.exit()).isNotZero();
        assertThat(wrongStore.err()).contains("Input/output error");
        assertThat(wrongStore.out()).as("dd passed on no bytes at all").startsWith(SampleData.sha256(new byte[0]));

        // The daemon keeps serving: the failed members once the store is healthy, and a cached file without GETs.
        assertThat(w.isAlive()).isTrue();
        assertThat(hashOf(sha256sum(member(mount, corrupted)))).isEqualTo(sha256(sourceMember(corrupted)));
        // Block 2 failed twice; if the kernel's read-ahead asked for it again meanwhile it failed
        // twice more, and then waits 5 s before a read fetches it again (Suspects.retryAfterNanos:
        // a CI run read it within that and got EIO): read until it is fetched, for at most 40 s.
        Shell.Result healed = sha256sum(alwaysCorrupt);
        for (long until = System.nanoTime() + 40_000_000_000L; healed.exit() != 0 && System.nanoTime() < until; ) {
            Thread.sleep(1000);
            healed = sha256sum(alwaysCorrupt);
        }
        assertThat(hashOf(healed)).isEqualTo(sha256(otherParquet));
        dropPageCache();
        s3.resetCounters();
        assertThat(hashOf(sha256sum(cached))).isEqualTo(cachedHash);
        assertThat(s3.counters().gets()).as("the cached file is served from disk, %s", s3.counters()).isZero();
        assertThat(w.isAlive()).isTrue();
        assertThat(WarpdProcess.isMounted(mount)).isTrue();
    }
}
