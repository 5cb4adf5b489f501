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
}
