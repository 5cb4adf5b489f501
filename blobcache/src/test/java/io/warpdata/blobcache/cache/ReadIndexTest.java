package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warpdata.store.FaultStore;
import io.warpdata.store.FaultStore.Call;
import io.warpdata.store.InMemoryBlobStore;
import io.warpdata.store.ObjectTooLargeException;
import io.warpdata.store.StoreLayout;
import io.warpdata.store.StoreUnavailableException;
import io.warpdata.manifest.BlobRef;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@link BlockCache#readIndex}: a member index on first touch comes whole in one GET, checked against its id. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReadIndexTest {
    private static final int BS = 64 * 1024;

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

    private BlockCache open(CacheMode mode, Duration deadline) {
        BlockCache c = new BlockCache(store, CacheConfig.defaults(dir).withMode(mode).withMinFreeBytes(0)
                .withMaxBytes(64L << 20).withRetry(new RetryPolicy(Duration.ofMillis(1), Duration.ofMillis(10), deadline)),
                pool);
        caches.add(c);
        return c;
    }

    private BlockCache open() {
        return open(CacheMode.AUTO, Duration.ofSeconds(10));
    }

    private static void await(BooleanSupplier condition) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waited 10 s").isLessThan(until);
            Thread.sleep(5);
        }
    }

    @Test
    void indexNeverReadComesWholeInOneGetAndItsBlocksAreCachedOnceItsListIsIn() throws InterruptedException {
        byte[] index = TestBlobs.bytes(3 * BS - 100, 1);
        BlobRef ref = TestBlobs.put(memory, index, BS);
        BlockCache c = open();

        assertThat(c.readIndex(ref)).isEqualTo(index);

        assertThat(store.calls(Call.GET, StoreLayout.blob(ref.id()))).as("whole GETs of the index").isEqualTo(1);
        assertThat(store.calls(Call.READ, StoreLayout.blob(ref.id()))).as("ranged reads of the index").isZero();
        await(() -> c.stats().blocks() == 3);
        assertThat(store.calls(Call.GET, StoreLayout.blob(ref.blocks()))).as("its block hash list, loaded alongside").isEqualTo(1);
        long requests = store.calls(Call.GET, Call.READ);
        byte[] again = new byte[index.length];
        assertThat(c.read(ref, 0, again, 0, again.length)).isEqualTo(index.length);
        assertThat(again).isEqualTo(index);
        assertThat(c.readIndex(ref)).isEqualTo(index);
        assertThat(store.calls(Call.GET, Call.READ)).as("store requests once it is cached").isEqualTo(requests);
    }

    @Test
    void aOneBlockIndexCostsOneGetItsListIsDerivedNotFetched() throws InterruptedException {
        // An index part (~0.8 MB of 8,192 members) is one block of the default size: its list
        // is [its own id], checked against the list's id, so the store sees the part's GET only.
        byte[] part = TestBlobs.bytes(700_000, 4);
        BlobRef ref = TestBlobs.put(memory, part, io.warpdata.manifest.BlockHashList.DEFAULT_BLOCK_SIZE);
        memory.put(StoreLayout.blob(ref.blocks()), new byte[] {'x'}); // never read: a poisoned list key
        BlockCache c = open();

        assertThat(c.readIndex(ref)).isEqualTo(part);

        await(() -> c.stats().blocks() == 1);
        assertThat(store.calls(Call.GET, StoreLayout.blob(ref.id()))).as("the part's GET").isEqualTo(1);
        assertThat(store.calls(Call.GET, StoreLayout.blob(ref.blocks()))).as("GETs of its list").isZero();
        assertThat(store.calls(Call.GET, Call.READ)).as("all store requests").isEqualTo(1);
        c.close();
        caches.remove(c);

        BlockCache offline = open(CacheMode.LOCAL, Duration.ofSeconds(10));
        assertThat(offline.readIndex(ref)).as("served from the cache in local mode (no fetch), list and all").isEqualTo(part);
    }

    @Test
    void partsReadIntoASinkComeIntoOneReusedBufferOneRequestEachAndTheirBlocksAreCachedFirst() {
        // Parts of up to 1 MiB: each one a "humongous" array for G1 if fetched into its own.
        int bs = io.warpdata.manifest.BlockHashList.DEFAULT_BLOCK_SIZE;
        byte[] part = TestBlobs.bytes(1_000_000, 6);
        BlobRef ref = TestBlobs.put(memory, part, bs);
        byte[] other = TestBlobs.bytes(900_000, 7);
        BlobRef ref2 = TestBlobs.put(memory, other, bs);
        memory.put(StoreLayout.blob(ref.blocks()), new byte[] {'x'}); // never read: lists are derived
        BlockCache c = open();
        List<byte[]> buffers = new ArrayList<>();
        List<byte[]> seen = new ArrayList<>();
        BlobReader.IndexSink sink = (b, len) -> {
            buffers.add(b);
            seen.add(Arrays.copyOf(b, len));
        };

        c.readIndex(ref, BlobReader.IndexBlocks.CACHE, sink);
        c.readIndex(ref2, BlobReader.IndexBlocks.CACHE, sink);

        assertThat(seen.get(0)).isEqualTo(part);
        assertThat(seen.get(1)).isEqualTo(other);
        assertThat(buffers.get(0).length).as("a pooled buffer of one block, not an array of the part's size").isEqualTo(bs);
        assertThat(buffers.get(1)).as("the same buffer, reused").isSameAs(buffers.get(0));
        assertThat(store.calls(Call.GET, Call.READ)).as("one request a part, lists derived").isEqualTo(2);
        assertThat(c.stats().blocks()).as("each part's block cached before its buffer was reused").isEqualTo(2);
        c.close();
        caches.remove(c);

        BlockCache offline = open(CacheMode.LOCAL, Duration.ofSeconds(10));
        assertThat(offline.readIndex(ref)).as("the cached blocks hold each part's own bytes").isEqualTo(part);
        assertThat(offline.readIndex(ref2)).isEqualTo(other);
    }

    /**
     * Audit 35: warpd's catalog keeps each index part it fetches as a file, and the block cache
     * kept it again as blocks (a 32 MB cache held 31 MB of index parts after one find). Told not
     * to, the cache keeps no block of it, and fetches nothing more than the part.
     */
    @Test
    void anIndexItsCallerKeepsIsNotCachedAsBlocksToo() {
        int bs = io.warpdata.manifest.BlockHashList.DEFAULT_BLOCK_SIZE;
        byte[] part = TestBlobs.bytes(1_000_000, 12);
        BlobRef ref = TestBlobs.put(memory, part, bs);
        byte[] big = TestBlobs.bytes(3 * bs + 5, 13); // more than a pooled buffer: read into its own array
        BlobRef bigRef = TestBlobs.put(memory, big, bs);
        BlockCache c = open();
        List<byte[]> seen = new ArrayList<>();
        c.readIndex(ref, BlobReader.IndexBlocks.CALLER_KEEPS, (b, len) -> seen.add(Arrays.copyOf(b, len)));
        c.readIndex(bigRef, BlobReader.IndexBlocks.CALLER_KEEPS, (b, len) -> seen.add(Arrays.copyOf(b, len)));
        assertThat(seen.get(0)).isEqualTo(part);
        assertThat(seen.get(1)).isEqualTo(big);
        // A cached blob's blocks would be written once its list came, after these calls returned: wait a little.
        long until = System.nanoTime() + 500_000_000L;
        while (System.nanoTime() < until && store.calls(Call.GET, Call.READ) == 2 && c.stats().blocks() == 0) {
            Thread.onSpinWait();
        }
        assertThat(store.calls(Call.GET, Call.READ)).as("one request each, no list fetched").isEqualTo(2);
        assertThat(c.stats().blocks()).as("no block of them kept").isZero();
    }

    @Test
    void wrongBytesForASinkAreFetchedTwiceThenRefusedAndTheSinkNeverSeesThem() {
        int bs = io.warpdata.manifest.BlockHashList.DEFAULT_BLOCK_SIZE;
        byte[] part = TestBlobs.bytes(600_000, 8);
        BlobRef ref = TestBlobs.put(memory, part, bs);
        byte[] wrong = part.clone();
        wrong[4000] ^= 1;
        memory.put(StoreLayout.blob(ref.id()), wrong);
        BlockCache c = open();
        List<Integer> seen = new ArrayList<>();

        assertThatThrownBy(() -> c.readIndex(ref, BlobReader.IndexBlocks.CACHE, (b, len) -> seen.add(len))).isInstanceOf(BlockVerificationException.class)
                .hasMessageContaining(ref.id().toString());
        assertThat(seen).isEmpty();
        assertThat(store.calls(Call.READ, StoreLayout.blob(ref.id()))).isEqualTo(2);
        assertThat(c.metrics().verificationFailures.sum()).isEqualTo(2);
        assertThat(c.stats().blocks()).isZero();
    }

    @Test
    void aSinkReadThatNeverAnswersFailsAtTheReadDeadline() {
        byte[] part = TestBlobs.bytes(5000, 9);
        BlobRef ref = TestBlobs.put(memory, part, io.warpdata.manifest.BlockHashList.DEFAULT_BLOCK_SIZE);
        store.on(Call.READ).keys(StoreLayout.blob(ref.id())).gate();
        BlockCache c = open(CacheMode.AUTO, Duration.ofMillis(500));
        List<Integer> seen = new ArrayList<>();

        long start = System.nanoTime();
        assertThatThrownBy(() -> c.readIndex(ref, BlobReader.IndexBlocks.CACHE, (b, len) -> seen.add(len))).isInstanceOf(StoreUnavailableException.class);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
        assertThat(seen).isEmpty();
    }

    @Test
    void aOneBlockBlobWhoseListHasAnotherBlockSizeStillFetchesIt() throws InterruptedException {
        byte[] blob = TestBlobs.bytes(5000, 5);
        BlobRef ref = TestBlobs.put(memory, blob, BS);
        BlockCache c = open();

        assertThat(c.readIndex(ref)).isEqualTo(blob);

        await(() -> c.stats().blocks() == 1);
        assertThat(store.calls(Call.GET, StoreLayout.blob(ref.blocks()))).as("GETs of its list").isEqualTo(1);
    }

    @Test
    void indexWhoseListIsKeptOnDiskIsReadFromTheCache() throws InterruptedException {
        byte[] index = TestBlobs.bytes(2 * BS + 7, 2);
        BlobRef ref = TestBlobs.put(memory, index, BS);
        BlockCache first = open();
        first.readIndex(ref);
        await(() -> first.stats().blocks() == 3);
        first.close();
        caches.remove(first);
        long requests = store.calls(Call.GET, Call.READ);

        BlockCache second = open();
        assertThat(second.readIndex(ref)).isEqualTo(index);
        assertThat(store.calls(Call.GET, Call.READ)).as("store requests after a restart").isEqualTo(requests);
    }

    @Test
    void wrongBytesAtTheIndexKeyAreFetchedTwiceThenRefused() {
        byte[] index = TestBlobs.bytes(5000, 3);
        BlobRef ref = TestBlobs.put(memory, index, BS);
        byte[] wrong = index.clone();
        wrong[4000] ^= 1;
        memory.put(StoreLayout.blob(ref.id()), wrong);
        BlockCache c = open();

        assertThatThrownBy(() -> c.readIndex(ref)).isInstanceOf(BlockVerificationException.class)
                .hasMessageContaining(ref.id().toString());
        assertThat(store.calls(Call.GET, StoreLayout.blob(ref.id()))).isEqualTo(2);
        assertThat(c.metrics().verificationFailures.sum()).isEqualTo(2);
        assertThat(c.stats().blocks()).isZero();
    }

    @Test
    void largerObjectAtTheIndexKeyIsRefused() {
        byte[] index = TestBlobs.bytes(5000, 4);
        BlobRef ref = TestBlobs.put(memory, index, BS);
        memory.put(StoreLayout.blob(ref.id()), Arrays.copyOf(index, 9000));
        BlockCache c = open();

        assertThatThrownBy(() -> c.readIndex(ref)).isInstanceOf(ObjectTooLargeException.class);
    }

    @Test
    void indexGetThatNeverAnswersFailsAtTheReadDeadline() {
        byte[] index = TestBlobs.bytes(5000, 5);
        BlobRef ref = TestBlobs.put(memory, index, BS);
        store.on(Call.GET).keys(StoreLayout.blob(ref.id())).gate();
        BlockCache c = open(CacheMode.AUTO, Duration.ofMillis(500));

        long start = System.nanoTime();
        assertThatThrownBy(() -> c.readIndex(ref)).isInstanceOf(StoreUnavailableException.class);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    }

    @Test
    void localModeReadsTheIndexOnlyFromTheCache() {
        byte[] index = TestBlobs.bytes(5000, 6);
        BlobRef ref = TestBlobs.put(memory, index, BS);
        BlockCache c = open(CacheMode.LOCAL, Duration.ofSeconds(10));

        assertThatThrownBy(() -> c.readIndex(ref)).isInstanceOf(BlockNotCachedException.class);
        assertThat(store.calls(Call.GET, Call.READ)).isZero();
    }
}
