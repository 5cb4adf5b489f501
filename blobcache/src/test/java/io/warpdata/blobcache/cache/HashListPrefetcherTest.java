package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.warpdata.store.FaultStore;
import io.warpdata.store.FaultStore.Call;
import io.warpdata.store.FaultStore.Fault;
import io.warpdata.store.InMemoryBlobStore;
import io.warpdata.store.StoreLayout;
import io.warpdata.manifest.BlobRef;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@link BlockCache#prefetchHashLists}: lists loaded before reads ask, within bounds. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HashListPrefetcherTest {
    private static final int BS = 4096;

    @TempDir
    Path dir;

    private final InMemoryBlobStore memory = new InMemoryBlobStore();
    private final FaultStore store = new FaultStore(memory);
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private final List<BlockCache> caches = new ArrayList<>();

    @AfterEach
    void tearDown() throws InterruptedException {
        store.clear();
        caches.forEach(BlockCache::close);
        pool.shutdownNow();
        pool.awaitTermination(10, TimeUnit.SECONDS);
    }

    private BlockCache open(CacheMode mode) {
        BlockCache c = new BlockCache(store, CacheConfig.defaults(dir).withMode(mode).withMinFreeBytes(0)
                .withMaxBytes(64L << 20).withRetry(new RetryPolicy(Duration.ofMillis(1), Duration.ofMillis(10),
                        Duration.ofSeconds(10))), pool);
        caches.add(c);
        return c;
    }

    private List<BlobRef> blobs(int n, int seed) {
        List<BlobRef> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(TestBlobs.put(memory, TestBlobs.bytes(3 * BS + i, seed + i), BS));
        }
        return out;
    }

    private static void await(BooleanSupplier condition) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waited 10 s").isLessThan(until);
            Thread.sleep(5);
        }
    }

    @Test
    void aPrefetchedListServesTheFirstReadWhichFetchesOnlyItsBlock() throws InterruptedException {
        BlobRef shard = blobs(1, 1).get(0);
        BlockCache c = open(CacheMode.AUTO);

        c.prefetchHashLists(List.of(shard));
        await(() -> c.metrics().getsIssued.sum() == 1 && store.inFlight(Call.GET) == 0);
        byte[] one = new byte[1];
        c.read(shard, 2 * BS + 5, one, 0, 1);

        assertThat(store.calls(Call.GET, StoreLayout.blob(shard.blocks()))).as("GETs of the list").isEqualTo(1);
        assertThat(store.calls(Call.READ, StoreLayout.blob(shard.id()))).as("ranged reads of the shard").isEqualTo(1);
    }

    @Test
    void aReadWaitsForTheListBeingPrefetchedInsteadOfFetchingItAgain() throws Exception {
        BlobRef shard = blobs(1, 2).get(0);
        FaultStore.Rule gate = store.on(Call.GET).keys(StoreLayout.blob(shard.blocks())).gate();
        BlockCache c = open(CacheMode.AUTO);
        c.prefetchHashLists(List.of(shard));
        await(() -> store.inFlight(Call.GET) == 1);

        var read = pool.submit(() -> c.read(shard, 0, new byte[10], 0, 10));
        Thread.sleep(100);
        gate.release();

        assertThat(read.get(10, TimeUnit.SECONDS)).isEqualTo(10);
        assertThat(store.calls(Call.GET, StoreLayout.blob(shard.blocks()))).isEqualTo(1);
    }

    @Test
    void atMostSixteenListsLoadAtOnceAndTheRestFollow() throws InterruptedException {
        List<BlobRef> shards = blobs(40, 3);
        FaultStore.Rule gate = store.on(Call.GET).gate();
        BlockCache c = open(CacheMode.AUTO);

        c.prefetchHashLists(shards);
        await(() -> store.inFlight(Call.GET) == HashListPrefetcher.IN_FLIGHT);
        Thread.sleep(100);
        assertThat(store.peakInFlight(Call.GET)).isEqualTo(HashListPrefetcher.IN_FLIGHT);
        gate.release();

        await(() -> store.calls(Call.GET) == 40 && store.inFlight(Call.GET) == 0);
        assertThat(store.peakInFlight(Call.GET)).isEqualTo(HashListPrefetcher.IN_FLIGHT);
        for (BlobRef s : shards) {
            assertThat(store.calls(Call.GET, StoreLayout.blob(s.blocks()))).isEqualTo(1);
        }
    }

    @Test
    void aReadNeedingAListStillQueuedLoadsItWithoutWaitingForTheQueue() throws Exception {
        List<BlobRef> shards = blobs(20, 4);
        store.on(Call.GET).keys(shards.subList(0, HashListPrefetcher.IN_FLIGHT).stream()
                .map(s -> StoreLayout.blob(s.blocks())).toArray(String[]::new)).gate();
        BlockCache c = open(CacheMode.AUTO);
        c.prefetchHashLists(shards);
        await(() -> store.inFlight(Call.GET) == HashListPrefetcher.IN_FLIGHT);

        BlobRef last = shards.get(19);
        assertThat(c.read(last, 0, new byte[10], 0, 10)).isEqualTo(10);
        assertThat(store.calls(Call.GET, StoreLayout.blob(last.blocks()))).isEqualTo(1);
    }

    @Test
    void blobsWhoseListCouldTakeMoreThanTheBoundAreNotPrefetched() throws InterruptedException {
        BlobRef small = blobs(1, 5).get(0);
        // 9 GiB claimed: at the smallest block size its list could take 72 MiB.
        BlobRef huge = new BlobRef(small.id(), 9L << 30, small.blocks());
        BlockCache c = open(CacheMode.AUTO);

        c.prefetchHashLists(List.of(huge));
        Thread.sleep(100);

        assertThat(store.calls(Call.GET)).isZero();
    }

    @Test
    void aStoreThatCannotBeReachedPausesPrefetching() throws InterruptedException {
        store.on(Call.GET).fail(Fault.UNREACHABLE);
        BlockCache c = open(CacheMode.AUTO);

        c.prefetchHashLists(blobs(40, 7));
        await(() -> store.calls(Call.GET) > 0 && store.inFlight(Call.GET) == 0);
        Thread.sleep(100);
        long tried = store.calls(Call.GET);
        c.prefetchHashLists(blobs(40, 50));
        Thread.sleep(100);

        assertThat(tried).as("lists tried before the pause").isLessThanOrEqualTo(HashListPrefetcher.IN_FLIGHT);
        assertThat(store.calls(Call.GET)).as("lists tried in all").isEqualTo(tried);
    }

    @Test
    void localModePrefetchesNothing() throws InterruptedException {
        BlockCache c = open(CacheMode.LOCAL);

        c.prefetchHashLists(blobs(3, 6));
        Thread.sleep(100);

        assertThat(store.calls(Call.GET)).isZero();
    }
}
