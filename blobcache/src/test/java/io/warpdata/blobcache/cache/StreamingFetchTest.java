package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.warpdata.store.BlobStore;
import io.warpdata.store.ForwardingBlobStore;
import io.warpdata.store.InMemoryBlobStore;
import io.warpdata.store.StoreUnavailableException;
import io.warpdata.manifest.BlobRef;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;
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

    private final InMemoryBlobStore memory = new InMemoryBlobStore();
    private final StreamingStore store = new StreamingStore(memory);
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private BlockCache cache;

    @AfterEach
    void tearDown() throws InterruptedException {
        store.gate.countDown();
        if (cache != null) {
            cache.close();
        }
        pool.shutdownNow();
        pool.awaitTermination(10, TimeUnit.SECONDS);
    }

    private BlockCache open() {
        cache = new BlockCache(store, CacheConfig.defaults(dir).withMinFreeBytes(0).withMaxBytes(64L << 20)
                .withRetry(FAST), pool, null, null);
        return cache;
    }

    @Test
    void firstBlockOfARunIsServedWhileTheRestStillStreams() throws Exception {
        byte[] data = TestBlobs.bytes(BLOCKS * BS, 7);
        BlobRef ref = TestBlobs.put(memory, data, BS);
        BlockCache c = open();
        store.stallAfterBlocks = 1;
        // warm() fetches the whole blob as one run; the store stops after its first block.
        Future<WarmResult> warm = pool.submit(() -> c.warm(ref, Long.MAX_VALUE, WarmListener.NONE, () -> false));
        assertThat(store.stalled.await(10, TimeUnit.SECONDS)).isTrue();

        byte[] out = new byte[BS];
        Future<Integer> read = pool.submit(() -> c.read(ref, 0, out, 0, BS));
        assertThat(read.get(10, TimeUnit.SECONDS)).isEqualTo(BS);
        assertThat(out).isEqualTo(Arrays.copyOfRange(data, 0, BS));
        assertThat(warm.isDone()).as("the run is still streaming").isFalse();
        assertThat(store.calls).as("the reader joined the run's GET").hasSize(1);

        store.gate.countDown();
        assertThat(warm.get(10, TimeUnit.SECONDS).blocksFetched()).isEqualTo(BLOCKS);
        assertThat(store.calls).hasSize(1);
    }

    @Test
    void getFailingPartWayIsRetriedFromTheFirstBlockNotYetServed() {
        byte[] data = TestBlobs.bytes(BLOCKS * BS, 8);
        BlobRef ref = TestBlobs.put(memory, data, BS);
        BlockCache c = open();
        store.failAfterBytes = 3 * BS + 100; // three whole blocks and a bit of the fourth arrive
        c.warm(ref, Long.MAX_VALUE, WarmListener.NONE, () -> false);

        assertThat(store.calls).containsExactly(List.of(0L, (long) BLOCKS * BS),
                List.of(3L * BS, (long) (BLOCKS - 3) * BS));
        byte[] all = new byte[data.length];
        c.read(ref, 0, all, 0, all.length);
        assertThat(all).isEqualTo(data);
        assertThat(store.calls).as("everything was cached").hasSize(2);
        assertThat(c.metrics().retries.sum()).isEqualTo(1);
    }

    /** Streams ranged reads a block at a time; can stall or fail part way through the first one. */
    private static final class StreamingStore extends ForwardingBlobStore {
        final List<List<Long>> calls = new CopyOnWriteArrayList<>();
        final CountDownLatch stalled = new CountDownLatch(1);
        final CountDownLatch gate = new CountDownLatch(1);
        volatile int stallAfterBlocks = -1;
        volatile int failAfterBytes = -1;
        private final AtomicInteger streams = new AtomicInteger();

        StreamingStore(BlobStore inner) {
            super(inner);
        }

        @Override
        public void read(String key, long offset, byte[] dst, int dstOff, int len) {
            read(key, offset, dst, dstOff, len, n -> { });
        }

        @Override
        public void read(String key, long offset, byte[] dst, int dstOff, int len, IntConsumer arrived) {
            calls.add(List.of(offset, (long) len));
            boolean first = streams.getAndIncrement() == 0;
            int blocks = 0;
            for (int pos = 0; pos < len; ) {
                int n = Math.min(BS, len - pos);
                if (first && failAfterBytes >= 0 && pos + n > failAfterBytes) {
                    int part = failAfterBytes - pos;
                    inner.read(key, offset + pos, dst, dstOff + pos, part);
                    arrived.accept(pos + part);
                    throw new StoreUnavailableException("connection reset (injected)", null);
                }
                inner.read(key, offset + pos, dst, dstOff + pos, n);
                pos += n;
                arrived.accept(pos);
                if (first && ++blocks == stallAfterBlocks) {
                    stalled.countDown();
                    try {
                        gate.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new StoreUnavailableException("interrupted", e);
                    }
                }
            }
        }

        @Override
        public String describe() {
            return "streaming(" + inner.describe() + ")";
        }
    }
}
