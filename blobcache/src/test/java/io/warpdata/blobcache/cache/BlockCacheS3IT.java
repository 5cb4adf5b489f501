package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warpdata.store.BlobStore;
import io.warpdata.store.S3ProxyFixture;
import io.warpdata.store.StoreUnavailableException;
import io.warpdata.store.s3.S3BlobStore;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The block cache against a real S3 server (S3Proxy on loopback), requests counted at the server. */
class BlockCacheS3IT {
    private static final int BS = BlockHashList.DEFAULT_BLOCK_SIZE;
    private static S3ProxyFixture s3;

    @TempDir
    Path dir;

    private BlobStore store;

    @BeforeAll
    static void startServer() {
        s3 = S3ProxyFixture.start();
    }

    @AfterAll
    static void stopServer() {
        if (s3 != null) {
            s3.close();
        }
    }

    @AfterEach
    void tearDown() {
        s3.faults().clear();
        if (store != null) {
            store.close();
        }
    }

    private BlobStore store(String prefix) {
        // Few, quick SDK retries so that this layer's own retries and deadline are what is tested.
        store = s3.openStore(prefix, S3BlobStore.Config.defaults()
                .withTimeouts(Duration.ofSeconds(5), Duration.ofSeconds(10))
                .withRetries(1, Duration.ofMillis(10), Duration.ofMillis(50)));
        return store;
    }

    private CacheConfig config() {
        return CacheConfig.defaults(dir).withMinFreeBytes(0).withMaxBytes(256L << 20)
                .withRetry(new RetryPolicy(Duration.ofMillis(10), Duration.ofMillis(200), Duration.ofSeconds(20)));
    }

    @Test
    void readingTwiceAndAfterRestartGetsOnlyTheFirstTime() throws Exception {
        BlobStore st = store("twice");
        byte[] data = TestBlobs.bytes(6 * BS + 12345, 1);
        BlobRef ref = TestBlobs.put(st, data, BS);
        s3.resetCounters();
        try (BlockCache c = BlockCache.open(st, config())) {
            assertThat(c.readAll(ref)).isEqualTo(data);
            long gets = s3.counters().gets();
            assertThat(gets).isPositive();
            assertThat(s3.counters().bytesServed()).isLessThan(data.length + 4096L);
            assertThat(c.readAll(ref)).isEqualTo(data);
            assertThat(s3.counters().gets()).isEqualTo(gets);
            assertThat(c.awaitIdle(Duration.ofSeconds(10))).isTrue();
        }
        s3.resetCounters();
        try (BlockCache again = BlockCache.open(st, config())) {
            assertThat(again.readAll(ref)).isEqualTo(data);
        }
        assertThat(s3.counters().gets()).as("GETs after a restart").isZero();
    }

    @Test
    void memberOfColdShardFetchesAboutItsBytes() {
        BlobStore st = store("member");
        byte[] shard = TestBlobs.bytes(32 * BS, 2);
        BlobRef ref = TestBlobs.put(st, shard, BS);
        s3.resetCounters();
        try (BlockCache c = BlockCache.open(st, config())) {
            byte[] member = new byte[150_000];
            c.read(ref, 17L * BS + 1000, member, 0, member.length);
            assertThat(member).isEqualTo(Arrays.copyOfRange(shard, 17 * BS + 1000, 17 * BS + 1000 + member.length));
        }
        assertThat(s3.counters().bytesServed()).as("bytes served for a 150 KB member of a 32 MiB shard")
                .isLessThanOrEqualTo(BS + 64 * 1024L);
    }

    @Test
    void corruptedAnd5xxGetsAreRetriedAndServedRight() {
        BlobStore st = store("faults");
        byte[] data = TestBlobs.bytes(4 * BS, 3);
        BlobRef ref = TestBlobs.put(st, data, BS);
        try (BlockCache c = BlockCache.open(st, config().withMaxPrefetchBytes(0))) {
            c.read(ref, 0, new byte[1], 0, 1);
            s3.faults().corruptNextGets(1);
            assertThat(c.readAll(ref)).isEqualTo(data);
            assertThat(c.metrics().verificationFailures.sum()).isEqualTo(1);
        }
        try (BlockCache c = BlockCache.open(st, config().withMaxPrefetchBytes(0))) {
            c.gc(0);
            s3.faults().failNextGetsWith503(2).failNextGetsWith500(2);
            assertThat(c.readAll(ref)).isEqualTo(data);
        }
    }

    @Test
    void storeServingWrongBytesFailsTheReadNamingTheBlob() {
        BlobStore st = store("wrong");
        byte[] data = TestBlobs.bytes(2 * BS, 4);
        BlobRef ref = TestBlobs.put(st, data, BS);
        try (BlockCache c = BlockCache.open(st, config().withMaxPrefetchBytes(0))) {
            c.read(ref, 0, new byte[1], 0, 1);
            s3.faults().corruptNextGets(2);
            assertThatThrownBy(() -> c.read(ref, BS, new byte[10], 0, 10))
                    .isInstanceOf(BlockVerificationException.class).hasMessageContaining(ref.id().hex());
            assertThat(c.read(ref, BS, new byte[10], 0, 10)).as("a later read succeeds").isEqualTo(10);
        }
    }

    @Test
    void hangingServerFailsTheReadWithinTheDeadline() {
        BlobStore st = store("hang");
        byte[] data = TestBlobs.bytes(2 * BS, 5);
        BlobRef ref = TestBlobs.put(st, data, BS);
        try (BlockCache c = BlockCache.open(st, config().withRetry(
                new RetryPolicy(Duration.ofMillis(10), Duration.ofMillis(100), Duration.ofSeconds(2))))) {
            c.read(ref, 0, new byte[1], 0, 1);
            s3.faults().hangGets();
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> c.read(ref, BS, new byte[10], 0, 10))
                    .isInstanceOf(StoreUnavailableException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(6));
            assertThat(c.read(ref, 10, new byte[10], 0, 10)).as("cached bytes keep serving").isEqualTo(10);
            s3.faults().clear();
        }
    }
}
