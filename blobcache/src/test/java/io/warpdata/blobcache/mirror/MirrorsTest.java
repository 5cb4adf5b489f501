package io.warpdata.blobcache.mirror;

import io.warpdata.store.InMemoryBlobStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MirrorsTest {
    static final String KEY = HttpMirrorTest.KEY;
    static final int BLOCK = 1024;
    static final Duration BACKOFF = Duration.ofSeconds(30);

    final AtomicLong now = new AtomicLong(1_000_000_000L);
    MirrorServer first;
    MirrorServer second;
    Mirrors mirrors;
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
    private Mirrors mirrors(Duration firstTimeout) {
        return new Mirrors(List.of(new HttpMirror(first.base(), firstTimeout), new HttpMirror(second.base(), Duration.ofSeconds(10))),
                BACKOFF, now::get);
    }

    private Optional<Mirrors.Served> readBlock(int index) {
        byte[] dst = new byte[BLOCK];
        Optional<Mirrors.Served> served = mirrors.read(new MirrorRange(KEY, (long) index * BLOCK, BLOCK, BLOCK), dst, 0);
        served.ifPresent(s -> assertArrayEquals(Arrays.copyOfRange(blob, index * BLOCK, (index + 1) * BLOCK), dst));
        return served;
    }

    @Test
    void triesMirrorsInOrderAndCountsHitsAndMisses() {
        first.objects.clear();
        assertEquals(1, readBlock(0).orElseThrow().index());
        List<MirrorStats> stats = mirrors.snapshot();
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
        assertEquals(1, readBlock(0).orElseThrow().index());
        for (int i = 0; i < 10; i++) {
            assertEquals(1, readBlock(i % 4).orElseThrow().index());
        }
        assertEquals(1, first.seen.size(), "a mirror in backoff is not asked");
        MirrorStats down = mirrors.snapshot().get(0);
        assertEquals("down", down.state());
        assertEquals(1, down.errors());
        assertEquals(10, down.skipped());

        first.behaviour.set(MirrorServer.Behaviour.SERVE);
        now.addAndGet(BACKOFF.toNanos() - 1);
        assertEquals(1, readBlock(1).orElseThrow().index(), "still in backoff");
        now.addAndGet(1);
        assertEquals(0, readBlock(2).orElseThrow().index(), "tried again after the backoff, and back");
        assertEquals("up", mirrors.snapshot().get(0).state());
        assertEquals(0, readBlock(3).orElseThrow().index());
    }

    @Test
    void aHangingMirrorCostsOneTimeoutPerBackoffPeriod() {
        first.behaviour.set(MirrorServer.Behaviour.HANG);
        mirrors.close();
        mirrors = mirrors(Duration.ofMillis(300));
        for (int period = 0; period < 3; period++) {
            for (int i = 0; i < 20; i++) {
                assertEquals(1, readBlock(i % 4).orElseThrow().index());
            }
            // Counted on both sides: the reads that ran into the timeout, and the requests the
            // server got (at most as many: one cut off by the client may never be seen there).
            assertEquals(period + 1, mirrors.snapshot().getFirst().timeouts());
            assertTrue(first.seen.size() <= period + 1, "requests to the hanging mirror after " + (period + 1)
                    + " backoff periods: " + first.seen.size());
            now.addAndGet(BACKOFF.toNanos());
        }
        MirrorStats hanging = mirrors.snapshot().get(0);
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
        Mirrors.Served bad = readBlock(0).orElseThrow();
        assertEquals(0, bad.index());
        mirrors.verificationFailed(bad, KEY + " block 0");
        // The caller asks again for the same range without the mirror that lied.
        assertEquals(1, mirrors.read(new MirrorRange(KEY, 0, BLOCK, BLOCK), new byte[BLOCK], 0, Set.of(bad.index())).orElseThrow().index());
        assertEquals(1, readBlock(1).orElseThrow().index(), "a poisoned mirror is skipped for the backoff");
        MirrorStats poisoned = mirrors.snapshot().get(0);
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
        try (Mirrors withBroken = new Mirrors(List.of(broken, new HttpMirror(second.base(), Duration.ofSeconds(10))), BACKOFF, now::get)) {
            assertEquals(1, withBroken.read(new MirrorRange(KEY, 0, BLOCK, BLOCK), new byte[BLOCK], 0).orElseThrow().index());
            assertEquals(1, withBroken.snapshot().getFirst().errors());
            assertEquals("down", withBroken.snapshot().getFirst().state());
        }
    }

    @Test
    void fillsGoOnlyToMirrorsWarpdFills() throws Exception {
        InMemoryBlobStore tierBucket = new InMemoryBlobStore();
        S3Mirror tier = new S3Mirror("s3://tier/warp", tierBucket, 1 << 20);
        try (Mirrors withTier = new Mirrors(List.of(new HttpMirror(first.base(), Duration.ofSeconds(10)), tier), BACKOFF, now::get)) {
            withTier.fill(new MirrorRange(KEY, 0, 2 * BLOCK, BLOCK), blob, 0);
            assertTrue(tier.awaitFilled(Duration.ofSeconds(30)));
            assertEquals(2, withTier.snapshot().get(1).fills().written());
            assertEquals(Mirror.FillCounts.NONE, withTier.snapshot().get(0).fills());
            assertTrue(first.seen.isEmpty(), "an HTTP cache fills itself: nothing is sent to it");
        }
    }
}
