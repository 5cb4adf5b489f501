package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;
import io.warpdata.store.FaultStore;
import io.warpdata.store.FaultStore.Call;
import io.warpdata.store.InMemoryBlobStore;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ReadExecutor}'s counters: each source of a read is counted once, as what it is (a
 * hit of a local tier, a member hit, a dedup hit, a fetch), in the counters {@code cache stats}
 * and Prometheus show. Each step reads through the cache and compares every counter with the
 * step before, so a read counted twice, or as the wrong source, fails.
 */
class ReadExecutorTest {
    private static final int MIB = BlockHashList.DEFAULT_BLOCK_SIZE;
    private static final RetryPolicy FAST =
            new RetryPolicy(Duration.ofMillis(1), Duration.ofMillis(10), Duration.ofSeconds(10));
    private static final String[] SOURCE_COUNTERS = {"hit_blocks", "hit_bytes", "miss_blocks", "miss_bytes",
        "member_hits", "member_fetches", "dedup_hits", "read_errors"};

    @TempDir
    Path dir;

    private final InMemoryBlobStore memory = new InMemoryBlobStore();
    private final FaultStore store = new FaultStore(memory);
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private BlockCache cache;
    private Map<String, Long> before;

    @AfterEach
    void tearDown() throws InterruptedException {
        if (cache != null) {
            cache.close();
        }
        pool.shutdownNow();
        pool.awaitTermination(10, TimeUnit.SECONDS);
    }

    private BlockCache open() {
        CacheConfig cfg = CacheConfig.defaults(dir).withMinFreeBytes(0).withMaxBytes(256L << 20).withRetry(FAST)
                .withMaxPrefetchBytes(0);
        cache = new BlockCache(store, cfg, pool, null, null);
        before = counters();
        return cache;
    }

    private Map<String, Long> counters() {
        Map<String, Long> all = cache.metrics().snapshot();
        Map<String, Long> m = new LinkedHashMap<>();
        for (String k : SOURCE_COUNTERS) {
            m.put(k, all.get(k));
        }
        return m;
    }

    /** Asserts the counters moved by exactly {@code deltas} (name, delta pairs) since the last step, and nothing else. */
    private void counted(String step, Object... deltas) {
        settle();
        Map<String, Long> now = counters();
        Map<String, Long> expected = new LinkedHashMap<>(before);
        for (int i = 0; i < deltas.length; i += 2) {
            String k = (String) deltas[i];
            expected.put(k, expected.get(k) + ((Number) deltas[i + 1]).longValue());
        }
        assertThat(now).as(step).isEqualTo(expected);
        before = now;
    }

    private void settle() {
        try {
            assertThat(cache.awaitIdle(Duration.ofSeconds(10))).isTrue();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    private static byte[] readMember(BlockCache c, BlobMember m) {
        byte[] out = new byte[(int) m.length()];
        assertThat(c.readMember(m, 0, ByteBuffer.wrap(out))).isEqualTo(out.length);
        return out;
    }

    private static BlobMember member(BlobRef shard, byte[] bytes, long at, int len) {
        return new BlobMember(shard, at, len, BlobId.of(Arrays.copyOfRange(bytes, (int) at, (int) at + len)));
    }

    @Test
    void everySourceIsCountedOnceAsWhatItIs() {
        byte[] a = TestBlobs.bytes(4 * MIB, 1);
        BlobRef shardA = TestBlobs.put(memory, a, MIB);
        BlockCache c = open();

        BlobMember small = member(shardA, a, 2L * MIB + 1000, 30_000);
        assertThat(readMember(c, small)).isEqualTo(Arrays.copyOfRange(a, 2 * MIB + 1000, 2 * MIB + 31_000));
        counted("a cold small member read at random: one member GET, a miss of its bytes",
                "member_fetches", 1, "miss_bytes", 30_000);

        readMember(c, small);
        counted("again: the member cached under its hash", "member_hits", 1, "hit_bytes", 30_000);

        byte[] block = new byte[MIB];
        assertThat(c.read(shardA, 0, block, 0, MIB)).isEqualTo(MIB);
        counted("a cold block: fetched", "miss_blocks", 1, "miss_bytes", MIB);
        assertThat(c.read(shardA, 0, block, 0, MIB)).isEqualTo(MIB);
        counted("again: the disk tier", "hit_blocks", 1, "hit_bytes", MIB);

        BlobMember inBlock0 = member(shardA, a, 5000, 20_000);
        readMember(c, inBlock0);
        counted("a member whose own blocks are cached", "hit_blocks", 1, "hit_bytes", 20_000);

        // Shard B holds the same bytes as that member, elsewhere: served from shard A's blocks.
        byte[] b = TestBlobs.bytes(2 * MIB, 2);
        System.arraycopy(a, 5000, b, 700_000, 20_000);
        BlobRef shardB = TestBlobs.put(memory, b, MIB);
        long reads = store.calls(Call.READ);
        assertThat(readMember(c, member(shardB, b, 700_000, 20_000))).isEqualTo(Arrays.copyOfRange(a, 5000, 25_000));
        counted("the same bytes in another shard: a dedup hit", "dedup_hits", 1, "hit_bytes", 20_000);
        assertThat(store.calls(Call.READ)).as("no ranged GET for a dedup hit").isEqualTo(reads);

        byte[] index = TestBlobs.bytes(100_000, 3);
        BlobRef idx = TestBlobs.put(memory, index, MIB);
        assertThat(c.readIndex(idx)).isEqualTo(index);
        counted("an index read whole at first touch: a miss of all its bytes", "miss_bytes", 100_000);

        store.on(Call.READ).corrupt();
        BlobRef cold = TestBlobs.put(memory, TestBlobs.bytes(MIB, 4), MIB);
        assertThatThrownBy(() -> c.read(cold, 0, new byte[10], 0, 10)).isInstanceOf(BlockVerificationException.class);
        counted("a read that fails: one read error, nothing served", "read_errors", 1);

        assertThat(sourceBytes(c)).as("every byte served is counted under exactly one source")
                .isEqualTo(c.metrics().hitBytes.sum() + c.metrics().missBytes.sum());
        assertThat(sourceReads(c)).as("each read once: a member GET, a member hit, 2 block reads, an own-blocks read,"
                + " a dedup hit, an index").isEqualTo(7);
    }

    /**
     * Audit 50: a read across many blocks smaller than 1 MiB (a tensor hash blob's 4 KiB blocks)
     * fetched each block with a GET of its own: hundreds of GETs to list one file's tensors.
     * Consecutive missing blocks of one read now go out as one GET of up to 1 MiB.
     */
    @Test
    void aReadAcrossManySmallBlocksFetchesThemInRunsNotAGetEach() {
        byte[] a = TestBlobs.bytes(3 * MIB, 9);
        BlobRef small = TestBlobs.put(memory, a, 4096);
        BlockCache c = open();
        long reads = store.calls(Call.READ);
        byte[] got = new byte[600_000];
        assertThat(c.read(small, 10_000, got, 0, got.length)).isEqualTo(got.length);
        assertThat(got).isEqualTo(Arrays.copyOfRange(a, 10_000, 610_000));
        assertThat(store.calls(Call.READ) - reads).as("GETs for 147 blocks of 4 KiB").isEqualTo(1);

        // Across 2.5 MB, the first read's blocks cached in the middle: a GET per run of missing
        // blocks, each of up to 1 MiB; and the blocks the runs fetched count as fetched, the
        // cached ones as hits (the review: a run done before the read's loop reached its blocks
        // had them counted as hits).
        settle(); // the first read's blocks written
        Map<String, Long> counts = c.metrics().snapshot();
        reads = store.calls(Call.READ);
        byte[] more = new byte[2_500_000];
        assertThat(c.read(small, 0, more, 0, more.length)).isEqualTo(more.length);
        assertThat(more).isEqualTo(Arrays.copyOf(a, more.length));
        assertThat(store.calls(Call.READ) - reads).as("GETs: blocks 0-1, then 149-610 in two runs of at most 256").isEqualTo(3);
        Map<String, Long> now = c.metrics().snapshot();
        assertThat(now.get("hit_blocks") - counts.get("hit_blocks")).as("blocks 2-148, cached").isEqualTo(147);
        assertThat(now.get("miss_blocks") - counts.get("miss_blocks")).as("blocks 0-1 and 149-610, fetched").isEqualTo(464);
    }

    /**
     * The review: a block that failed verification twice moments ago fails a read at once, and
     * is not fetched again (audit 38), also when it lies behind blocks the read fetches in runs.
     */
    @Test
    void aBlockThatFailedTwiceMomentsAgoIsNotFetchedInARun() {
        byte[] a = TestBlobs.bytes(MIB, 11);
        BlobRef small = TestBlobs.put(memory, a, 4096);
        BlockCache c = open();
        c.read(small, 0, new byte[0], 0, 0); // its hash list
        FaultStore.Rule corrupting = store.on(Call.READ).corrupt();
        for (int i = 0; i < 2; i++) {
            assertThatThrownBy(() -> c.read(small, 40 * 4096, new byte[10], 0, 10)).isInstanceOf(BlockVerificationException.class);
        }
        corrupting.remove();
        long reads = store.calls(Call.READ);
        assertThatThrownBy(() -> c.read(small, 30 * 4096, new byte[11 * 4096], 0, 11 * 4096))
                .isInstanceOf(BlockVerificationException.class).hasMessageContaining("not fetched again");
        assertThat(store.calls(Call.READ)).as("nothing fetched for a read that fails at once").isEqualTo(reads);
        assertThat(c.read(small, 30 * 4096, new byte[10 * 4096], 0, 10 * 4096)).as("the blocks before it").isEqualTo(10 * 4096);
        assertThat(store.calls(Call.READ) - reads).as("in one run").isEqualTo(1);
    }

    @Test
    void coldThenWarmMovesTheReadToTheCachedSource() {
        byte[] a = TestBlobs.bytes(4 * MIB, 5);
        BlobRef shard = TestBlobs.put(memory, a, MIB);
        BlockCache c = open();

        BlobMember small = member(shard, a, MIB + 500, 40_000);
        readMember(c, small);
        settle();
        assertSource(c, ReadSource.MEMBER_GET, 1, 40_000);
        readMember(c, small);
        assertSource(c, ReadSource.MEMBER_GET, 1, 40_000);
        assertSource(c, ReadSource.MEMBER_CACHED, 1, 40_000);

        // Larger than a member GET takes: its blocks, then (cached) its own blocks.
        BlobMember large = member(shard, a, 2L * MIB + 100, 600_000);
        assertThat(readMember(c, large)).isEqualTo(Arrays.copyOfRange(a, 2 * MIB + 100, 2 * MIB + 600_100));
        settle();
        assertSource(c, ReadSource.BLOCKS, 1, 600_000);
        assertSource(c, ReadSource.OWN_BLOCKS, 0, 0);
        readMember(c, large);
        assertSource(c, ReadSource.BLOCKS, 1, 600_000);
        assertSource(c, ReadSource.OWN_BLOCKS, 1, 600_000);

        byte[] whole = new byte[4 * MIB];
        c.read(shard, 0, whole, 0, whole.length);
        assertThat(whole).isEqualTo(a);
        assertSource(c, ReadSource.BLOCKS, 2, 600_000 + 4 * MIB);
        assertSource(c, ReadSource.MIRROR, 0, 0);
        assertThat(sourceBytes(c)).isEqualTo(c.metrics().hitBytes.sum() + c.metrics().missBytes.sum());
    }

    @Test
    void bytesAMirrorServedCountAsTheMirrors() {
        byte[] a = TestBlobs.bytes(3 * MIB, 6);
        BlobRef shard = TestBlobs.put(memory, a, MIB);
        RemoteTier mirror = new RemoteTier() {
            @Override
            public String describe() {
                return "http://mirror.test/warp";
            }

            @Override
            public boolean read(String key, long offset, byte[] dst, int dstOff, int len, int blockSize) {
                memory.read(key, offset, dst, dstOff, len);
                return true;
            }
        };
        CacheConfig cfg = CacheConfig.defaults(dir).withMinFreeBytes(0).withMaxBytes(256L << 20).withRetry(FAST)
                .withMaxPrefetchBytes(0);
        cache = new BlockCache(store, cfg, pool, null, null, OrderPrefetcher.MAX_PLAN_BYTES, java.util.List.of(mirror));
        BlockCache c = cache;
        long reads = store.calls(Call.READ);

        BlobMember small = member(shard, a, 100, 30_000);
        assertThat(readMember(c, small)).isEqualTo(Arrays.copyOfRange(a, 100, 30_100));
        byte[] block = new byte[MIB];
        c.read(shard, MIB, block, 0, MIB);
        settle();
        assertSource(c, ReadSource.MIRROR, 2, 30_000 + MIB);
        assertSource(c, ReadSource.MEMBER_GET, 0, 0);
        assertSource(c, ReadSource.BLOCKS, 0, 0);
        c.read(shard, MIB, block, 0, MIB);
        assertSource(c, ReadSource.BLOCKS, 1, MIB);
        assertThat(store.calls(Call.READ)).as("the store served no data").isEqualTo(reads);
        assertThat(sourceBytes(c)).isEqualTo(c.metrics().hitBytes.sum() + c.metrics().missBytes.sum());
    }

    private static void assertSource(BlockCache c, ReadSource s, long reads, long bytes) {
        assertThat(new long[] {c.metrics().reads(s), c.metrics().bytes(s)}).as("%s: reads, bytes", s.label())
                .containsExactly(reads, bytes);
    }

    private static long sourceBytes(BlockCache c) {
        return c.metrics().bySource().stream().mapToLong(ReadMetrics.SourceCount::bytes).sum();
    }

    private static long sourceReads(BlockCache c) {
        return c.metrics().bySource().stream().mapToLong(ReadMetrics.SourceCount::reads).sum();
    }
}
