package io.warpdata.blobcache.mirror;

import io.warpdata.store.FaultStore;
import io.warpdata.store.FaultStore.Call;
import io.warpdata.store.FaultStore.Fault;
import io.warpdata.store.InMemoryBlobStore;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class S3MirrorTest {
    static final String KEY = HttpMirrorTest.KEY;
    static final int BLOCK = 1024;

    private static byte[] blob(int size) {
        byte[] b = new byte[size];
        new Random(size).nextBytes(b);
        return b;
    }

    @Test
    void blocksFilledOneByOneAreReadBackAsARange() throws Exception {
        InMemoryBlobStore bucket = new InMemoryBlobStore();
        byte[] blob = blob(3 * BLOCK + 10);
        try (S3Mirror tier = new S3Mirror("s3://tier/warp", bucket, 1 << 20)) {
            MirrorRange tail = new MirrorRange(KEY, BLOCK, 2 * BLOCK + 10, BLOCK);
            assertFalse(tier.read(tail, new byte[tail.length()], 0), "nothing filled yet: a miss");
            tier.fill(tail, blob, BLOCK);
            assertTrue(tier.awaitFilled(Duration.ofSeconds(30)));
            assertEquals(3, tier.fillCounts().written());
            assertTrue(bucket.length(S3Mirror.blockKey(KEY, BLOCK, 3)).isPresent(), "the short last block is its own object");

            byte[] dst = new byte[tail.length()];
            assertTrue(tier.read(tail, dst, 0));
            assertArrayEquals(Arrays.copyOfRange(blob, BLOCK, blob.length), dst);
            assertFalse(tier.read(new MirrorRange(KEY, 0, 2 * BLOCK, BLOCK), new byte[2 * BLOCK], 0),
                    "block 0 was never filled: the range is a miss");
        }
    }

    @Test
    void wholeObjectsLiveUnderTheirStoreKey() throws Exception {
        InMemoryBlobStore bucket = new InMemoryBlobStore();
        String object = "blobs/sha256/aa/" + "a".repeat(64);
        try (S3Mirror tier = new S3Mirror("s3://tier/warp", bucket, 1 << 20)) {
            assertEquals(Optional.empty(), tier.get(object, 1000));
            tier.fillObject(object, "{}".getBytes());
            tier.fillObject(object, "{}".getBytes());
            assertTrue(tier.awaitFilled(Duration.ofSeconds(30)));
            assertArrayEquals("{}".getBytes(), bucket.get(object));
            assertArrayEquals("{}".getBytes(), tier.get(object, 1000).orElseThrow());
            assertEquals(1, tier.fillCounts().written(), "a second fill of the same key writes nothing (put-if-absent)");
        }
    }

    @Test
    void aCopyThatFailedVerificationIsWrittenOverByTheNextFill() throws Exception {
        InMemoryBlobStore bucket = new InMemoryBlobStore();
        byte[] blob = blob(2 * BLOCK);
        String block1 = S3Mirror.blockKey(KEY, BLOCK, 1);
        String object = "blobs/sha256/bb/" + "b".repeat(64);
        try (S3Mirror tier = new S3Mirror("s3://tier/warp", bucket, 1 << 20)) {
            tier.fill(new MirrorRange(KEY, 0, 2 * BLOCK, BLOCK), blob, 0);
            tier.fillObject(object, "right".getBytes());
            assertTrue(tier.awaitFilled(Duration.ofSeconds(30)));
            bucket.put(block1, new byte[BLOCK]); // damaged in the tier
            bucket.put(object, "wrong".getBytes());

            // Without a rejection a fill keeps what is there (put-if-absent) ...
            tier.fill(new MirrorRange(KEY, BLOCK, BLOCK, BLOCK), blob, BLOCK);
            assertTrue(tier.awaitFilled(Duration.ofSeconds(30)));
            assertArrayEquals(new byte[BLOCK], bucket.get(block1));
            assertEquals(3, tier.fillCounts().written());

            // ... after one, the next verified fill repairs the copy, once.
            tier.rejected(KEY, BLOCK + 10, 100, BLOCK);
            tier.rejected(object, -1, 0, 0);
            tier.fill(new MirrorRange(KEY, BLOCK, BLOCK, BLOCK), blob, BLOCK);
            tier.fillObject(object, "right".getBytes());
            assertTrue(tier.awaitFilled(Duration.ofSeconds(30)));
            assertArrayEquals(java.util.Arrays.copyOfRange(blob, BLOCK, 2 * BLOCK), bucket.get(block1));
            assertArrayEquals("right".getBytes(), bucket.get(object));
            assertEquals(5, tier.fillCounts().written());
        }
    }

    /**
     * A tier with one damaged copy may hold more that no read of this node has looked at (it reads
     * the store while the tier is skipped): two nodes reading all of 70 damaged objects left 66
     * damaged. After a damaged copy is found, every fill overwrites for the tier's backoff.
     */
    @Test
    void afterADamagedCopyIsFoundFillsOverwriteCopiesNobodyRejected() throws Exception {
        InMemoryBlobStore bucket = new InMemoryBlobStore();
        byte[] blob = blob(3 * BLOCK);
        try (S3Mirror tier = new S3Mirror("s3://tier/warp", bucket, 1 << 20)) {
            tier.fill(new MirrorRange(KEY, 0, 3 * BLOCK, BLOCK), blob, 0);
            assertTrue(tier.awaitFilled(Duration.ofSeconds(30)));
            for (int b = 0; b < 3; b++) {
                bucket.put(S3Mirror.blockKey(KEY, BLOCK, b), new byte[BLOCK]); // every copy damaged
            }
            tier.rejected(KEY, 0, BLOCK, BLOCK); // a read found block 0's
            tier.fill(new MirrorRange(KEY, 0, 3 * BLOCK, BLOCK), blob, 0); // read from the store meanwhile
            assertTrue(tier.awaitFilled(Duration.ofSeconds(30)));
            for (int b = 0; b < 3; b++) {
                assertArrayEquals(Arrays.copyOfRange(blob, b * BLOCK, (b + 1) * BLOCK),
                        bucket.get(S3Mirror.blockKey(KEY, BLOCK, b)), "block " + b + " repaired");
            }
        }
    }

    @Test
    void aFullQueueDropsOffersInsteadOfWaiting() throws Exception {
        FaultStore slow = new FaultStore();
        FaultStore.Rule held = slow.on(Call.PUT).gate();
        byte[] blob = blob(8 * BLOCK);
        try (S3Mirror tier = new S3Mirror("s3://tier/warp", slow, 3 * BLOCK)) {
            tier.fill(new MirrorRange(KEY, 0, 8 * BLOCK, BLOCK), blob, 0);
            Mirror.FillCounts counts = tier.fillCounts();
            // One block may already be taken by the writer; at most 3 blocks' bytes wait.
            assertTrue(counts.queuedBytes() <= 3 * BLOCK, counts.toString());
            assertTrue(counts.dropped() >= 4, counts.toString());
            held.release();
            assertTrue(tier.awaitFilled(Duration.ofSeconds(30)));
            assertEquals(8, tier.fillCounts().written() + tier.fillCounts().dropped());
        }
    }

    @Test
    void failedWritesAreCountedNotThrown() throws Exception {
        FaultStore failing = new FaultStore();
        failing.on(Call.PUT).fail(Fault.UNAVAILABLE);
        try (S3Mirror tier = new S3Mirror("s3://tier/warp", failing, 1 << 20)) {
            tier.fill(new MirrorRange(KEY, 0, 2 * BLOCK, BLOCK), blob(2 * BLOCK), 0);
            assertTrue(tier.awaitFilled(Duration.ofSeconds(30)));
            assertEquals(2, tier.fillCounts().failed());
            assertEquals(0, tier.fillCounts().written());
        }
    }

    /**
     * A tier whose GETs send a byte every 20 ms: never silent, so its socket timeout never fires,
     * but far slower than the 1 MiB/s an answer must keep up with past its grace (here 200 ms).
     */
    @Test
    void aBucketThatDripsIsGivenUpInsideABlock() throws Exception {
        FaultStore dripping = new FaultStore();
        dripping.on(Call.READ).pieces(1).pace(50); // a byte every 20 ms
        int block = 64 * 1024;
        try (S3Mirror tier = new S3Mirror("s3://tier/warp", dripping, 1 << 20, Duration.ofMillis(200))) {
            MirrorRange range = new MirrorRange(KEY, 0, block, block);
            tier.fill(range, blob(block), 0);
            assertTrue(tier.awaitFilled(Duration.ofSeconds(30)));
            long start = System.nanoTime();
            MirrorException e = assertThrows(MirrorException.class, () -> tier.read(range, new byte[block], 0));
            assertEquals(MirrorException.Kind.TIMEOUT, e.kind());
            assertTrue(e.getMessage().contains("slower than 1 MiB/s"), e.getMessage());
            // 64 KiB at a byte per 20 ms would take 22 minutes; the pace gives up after the grace.
            assertTrue(System.nanoTime() - start < Duration.ofSeconds(5).toNanos(), "given up in time");
        }
    }

    @Test
    void readErrorsOfTheBucketAreMirrorFailures() {
        FaultStore failing = new FaultStore();
        failing.on(Call.READ).fail(Fault.UNAVAILABLE);
        try (S3Mirror tier = new S3Mirror("s3://tier/warp", failing, 1 << 20)) {
            assertEquals(MirrorException.Kind.STATUS, assertThrows(MirrorException.class,
                    () -> tier.read(new MirrorRange(KEY, 0, BLOCK, BLOCK), new byte[BLOCK], 0)).kind());
        }
    }
}
