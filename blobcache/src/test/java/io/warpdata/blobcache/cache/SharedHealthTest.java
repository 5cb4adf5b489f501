package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;
import io.warpdata.store.FaultStore;
import io.warpdata.store.HealthCheckedStore;
import io.warpdata.store.StoreHealth;
import io.warpdata.store.StoreUnavailableException;
import io.warpdata.store.StoreUnreachableException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The block cache reads the bare store and tells the store's health of each attempt itself,
 * while the catalog reads through a {@link HealthCheckedStore} over the same store and health
 * (warpd's wiring): an outage either of them finds fails the other's calls at once, without a
 * request, until a probe is answered.
 */
class SharedHealthTest {
    private static final int MIB = BlockHashList.DEFAULT_BLOCK_SIZE;

    @TempDir
    Path dir;

    private final FaultStore store = new FaultStore();
    private final AtomicLong nanos = new AtomicLong();
    private final StoreHealth health = StoreHealth.of("fault://test", Clock.systemUTC(), nanos::get);
    private final HealthCheckedStore catalogView = new HealthCheckedStore(store, health);
    private BlockCache cache;

    @AfterEach
    void tearDown() {
        if (cache != null) {
            cache.close();
        }
    }

    private BlockCache open() {
        CacheConfig cfg = CacheConfig.defaults(dir).withMinFreeBytes(0).withMaxBytes(64L << 20).withMaxPrefetchBytes(0)
                .withRetry(new RetryPolicy(Duration.ofMillis(1), Duration.ofMillis(5), Duration.ofSeconds(5)));
        cache = BlockCache.open(store, health, cfg, List.of(), ReadMetrics.GetListener.NONE);
        return cache;
    }

    @Test
    void anOutageTheCacheFindsFailsTheCatalogAtOnceAndAProbeEndsIt() {
        BlobRef a = TestBlobs.put(store, TestBlobs.bytes(2 * MIB, 1), MIB);
        store.put("pointer", new byte[] {7});
        BlockCache c = open();
        store.reset();

        store.down();
        assertThatThrownBy(() -> c.read(a, 0, new byte[10], 0, 10)).isInstanceOf(StoreUnreachableException.class);
        assertThat(health.snapshot().reachable()).as("the cache told the shared health").isFalse();
        long reached = store.calls();
        assertThat(reached).isPositive();

        long gets = c.metrics().getsIssued.sum();
        assertThat(gets).as("the GET that found the outage").isPositive();
        assertThatThrownBy(() -> catalogView.get("pointer")).isInstanceOf(StoreUnreachableException.class);
        assertThatThrownBy(() -> c.read(a, MIB, new byte[10], 0, 10)).isInstanceOf(StoreUnreachableException.class);
        assertThat(store.calls()).as("neither the catalog nor the cache tried the store again").isEqualTo(reached);
        assertThat(c.metrics().getsIssued.sum()).as("a read failed at once issued no GET").isEqualTo(gets);
        assertThat(health.snapshot().fastFailures()).isGreaterThanOrEqualTo(2);

        nanos.addAndGet(StoreHealth.PROBE_INTERVAL.toNanos());
        store.up();
        byte[] out = new byte[10];
        assertThat(c.read(a, 0, out, 0, 10)).as("the cache's read is the probe").isEqualTo(10);
        assertThat(health.snapshot().reachable()).isTrue();
        assertThat(catalogView.get("pointer")).containsExactly(7);
    }

    @Test
    void anOutageTheCatalogFindsFailsTheCacheAtOnce() {
        BlobRef a = TestBlobs.put(store, TestBlobs.bytes(MIB, 2), MIB);
        store.put("pointer", new byte[] {7});
        BlockCache c = open();
        store.reset();

        store.down();
        assertThatThrownBy(() -> catalogView.get("pointer")).isInstanceOf(StoreUnreachableException.class);
        long reached = store.calls();
        assertThatThrownBy(() -> c.read(a, 0, new byte[10], 0, 10)).isInstanceOf(StoreUnreachableException.class);
        assertThat(store.calls()).as("the cache did not try the store the catalog found down").isEqualTo(reached);
        assertThat(c.metrics().readErrors.sum()).isEqualTo(1);
    }

    @Test
    void aThrottlingStoreIsRetriedAndReachableOnceItAnswers() throws InterruptedException {
        BlobRef a = TestBlobs.put(store, TestBlobs.bytes(MIB, 3), MIB);
        BlockCache c = open();
        store.on(FaultStore.Call.READ).times(2).fail(FaultStore.Fault.UNAVAILABLE);
        byte[] out = new byte[100];
        assertThat(c.read(a, 0, out, 0, out.length)).isEqualTo(out.length);
        // The reader has its block as soon as it streamed in; the GET's end is told after.
        assertThat(c.awaitIdle(Duration.ofSeconds(10))).isTrue();
        StoreHealth.Snapshot s = health.snapshot();
        assertThat(s.failures()).as("each failed attempt told").isEqualTo(2);
        assertThat(s.reachable()).as("two 5xx the read rode out are no outage").isTrue();
        assertThat(s.outages()).isZero();
        assertThat(c.metrics().retries.sum()).isEqualTo(2);
    }

    @Test
    void theOfflineHealthOfLocalModeLearnsNothing() {
        StoreHealth offline = StoreHealth.offline("s3://bucket (offline: --mode local)");
        long started = offline.enter();
        offline.ended(started, new StoreUnavailableException("not contacted", null));
        assertThat(offline.snapshot().failures()).isZero();
        assertThat(offline.snapshot().outage()).isEmpty();
    }
}
