package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.warpdata.store.FaultStore;
import io.warpdata.store.FaultStore.Call;
import io.warpdata.store.InMemoryBlobStore;
import io.warpdata.manifest.BlobRef;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Read-ahead runs are sized to what one connection delivers, so a slow link gets many GETs at once. */
class ConnectionRateTest {
    private static final int MIB = 1 << 20;

    @Test
    void runsAreTheSmallestUntilSomethingIsKnown() {
        assertThat(new ConnectionRate(32 * MIB).runBytes()).isEqualTo(ConnectionRate.MIN_RUN_BYTES);
    }

    @Test
    void aFastConnectionKeepsTheLargestRuns() {
        ConnectionRate r = new ConnectionRate(32 * MIB);
        r.record(32L * MIB, TimeUnit.MILLISECONDS.toNanos(40)); // ~840 MB/s: loopback
        assertThat(r.runBytes()).isEqualTo(32 * MIB);
    }

    @Test
    void aConnectionOf25MBpsGetsRunsOfAQuarterSecondRoundedDown() {
        ConnectionRate r = new ConnectionRate(32 * MIB);
        r.record(8L * MIB, (long) (8.0 * MIB / 25e6 * 1e9)); // 25 MB/s -> 6.25 MB in 0.25 s
        assertThat(r.runBytes()).isEqualTo(4 * MIB);
        r = new ConnectionRate(32 * MIB);
        r.record(8L * MIB, (long) (8.0 * MIB / 85e6 * 1e9)); // S3's ~85 MB/s -> 21 MB
        assertThat(r.runBytes()).isEqualTo(16 * MIB);
    }

    @Test
    void aVerySlowConnectionStopsAtTheSmallestRun() {
        ConnectionRate r = new ConnectionRate(32 * MIB);
        r.record(2L * MIB, TimeUnit.SECONDS.toNanos(2)); // 1 MB/s
        assertThat(r.runBytes()).isEqualTo(ConnectionRate.MIN_RUN_BYTES);
    }

    @Test
    void smallGetsSayNothingAboutTheLink() {
        ConnectionRate r = new ConnectionRate(32 * MIB);
        r.record(64 << 10, TimeUnit.MILLISECONDS.toNanos(50));
        assertThat(r.bytesPerSecond()).isZero();
        assertThat(r.runBytes()).isEqualTo(ConnectionRate.MIN_RUN_BYTES);
    }

    @Test
    void theAverageFollowsTheLinkWhenItChanges() {
        ConnectionRate r = new ConnectionRate(32 * MIB);
        r.record(32L * MIB, TimeUnit.MILLISECONDS.toNanos(40));
        for (int i = 0; i < 20; i++) {
            r.record(4L * MIB, (long) (4.0 * MIB / 25e6 * 1e9));
        }
        assertThat(r.runBytes()).isEqualTo(4 * MIB);
    }

    // ------------------------------------------------------------- through the cache

    @TempDir
    Path dir;

    private final ExecutorService pool = Executors.newCachedThreadPool();
    private BlockCache cache;

    @AfterEach
    void tearDown() throws InterruptedException {
        if (cache != null) {
            cache.close();
        }
        pool.shutdownNow();
        pool.awaitTermination(10, TimeUnit.SECONDS);
    }

    @Test
    void aSequentialReadOverAPacedStoreKeepsManyGetsInFlight() throws InterruptedException {
        InMemoryBlobStore memory = new InMemoryBlobStore();
        byte[] data = TestBlobs.bytes(96 * MIB, 3);
        BlobRef ref = TestBlobs.put(memory, data, MIB);
        // 50 MB/s per connection, no limit on connections: 12.5 MB a quarter second -> 8 MiB runs.
        FaultStore store = new FaultStore(memory);
        store.on(Call.READ).under("blobs/").pace(50e6);
        cache = new BlockCache(store, CacheConfig.defaults(dir).withMinFreeBytes(0).withMaxBytes(256L * MIB), pool,
                null, null);
        byte[] buf = new byte[4 * MIB];
        for (long off = 0; off < data.length; off += buf.length) {
            int n = cache.read(ref, off, buf, 0, buf.length);
            assertThat(n).isEqualTo(buf.length);
            assertThat(Arrays.equals(buf, 0, n, data, (int) off, (int) off + n)).as("bytes at " + off).isTrue();
        }
        assertThat(cache.awaitIdle(Duration.ofSeconds(30))).as("every GET has returned").isTrue();
        List<Integer> lengths = store.requests(Call.READ).stream().map(FaultStore.Request::len).toList();
        // After the first GETs have measured the link, read-ahead goes out in runs of 8 MiB...
        assertThat(lengths.subList(lengths.size() / 2, lengths.size())).allSatisfy(l -> assertThat(l).isLessThanOrEqualTo(8 * MIB));
        // ...several at once: a 32 MiB run at a time would keep at most two in flight.
        assertThat(store.peakInFlight(Call.READ)).isGreaterThanOrEqualTo(4);
    }
}
