package io.warpdata.blobcache.cache;

import io.warpdata.blobcache.mirror.HttpMirror;
import io.warpdata.blobcache.mirror.Mirror;
import io.warpdata.blobcache.mirror.MirrorRange;
import io.warpdata.blobcache.mirror.MirrorServer;
import io.warpdata.blobcache.mirror.MirrorTier;
import io.warpdata.blobcache.mirror.S3Mirror;
import io.warpdata.store.InMemoryBlobStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The mirror clients as remote tiers of the read plan, against a real HTTP server: order, a 404
 * as a miss, backoff with one probe, one timeout per backoff period for a hanging mirror, a
 * poisoned mirror skipped, a client's bug a failed mirror, fills only to tiers warpd fills. The
 * one implementation of all of this is {@link Remotes}.
 */
class MirrorTiersTest {
    static final String KEY = "blobs/sha256/ab/ab" + "0".repeat(62);
    static final int BLOCK = 1024;
    static final Duration BACKOFF = Duration.ofSeconds(30);

    final AtomicLong now = new AtomicLong(1_000_000_000L);
    MirrorServer first;
    MirrorServer second;
    Remotes mirrors;
    byte[] blob;

    @BeforeEach
    void start() throws Exception {
        first = new MirrorServer();
        second = new MirrorServer();
        blob = new byte[4 * BLOCK];
        new Random(11).nextBytes(blob);
        first.objects.put(KEY, blob);
        second.objects.put(KEY, blob);
        mirrors = mirrors(Duration.ofSeconds(10));
    }

    @AfterEach
    void stop() {
        mirrors.close();
        first.close();
        second.close();
    }

    /** The two mirrors; the first with its own timeout (the second must answer: 10 s on a loaded machine). */
    private Remotes mirrors(Duration firstTimeout) {
        return remotes(List.of(new HttpMirror(first.base(), firstTimeout), new HttpMirror(second.base(), Duration.ofSeconds(10))));
    }

    private Remotes remotes(List<Mirror> list) {
        return new Remotes(list.stream().map(m -> (RemoteTier) new MirrorTier(m, Duration.ofSeconds(2))).toList(), new ReadMetrics(), BACKOFF, now::get);
    }

    /** The index of the tier that served the block (verified), or empty: the store would be read. */
    private Optional<Integer> readBlock(int index) {
        return readBlock(mirrors, index);
    }

    private Optional<Integer> readBlock(Remotes r, int index) {
        byte[] dst = new byte[BLOCK];
        List<RemoteTierStats> before = r.snapshot();
        byte[] right = Arrays.copyOfRange(blob, index * BLOCK, (index + 1) * BLOCK);
        boolean served = r.read(KEY, (long) index * BLOCK, dst, 0, BLOCK, BLOCK, blob.length,
                (d, o, l) -> Arrays.equals(d, o, o + l, right, 0, l), System.nanoTime() + Duration.ofMinutes(1).toNanos());
        if (!served) {
            return Optional.empty();
        }
        assertArrayEquals(right, dst);
        List<RemoteTierStats> after = r.snapshot();
        for (int i = 0; i < after.size(); i++) {
            if (after.get(i).hits() > before.get(i).hits()) {
                return Optional.of(i);
            }
        }
        throw new AssertionError("served, but no tier counted a hit");
    }

    @Test
    void triesMirrorsInOrderAndCountsHitsAndMisses() {
        first.objects.clear();
        assertEquals(1, readBlock(0).orElseThrow());
        List<RemoteTierStats> stats = mirrors.snapshot();
        assertEquals(0, stats.get(0).hits());
        assertEquals(1, stats.get(0).misses());
        assertEquals("up", stats.get(0).state(), "a 404 is a miss, not a failure");
        assertEquals(1, stats.get(1).hits());
        assertEquals(BLOCK, stats.get(1).bytesServed());
        assertEquals(0.0, stats.get(0).hitRatio());
        assertEquals(1.0, stats.get(1).hitRatio());
    }

    @Test
    void aFailingMirrorIsSkippedForTheBackoffThenTriedOnceAndUsedAgain() {
        first.behaviour.set(MirrorServer.Behaviour.STATUS_500);
        assertEquals(1, readBlock(0).orElseThrow());
        for (int i = 0; i < 10; i++) {
            assertEquals(1, readBlock(i % 4).orElseThrow());
        }
        assertEquals(1, first.seen.size(), "a mirror in backoff is not asked");
        RemoteTierStats down = mirrors.snapshot().get(0);
        assertEquals("down", down.state());
        assertEquals(1, down.errors());
        assertEquals(10, down.skipped());

        first.behaviour.set(MirrorServer.Behaviour.SERVE);
        now.addAndGet(BACKOFF.toNanos() - 1);
        assertEquals(1, readBlock(1).orElseThrow(), "still in backoff");
        now.addAndGet(1);
        assertEquals(0, readBlock(2).orElseThrow(), "tried again after the backoff, and back");
        assertEquals("up", mirrors.snapshot().get(0).state());
        assertEquals(0, readBlock(3).orElseThrow());
    }

    @Test
    void aHangingMirrorCostsOneTimeoutPerBackoffPeriod() {
        first.behaviour.set(MirrorServer.Behaviour.HANG);
        mirrors.close();
        mirrors = mirrors(Duration.ofMillis(300));
        for (int period = 0; period < 3; period++) {
            for (int i = 0; i < 20; i++) {
                assertEquals(1, readBlock(i % 4).orElseThrow());
            }
            // Counted on both sides: the reads that ran into the timeout, and the requests the
            // server got (at most as many: one cut off by the client may never be seen there).
            assertEquals(period + 1, mirrors.snapshot().getFirst().timeouts());
            assertTrue(first.seen.size() <= period + 1, "requests to the hanging mirror after " + (period + 1)
                    + " backoff periods: " + first.seen.size());
            now.addAndGet(BACKOFF.toNanos());
        }
        RemoteTierStats hanging = mirrors.snapshot().get(0);
        assertEquals(3, hanging.timeouts());
        assertEquals(3, hanging.errors());
        assertEquals(57, hanging.skipped());
    }

    @Test
    void allMirrorsFailingLeavesTheReadToTheStore() {
        first.behaviour.set(MirrorServer.Behaviour.STATUS_500);
        second.behaviour.set(MirrorServer.Behaviour.STATUS_403);
        assertEquals(Optional.empty(), readBlock(0));
        assertEquals(Optional.empty(), readBlock(1));
        assertEquals(1, first.seen.size());
        assertEquals(1, second.seen.size());
    }

    @Test
    void aVerificationFailureIsCountedAndTheMirrorSkipped() {
        byte[] poison = blob.clone();
        poison[5] ^= 1;
        first.objects.put(KEY, poison);
        // The first mirror's bytes fail the check: the same range comes from the second, in the same read.
        assertEquals(1, readBlock(0).orElseThrow());
        first.objects.put(KEY, blob);
        assertEquals(1, readBlock(1).orElseThrow(), "a poisoned mirror is skipped for the backoff");
        assertEquals(1, first.seen.size());
        RemoteTierStats poisoned = mirrors.snapshot().get(0);
        assertEquals(1, poisoned.verificationFailures());
        assertEquals("down", poisoned.state());
        assertEquals(0, poisoned.errors());
    }

    @Test
    void aMirrorClientThatThrowsIsAFailedMirrorNotAFailedRead() {
        Mirror broken = new Mirror() {
            @Override
            public String name() {
                return "broken";
            }

            @Override
            public boolean read(MirrorRange range, byte[] dst, int dstOff) {
                throw new IllegalStateException("a bug in a mirror client");
            }

            @Override
            public Optional<byte[]> get(String key, int maxBytes) {
                throw new IllegalStateException("a bug in a mirror client");
            }

            @Override
            public void close() {
            }
        };
        try (Remotes withBroken = remotes(List.of(broken, new HttpMirror(second.base(), Duration.ofSeconds(10))))) {
            assertEquals(1, readBlock(withBroken, 0).orElseThrow());
            assertEquals(1, withBroken.snapshot().getFirst().errors());
            assertEquals("down", withBroken.snapshot().getFirst().state());
        }
    }

    @Test
    void fillsGoOnlyToMirrorsWarpdFills() throws Exception {
        InMemoryBlobStore tierBucket = new InMemoryBlobStore();
        S3Mirror tier = new S3Mirror("s3://tier/warp", tierBucket, 1 << 20);
        try (Remotes withTier = remotes(List.of(new HttpMirror(first.base(), Duration.ofSeconds(10)), tier))) {
            withTier.fill(KEY, 0, blob, 0, 2 * BLOCK, BLOCK);
            withTier.fill(KEY, 100, blob, 0, BLOCK, BLOCK);
            assertTrue(tier.awaitFilled(Duration.ofSeconds(30)));
            assertEquals(2, withTier.snapshot().get(1).fillsWritten(), "whole blocks only: an unaligned offer is not taken");
            assertEquals(0, withTier.snapshot().get(0).fillsWritten());
            assertTrue(first.seen.isEmpty(), "an HTTP cache fills itself: nothing is sent to it");
            first.behaviour.set(MirrorServer.Behaviour.STATUS_500);
            assertEquals(1, readBlock(withTier, 1).orElseThrow(), "the tier serves what was filled");
            assertFalse(readBlock(withTier, 2).isPresent(), "and misses what was not");
        }
    }
}
