package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.warpdata.store.FaultStore;
import io.warpdata.store.FaultStore.Call;
import io.warpdata.store.FaultStore.Fault;
import io.warpdata.manifest.BlobRef;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Blocks of a coalesced GET reach readers as the GET streams in, and a retry resumes. */
class StreamingFetchTest {
    private static final int BS = 64 * 1024;
    private static final int BLOCKS = 10;
    private static final RetryPolicy FAST =
            new RetryPolicy(Duration.ofMillis(1), Duration.ofMillis(10), Duration.ofSeconds(10));

    @TempDir
    Path dir;

    /** Streams ranged reads a block at a time (see open); a rule stalls or fails the first one part way. */
    private final FaultStore store = new FaultStore();
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private BlockCache cache;

    @AfterEach
    void tearDown() throws InterruptedException {
        store.clear();
        if (cache != null) {
            cache.close();
        }
        pool.shutdownNow();
        pool.awaitTermination(10, TimeUnit.SECONDS);
    }

    private BlockCache open() {
        store.on(Call.READ).pieces(BS);
        cache = new BlockCache(store, CacheConfig.defaults(dir).withMinFreeBytes(0).withMaxBytes(64L << 20)
                .withRetry(FAST), pool, null, null);
        return cache;
    }

    @Test
    void firstBlockOfARunIsServedWhileTheRestStillStreams() throws Exception {
        byte[] data = TestBlobs.bytes(BLOCKS * BS, 7);
        BlobRef ref = TestBlobs.put(store.inner(), data, BS);
        BlockCache c = open();
        FaultStore.Rule stall = store.on(Call.READ).once().afterBytes(BS).gate();
        // warm() fetches the whole blob as one run; the store stops after its first block.
        Future<WarmResult> warm = pool.submit(() -> c.warm(ref, Long.MAX_VALUE, WarmListener.NONE, () -> false));
        assertThat(stall.awaitArrived(Duration.ofSeconds(10))).isTrue();

        byte[] out = new byte[BS];
        Future<Integer> read = pool.submit(() -> c.read(ref, 0, out, 0, BS));
        assertThat(read.get(10, TimeUnit.SECONDS)).isEqualTo(BS);
        assertThat(out).isEqualTo(Arrays.copyOfRange(data, 0, BS));
        assertThat(warm.isDone()).as("the run is still streaming").isFalse();
        assertThat(store.calls(Call.READ)).as("the reader joined the run's GET").isEqualTo(1);

        stall.release();
        assertThat(warm.get(10, TimeUnit.SECONDS).blocksFetched()).isEqualTo(BLOCKS);
        assertThat(store.calls(Call.READ)).isEqualTo(1);
    }

    @Test
    void getFailingPartWayIsRetriedFromTheFirstBlockNotYetServed() throws InterruptedException {
        byte[] data = TestBlobs.bytes(BLOCKS * BS, 8);
        BlobRef ref = TestBlobs.put(store.inner(), data, BS);
        BlockCache c = open();
        // Three whole blocks and a bit of the fourth arrive, then the connection breaks.
        store.on(Call.READ).once().afterBytes(3 * BS + 100).fail(Fault.UNAVAILABLE);
        c.warm(ref, Long.MAX_VALUE, WarmListener.NONE, () -> false);
        assertThat(c.awaitIdle(Duration.ofSeconds(10))).as("the GETs have returned").isTrue();

        assertThat(ranges()).containsExactly(List.of(0L, (long) BLOCKS * BS),
                List.of(3L * BS, (long) (BLOCKS - 3) * BS));
        byte[] all = new byte[data.length];
        c.read(ref, 0, all, 0, all.length);
        assertThat(all).isEqualTo(data);
        assertThat(store.calls(Call.READ)).as("everything was cached").isEqualTo(2);
        assertThat(c.metrics().retries.sum()).isEqualTo(1);
    }

    /** The ranged GETs' (offset, length), in the order they started. */
    private List<List<Long>> ranges() {
        return store.requests(Call.READ).stream().map(r -> List.of(r.offset(), (long) r.len())).toList();
    }
}
