package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;
import io.warpdata.store.BlobStore;
import io.warpdata.store.InMemoryBlobStore;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Remote tiers ({@link RemoteTier}, the slot issue 25's mirrors plug into): untrusted, tried in
 * order between the local tiers and the store, every byte checked before a reader sees it; a
 * tier that fails or serves a wrong byte falls through to the next, then to the store, within
 * the same read. Fakes here serve the store's own bytes, broken on purpose.
 */
class RemoteTiersTest {
    private static final int MIB = BlockHashList.DEFAULT_BLOCK_SIZE;
    private static final RetryPolicy FAST =
            new RetryPolicy(Duration.ofMillis(1), Duration.ofMillis(10), Duration.ofSeconds(10));

    @TempDir
    Path dir;

    private final InMemoryBlobStore memory = new InMemoryBlobStore();
    private final FaultyStore store = new FaultyStore(memory);
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private final List<BlockCache> caches = new ArrayList<>();

    /** A mirror over the store's keys: serves them right, flips a byte, or fails; counts its reads. */
    private static final class FakeMirror implements RemoteTier {
        enum Kind { GOOD, CORRUPT, FAILING }

        final String name;
        final Kind kind;
        final BlobStore origin;
        final AtomicInteger reads = new AtomicInteger();

        FakeMirror(String name, Kind kind, BlobStore origin) {
            this.name = name;
            this.kind = kind;
            this.origin = origin;
        }

        @Override
        public String describe() {
            return name;
        }

        @Override
        public void read(String key, long offset, byte[] dst, int dstOff, int len) {
            reads.incrementAndGet();
            if (kind == Kind.FAILING) {
                throw new IllegalStateException("HTTP 502 from " + name + " (injected)");
            }
            origin.read(key, offset, dst, dstOff, len);
            if (kind == Kind.CORRUPT && len > 0) {
                dst[dstOff + len - 1] ^= 1;
            }
        }
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        caches.forEach(BlockCache::close);
        pool.shutdownNow();
        pool.awaitTermination(10, TimeUnit.SECONDS);
    }

    private BlockCache open(List<RemoteTier> remotes) {
        CacheConfig cfg = CacheConfig.defaults(dir).withMinFreeBytes(0).withMaxBytes(256L << 20).withRetry(FAST);
        BlockCache c = new BlockCache(store, cfg, pool, null, null, OrderPrefetcher.MAX_PLAN_BYTES, remotes);
        caches.add(c);
        return c;
    }

    private static byte[] read(BlockCache c, BlobRef blob, long offset, int len) {
        byte[] out = new byte[len];
        assertThat(c.read(blob, offset, out, 0, len)).isEqualTo(len);
        return out;
    }

    @Test
    void aFailingThenACorruptMirrorFallThroughToTheStoreAndNoWrongByteIsServed() {
        byte[] data = TestBlobs.bytes(3 * MIB + 5000, 1);
        BlobRef blob = TestBlobs.put(memory, data, MIB);
        FakeMirror dead = new FakeMirror("http://dead/warp", FakeMirror.Kind.FAILING, memory);
        FakeMirror poisoned = new FakeMirror("http://poisoned/warp", FakeMirror.Kind.CORRUPT, memory);
        BlockCache c = open(List.of(dead, poisoned));

        assertThat(read(c, blob, 0, data.length)).isEqualTo(data);
        assertThat(read(c, blob, 0, data.length)).as("and what was cached is right too").isEqualTo(data);

        assertThat(dead.reads.get()).isPositive();
        assertThat(poisoned.reads.get()).as("tried after the dead one, every time").isEqualTo(dead.reads.get());
        assertThat(store.bytesRead.get()).as("the store served every block").isGreaterThanOrEqualTo(data.length);
        Map<String, Map<String, Long>> tiers = c.remoteTiers();
        assertThat(tiers.keySet()).containsExactly("http://dead/warp", "http://poisoned/warp");
        assertThat(tiers.get("http://dead/warp").get("errors")).isEqualTo(dead.reads.get());
        assertThat(tiers.get("http://poisoned/warp").get("verification_failures")).isEqualTo(poisoned.reads.get());
        assertThat(tiers.get("http://poisoned/warp").get("served_bytes")).isZero();
        assertThat(c.metrics().verificationFailures.sum()).as("a poisoned tier is visible").isPositive();
    }

    @Test
    void aGoodMirrorAfterACorruptOneServesEveryBlockAndTheStoreNone() {
        byte[] data = TestBlobs.bytes(2 * MIB + 77, 2);
        BlobRef blob = TestBlobs.put(memory, data, MIB);
        FakeMirror poisoned = new FakeMirror("poisoned", FakeMirror.Kind.CORRUPT, memory);
        FakeMirror good = new FakeMirror("good", FakeMirror.Kind.GOOD, memory);
        BlockCache c = open(List.of(poisoned, good));

        assertThat(read(c, blob, 0, data.length)).isEqualTo(data);

        assertThat(store.reads.get()).as("no ranged GET of the blob reached the store").isZero();
        assertThat(c.remoteTiers().get("good").get("served_bytes")).isEqualTo(data.length);
        assertThat(c.remoteTiers().get("poisoned").get("verification_failures")).isPositive();
        assertThat(c.metrics().missBytes.sum()).as("served by a fetch: a miss of the local tiers").isEqualTo(data.length);
    }

    @Test
    void aMemberFetchedOnItsOwnIsCheckedAgainstItsHashAndFallsThrough() {
        byte[] shard = TestBlobs.bytes(8 * MIB, 3);
        BlobRef blob = TestBlobs.put(memory, shard, MIB);
        long at = 5L * MIB + 300;
        byte[] content = Arrays.copyOfRange(shard, (int) at, (int) at + 30_000);
        BlobMember m = new BlobMember(blob, at, content.length, BlobId.of(content));
        FakeMirror poisoned = new FakeMirror("poisoned", FakeMirror.Kind.CORRUPT, memory);
        BlockCache c = open(List.of(poisoned));

        byte[] out = new byte[content.length];
        assertThat(c.readMember(m, 0, ByteBuffer.wrap(out))).isEqualTo(content.length);

        assertThat(out).isEqualTo(content);
        assertThat(c.metrics().memberFetches.sum()).isEqualTo(1);
        assertThat(c.remoteTiers().get("poisoned").get("verification_failures")).isEqualTo(1);
        assertThat(store.bytesRead.get()).as("the store served exactly the member").isEqualTo(content.length);
    }

    @Test
    void anIndexReadWholeComesFromAGoodMirrorVerifiedAgainstItsId() {
        byte[] index = TestBlobs.bytes(200_000, 4);
        BlobRef blob = TestBlobs.put(memory, index, MIB);
        FakeMirror dead = new FakeMirror("dead", FakeMirror.Kind.FAILING, memory);
        FakeMirror poisoned = new FakeMirror("poisoned", FakeMirror.Kind.CORRUPT, memory);
        FakeMirror good = new FakeMirror("good", FakeMirror.Kind.GOOD, memory);
        BlockCache c = open(List.of(dead, poisoned, good));

        assertThat(c.readIndex(blob)).isEqualTo(index);

        assertThat(c.remoteTiers().get("dead").get("errors")).isEqualTo(1);
        assertThat(c.remoteTiers().get("poisoned").get("verification_failures")).isEqualTo(1);
        assertThat(c.remoteTiers().get("good").get("served_bytes")).isEqualTo(index.length);
    }

    @Test
    void withNoRemoteTierNothingChanges() {
        byte[] data = TestBlobs.bytes(MIB + 1, 5);
        BlobRef blob = TestBlobs.put(memory, data, MIB);
        BlockCache c = open(List.of());
        assertThat(read(c, blob, 0, data.length)).isEqualTo(data);
        assertThat(c.remoteTiers()).isEmpty();
        assertThat(store.bytesRead.get()).isEqualTo(data.length);
    }
}
