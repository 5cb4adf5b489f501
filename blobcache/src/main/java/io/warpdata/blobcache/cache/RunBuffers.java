package io.warpdata.blobcache.cache;

import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Reusable buffers for the runs {@link BlockCache} fetches. A fresh {@code new byte[8 MiB]} per
 * GET cost more CPU than the GET's own socket reads: the JVM zeroes it, the kernel faults its
 * pages in one by one (4 KiB each, zeroed again), and at 8 MiB it is a G1 humongous object that
 * triggers collections of its own. A pooled buffer is already mapped and is simply overwritten.
 *
 * <p>Buffers come in power-of-two sizes from {@link #MIN_BYTES} up to {@code maxPooledBytes}
 * (a run's length rounded up, so the in-flight memory bound counts what is really held); larger
 * runs (block sizes above 8 MiB) get a buffer of their own. At most {@code maxIdleBytes} of idle
 * buffers are kept, most recently used first (its pages are the likeliest still in the CPU
 * cache); a buffer returned beyond that is left to the garbage collector.
 *
 * <p>A buffer goes back to the pool only when its {@link Run} is released by everyone holding
 * it: the fetch that filled it, and each reader copying a block out of it (see {@link Run#retain}).
 * Thread-safe.
 */
final class RunBuffers {
    /** Smallest buffer: below a 64 KiB block (the smallest sensible size) rounding costs nothing. */
    static final int MIN_BYTES = 64 << 10;

    private final int maxPooledBytes;
    private final long maxIdleBytes;
    /** idle[c] holds idle buffers of MIN_BYTES << c bytes. */
    private final ConcurrentLinkedDeque<byte[]>[] idle;
    private final AtomicLong idleBytes = new AtomicLong();
    private final AtomicLong allocations = new AtomicLong();

    @SuppressWarnings("unchecked")
    RunBuffers(int maxPooledBytes, long maxIdleBytes) {
        if (Integer.bitCount(maxPooledBytes) != 1 || maxPooledBytes < MIN_BYTES) {
            throw new IllegalArgumentException("maxPooledBytes must be a power of two >= " + MIN_BYTES);
        }
        this.maxPooledBytes = maxPooledBytes;
        this.maxIdleBytes = maxIdleBytes;
        this.idle = new ConcurrentLinkedDeque[Integer.numberOfTrailingZeros(maxPooledBytes / MIN_BYTES) + 1];
        for (int c = 0; c < idle.length; c++) {
            idle[c] = new ConcurrentLinkedDeque<>();
        }
    }

    /** Bytes a buffer for a run of {@code len} bytes holds: what the memory bound must count. */
    int capacityFor(int len) {
        if (len > maxPooledBytes) {
            return len;
        }
        int cap = Math.max(MIN_BYTES, Integer.highestOneBit(len));
        return cap < len ? cap << 1 : cap;
    }

    /** A buffer of at least {@code len} bytes (its contents are arbitrary), held once by the caller. */
    Run acquire(int len) {
        int cap = capacityFor(len);
        if (cap <= maxPooledBytes) {
            byte[] b = idle[sizeClass(cap)].pollFirst();
            if (b != null) {
                idleBytes.addAndGet(-cap);
                return new Run(b, this);
            }
        }
        allocations.incrementAndGet();
        return new Run(new byte[cap], this);
    }

    private void recycle(byte[] b) {
        int cap = b.length;
        if (cap > maxPooledBytes || Integer.bitCount(cap) != 1 || cap < MIN_BYTES) {
            return;
        }
        if (idleBytes.addAndGet(cap) > maxIdleBytes) {
            idleBytes.addAndGet(-cap);
            return;
        }
        idle[sizeClass(cap)].offerFirst(b);
    }

    private static int sizeClass(int cap) {
        return Integer.numberOfTrailingZeros(cap / MIN_BYTES);
    }

    /** Buffers allocated (not taken from the pool) so far. */
    long allocations() {
        return allocations.get();
    }

    /** Bytes of idle buffers held. */
    long idleBytes() {
        return idleBytes.get();
    }

    /**
     * One use of a buffer: the fetch filling it holds it, and so does each reader while it copies
     * a block out. The buffer returns to the pool when the last holder releases it; from then on
     * {@link #retain} fails, so a late reader never copies from a buffer reused by another fetch
     * (it reads the block from the cache instead). A new Run wraps each use, so a count that
     * reached zero stays zero.
     */
    static final class Run {
        final byte[] array;
        private final RunBuffers pool;
        private final AtomicInteger holders = new AtomicInteger(1);

        private Run(byte[] array, RunBuffers pool) {
            this.array = array;
            this.pool = pool;
        }

        /** Holds the buffer for a copy; false if it has already gone back to the pool. */
        boolean retain() {
            while (true) {
                int h = holders.get();
                if (h == 0) {
                    return false;
                }
                if (holders.compareAndSet(h, h + 1)) {
                    return true;
                }
            }
        }

        /** Lets go of the buffer; the last holder to do so returns it to the pool. */
        void release() {
            int h = holders.decrementAndGet();
            if (h == 0) {
                pool.recycle(array);
            } else if (h < 0) {
                throw new IllegalStateException("run buffer released more often than held");
            }
        }
    }
}
