package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntPredicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Remotes}' health with many reads at once: one report when a tier goes and one when it
 * comes back, however many reads fail or succeed together, and a dead or hanging tier reached by
 * one read per backoff period. Reads are held inside the tier by latches, the clock is moved by
 * hand, and the reports are counted through {@link Remotes.HealthLog}: nothing here sleeps.
 */
class RemotesHealthTest {
    private static final int N = 8;
    private static final int LEN = 4096;
    private static final Duration BACKOFF = Duration.ofSeconds(30);
    private static final String KEY = "blobs/sha256/ab/ab" + "0".repeat(62);

    private final byte[] data = new byte[LEN];
    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final AtomicInteger downs = new AtomicInteger();
    private final AtomicInteger backs = new AtomicInteger();
    private final ExecutorService pool = Executors.newCachedThreadPool();

    {
        Arrays.fill(data, (byte) 7);
    }

    /**
     * A tier whose reads wait at a gate, then fail (as a timeout) or serve the right bytes,
     * decided by the call's number (0 for the first call).
     */
    private final class GatedTier implements RemoteTier {
        final AtomicInteger asked = new AtomicInteger();
        final Semaphore entered = new Semaphore(0);
        volatile CountDownLatch gate = new CountDownLatch(0);
        volatile IntPredicate fails;

        GatedTier(IntPredicate fails) {
            this.fails = fails;
        }

        @Override
        public String describe() {
            return "gated";
        }

        @Override
        public boolean read(String key, long offset, byte[] dst, int dstOff, int len, int blockSize) {
            int call = asked.getAndIncrement();
            entered.release();
            try {
                gate.await();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            if (fails.test(call)) {
                throw new RemoteTier.Failure("gated sent nothing for 2000 ms", true, null);
            }
            System.arraycopy(data, 0, dst, dstOff, len);
            return true;
        }
    }

    private Remotes remotes(RemoteTier tier) {
        return new Remotes(List.of(tier), new ReadMetrics(), BACKOFF, now::get, new Remotes.HealthLog() {
            @Override
            public void down(String name, Duration backoff, String reason) {
                downs.incrementAndGet();
            }

            @Override
            public void back(String name) {
                backs.incrementAndGet();
            }
        });
    }

    private boolean read(Remotes remotes) {
        byte[] dst = new byte[LEN];
        return remotes.read(KEY, 0, dst, 0, LEN, LEN, LEN, (d, o, l) -> Arrays.equals(d, o, o + l, data, 0, l),
                System.nanoTime() + 60_000_000_000L);
    }

    /** Starts N reads; each releases {@code finished} when it returns. */
    private List<Future<Boolean>> readAtOnce(Remotes remotes, Semaphore finished) {
        List<Future<Boolean>> reads = new ArrayList<>();
        for (int i = 0; i < N; i++) {
            reads.add(pool.submit(() -> {
                try {
                    return read(remotes);
                } finally {
                    finished.release();
                }
            }));
        }
        return reads;
    }

    private static int served(List<Future<Boolean>> reads) throws Exception {
        int served = 0;
        for (Future<Boolean> r : reads) {
            served += r.get(30, TimeUnit.SECONDS) ? 1 : 0;
        }
        return served;
    }

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    @Test
    void readsFailingTogetherTakeTheTierDownWithOneReport() throws Exception {
        GatedTier tier = new GatedTier(call -> true);
        tier.gate = new CountDownLatch(1);
        Remotes remotes = remotes(tier);
        List<Future<Boolean>> reads = readAtOnce(remotes, new Semaphore(0));
        assertThat(tier.entered.tryAcquire(N, 30, TimeUnit.SECONDS)).as("all N reads in the tier while it is up").isTrue();
        tier.gate.countDown();

        assertThat(served(reads)).isZero();
        assertThat(downs.get()).isEqualTo(1);
        assertThat(backs.get()).isZero();
        RemoteTierStats stats = remotes.snapshot().getFirst();
        assertThat(stats.state()).isEqualTo("down");
        assertThat(stats.errors()).isEqualTo(N);
        assertThat(stats.timeouts()).isEqualTo(N);
    }

    @Test
    void readsInFlightWhenTheTierWentDownDoNotBringItBack() throws Exception {
        // Half the reads that were let in while it was up fail, half succeed, in any order: the
        // first failure takes it down; the successes of reads let in before that change nothing.
        GatedTier tier = new GatedTier(call -> call % 2 == 0);
        tier.gate = new CountDownLatch(1);
        Remotes remotes = remotes(tier);
        List<Future<Boolean>> reads = readAtOnce(remotes, new Semaphore(0));
        assertThat(tier.entered.tryAcquire(N, 30, TimeUnit.SECONDS)).isTrue();
        tier.gate.countDown();

        assertThat(served(reads)).isEqualTo(N / 2);
        assertThat(downs.get()).isEqualTo(1);
        assertThat(backs.get()).as("a stale success is not a probe").isZero();
        assertThat(remotes.snapshot().getFirst().state()).isEqualTo("down");
        assertThat(read(remotes)).as("skipped for the backoff").isFalse();
        assertThat(tier.asked.get()).isEqualTo(N);
    }

    @Test
    void afterTheBackoffOneProbeBringsTheTierBackWithOneReport() throws Exception {
        GatedTier tier = new GatedTier(call -> call == 0);
        Remotes remotes = remotes(tier);
        assertThat(read(remotes)).isFalse();
        assertThat(downs.get()).isEqualTo(1);

        now.addAndGet(BACKOFF.toNanos());
        tier.gate = new CountDownLatch(1);
        Semaphore finished = new Semaphore(0);
        List<Future<Boolean>> reads = readAtOnce(remotes, finished);
        // One read probes and is held in the tier; the other N - 1 skip it and finish meanwhile.
        assertThat(tier.entered.tryAcquire(2, 30, TimeUnit.SECONDS)).isTrue();
        assertThat(finished.tryAcquire(N - 1, 30, TimeUnit.SECONDS)).isTrue();
        assertThat(tier.asked.get()).as("one probe after the backoff").isEqualTo(2);
        tier.gate.countDown();

        assertThat(served(reads)).as("the probe").isEqualTo(1);
        assertThat(backs.get()).isEqualTo(1);
        assertThat(downs.get()).isEqualTo(1);
        RemoteTierStats stats = remotes.snapshot().getFirst();
        assertThat(stats.state()).isEqualTo("up");
        assertThat(stats.skipped()).isEqualTo(N - 1);

        List<Future<Boolean>> afterwards = readAtOnce(remotes, new Semaphore(0));
        assertThat(served(afterwards)).isEqualTo(N);
        assertThat(backs.get()).as("reads of an up tier report nothing").isEqualTo(1);
    }

    @Test
    void aHangingTierIsReachedOncePerBackoffPeriodAndItsFailedProbesReportNothing() throws Exception {
        GatedTier tier = new GatedTier(call -> true);
        Remotes remotes = remotes(tier);
        assertThat(read(remotes)).isFalse();
        for (int period = 1; period <= 3; period++) {
            for (int i = 0; i < N; i++) {
                assertThat(read(remotes)).isFalse();
            }
            assertThat(tier.asked.get()).as("reads within backoff period %d", period).isEqualTo(period);
            now.addAndGet(BACKOFF.toNanos());

            tier.gate = new CountDownLatch(1);
            tier.entered.drainPermits();
            Semaphore finished = new Semaphore(0);
            List<Future<Boolean>> reads = readAtOnce(remotes, finished);
            // The probe hangs in the tier (its timeout, as long as the test likes); the rest go on.
            assertThat(tier.entered.tryAcquire(1, 30, TimeUnit.SECONDS)).isTrue();
            assertThat(finished.tryAcquire(N - 1, 30, TimeUnit.SECONDS)).isTrue();
            tier.gate.countDown();
            assertThat(served(reads)).isZero();
            assertThat(tier.asked.get()).as("one probe after backoff period %d", period).isEqualTo(period + 1);
        }
        assertThat(downs.get()).as("one report for the whole outage").isEqualTo(1);
        assertThat(backs.get()).isZero();
        assertThat(remotes.snapshot().getFirst().timeouts()).isEqualTo(4);
    }
}
