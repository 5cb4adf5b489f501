package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class RunBuffersTest {
    private static final int MIB = 1 << 20;

    @Test
    void runsAreRoundedUpToPowerOfTwoBuffersUpToTheLargestPooledSize() {
        RunBuffers pool = new RunBuffers(8 * MIB, 64L * MIB);
        assertThat(pool.capacityFor(1)).isEqualTo(RunBuffers.MIN_BYTES);
        assertThat(pool.capacityFor(MIB)).isEqualTo(MIB);
        assertThat(pool.capacityFor(MIB + 1)).isEqualTo(2 * MIB);
        assertThat(pool.capacityFor(5 * MIB)).isEqualTo(8 * MIB);
        assertThat(pool.capacityFor(8 * MIB)).isEqualTo(8 * MIB);
        assertThat(pool.capacityFor(9 * MIB)).as("beyond the pool: exact").isEqualTo(9 * MIB);
        assertThat(pool.acquire(3 * MIB).array).hasSize(4 * MIB);
    }

    @Test
    void bufferIsReusedOnlyOnceEveryHolderHasReleasedIt() {
        RunBuffers pool = new RunBuffers(8 * MIB, 64L * MIB);
        RunBuffers.Run fetch = pool.acquire(8 * MIB);
        assertThat(fetch.retain()).as("a reader holds it").isTrue();
        fetch.release(); // the fetch is done with it, the reader still copies
        RunBuffers.Run other = pool.acquire(8 * MIB);
        assertThat(other.array).as("still held: not handed out again").isNotSameAs(fetch.array);
        fetch.release(); // the reader is done
        assertThat(fetch.retain()).as("a late reader must not copy from a recycled buffer").isFalse();
        RunBuffers.Run next = pool.acquire(7 * MIB);
        assertThat(next.array).isSameAs(fetch.array);
        assertThat(pool.allocations()).isEqualTo(2);
        assertThatThrownBy(fetch::release).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void idleBuffersBeyondTheBoundAreLeftToTheGarbageCollector() {
        RunBuffers pool = new RunBuffers(8 * MIB, 16L * MIB);
        RunBuffers.Run a = pool.acquire(8 * MIB);
        RunBuffers.Run b = pool.acquire(8 * MIB);
        RunBuffers.Run c = pool.acquire(8 * MIB);
        a.release();
        b.release();
        c.release();
        assertThat(pool.idleBytes()).isEqualTo(16L * MIB);
        pool.acquire(8 * MIB);
        pool.acquire(8 * MIB);
        assertThat(pool.idleBytes()).isZero();
        assertThat(pool.allocations()).isEqualTo(3);
        pool.acquire(8 * MIB);
        assertThat(pool.allocations()).isEqualTo(4);
    }

    /**
     * Runs change length all the time (windows opening at 2 blocks and doubling, a shard's last
     * run): pooled by exact size, most idle buffers were of the wrong size and every run a new
     * humongous array. A run takes the smallest idle buffer that fits it.
     */
    @Test
    void aRunTakesTheSmallestIdleBufferThatFitsItWhateverItsSize() {
        RunBuffers pool = new RunBuffers(32 * MIB, 64L * MIB);
        RunBuffers.Run big = pool.acquire(32 * MIB);
        RunBuffers.Run mid = pool.acquire(8 * MIB);
        big.release();
        mid.release();
        assertThat(pool.acquire(2 * MIB).array).as("the 8 MiB one, not the 32").isSameAs(mid.array);
        assertThat(pool.acquire(3 * MIB).array).isSameAs(big.array);
        assertThat(pool.acquire(MIB).array).as("none left").hasSize(MIB);
        assertThat(pool.allocations()).isEqualTo(3);
    }

    /**
     * A lent buffer longer than its run still counts, for what it holds beyond the run, against
     * the idle bound: the heap run buffers take stays within the in-flight bound plus the pool's.
     * Over the bound, the buffers returned longest ago go first.
     */
    @Test
    void whatALentBufferHoldsBeyondItsRunCountsAgainstTheBoundAndTheOldestGoFirst() {
        RunBuffers pool = new RunBuffers(32 * MIB, 16L * MIB);
        RunBuffers.Run eight = pool.acquire(8 * MIB);
        eight.release();
        RunBuffers.Run small = pool.acquire(MIB);
        assertThat(small.array).isSameAs(eight.array);
        assertThat(pool.idleBytes()).as("7 MiB of it beyond the 1 MiB run").isEqualTo(7L * MIB);
        RunBuffers.Run other = pool.acquire(8 * MIB);
        other.release();
        assertThat(pool.idleBytes()).isEqualTo(15L * MIB);
        small.release();
        assertThat(pool.idleBytes()).isEqualTo(16L * MIB);
        RunBuffers.Run sixteen = pool.acquire(16 * MIB);
        sixteen.release();
        assertThat(pool.idleBytes()).as("both 8 MiB ones dropped, returned before it").isEqualTo(16L * MIB);
        assertThat(pool.acquire(4 * MIB).array).isSameAs(sixteen.array);
        assertThat(pool.acquire(4 * MIB).array).as("nothing else idle").isNotSameAs(other.array).isNotSameAs(eight.array);
    }
}
