package io.warpdata.blobcache.cache;

import java.util.ArrayDeque;
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
 * runs (block sizes above 8 MiB) get a buffer of their own. Idle buffers are one list, most
 * recently returned first, and a run takes the smallest that fits it, whatever its size: the
 * runs' lengths change all the time (read-ahead windows opening at 2 blocks and doubling, a
 * shard's last run, 4 MiB runs on a slow link and 32 MiB ones on a fast one), and pooled by exact
 * size the idle buffers were mostly of the wrong size. A bound of {@code maxIdleBytes} counts
 * the idle buffers and what lent ones hold beyond their run's capacity (so the heap they take is
 * still at most the in-flight bound plus it); beyond it the buffers returned longest ago are
 * left to the garbage collector. (Measured with JFR, session 30, {@code bench --quick --only
 * seq-dd,img-seq} on loopback, 32 MiB runs: with a list per size, 4.5 GB of the 4.9 GB warpd
 * allocated were new run buffers, each of 1 MiB or more a G1 humongous object; 78 collections
 * were started by them and 20 were full, compacting ones: 1.5 s of pauses. With this list, 2.2 GB
 * of 2.6 GB, 34 and 8: 0.7 s. Under {@code --network s3like}'s 4 MiB runs the pool mostly hit
 * either way: 734 and 594 MB of new buffers over about 7 GB fetched, no full collection from them.)
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
    /** Idle buffers, most recently returned first. Guarded by this. */
    private final ArrayDeque<byte[]> idle = new ArrayDeque<>();
    /** Bytes of the idle buffers, plus what lent buffers hold beyond their run's capacity. Guarded by this. */
    private long pooledBytes;
    private final AtomicLong allocations = new AtomicLong();

    RunBuffers(int maxPooledBytes, long maxIdleBytes) {
        if (Integer.bitCount(maxPooledBytes) != 1 || maxPooledBytes < MIN_BYTES) {
            throw new IllegalArgumentException("maxPooledBytes must be a power of two >= " + MIN_BYTES);
        }
        this.maxPooledBytes = maxPooledBytes;
        this.maxIdleBytes = maxIdleBytes;
    }

    /** Bytes a buffer for a run of {@code len} bytes holds: what the memory bound must count. */
    int capacityFor(int len) {
        if (len > maxPooledBytes) {
            return len;
        }
        int cap = Math.max(MIN_BYTES, Integer.highestOneBit(len));
        return cap < len ? cap << 1 : cap;
    }

    /**
     * A buffer of at least {@code len} bytes (its contents are arbitrary; it may be longer than
     * {@link #capacityFor}), held once by the caller.
     */
    Run acquire(int len) {
        int cap = capacityFor(len);
        if (cap <= maxPooledBytes) {
            byte[] b = take(cap);
            if (b != null) {
                return new Run(b, this, cap);
            }
        }
        allocations.incrementAndGet();
        return new Run(new byte[cap], this, cap);
    }

    /** The smallest idle buffer of at least {@code cap} bytes, or null. */
    private synchronized byte[] take(int cap) {
        byte[] best = null;
        for (byte[] b : idle) {
            if (b.length >= cap && (best == null || b.length < best.length)) {
                best = b;
                if (b.length == cap) {
                    break;
                }
            }
        }
        if (best != null) {
            idle.removeFirstOccurrence(best);
            pooledBytes -= cap; // what it holds beyond cap stays counted here until it comes back
        }
        return best;
    }

    /** Takes back a buffer lent for a run counted as {@code counted} bytes. */
    private synchronized void recycle(byte[] b, int counted) {
        int len = b.length;
        if (len > maxPooledBytes || Integer.bitCount(len) != 1 || len < MIN_BYTES) {
            return;
        }
        pooledBytes += counted;
        idle.addFirst(b);
        while (pooledBytes > maxIdleBytes && !idle.isEmpty()) {
            pooledBytes -= idle.removeLast().length;
        }
    }

    /** Buffers allocated (not taken from the pool) so far. */
    long allocations() {
        return allocations.get();
    }

    /** Bytes of idle buffers held (and what lent ones hold beyond their runs). */
    synchronized long idleBytes() {
        return pooledBytes;
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
        /** The capacity the run was counted as ({@link #capacityFor}); the array may be longer. */
        private final int counted;
        private final AtomicInteger holders = new AtomicInteger(1);

        private Run(byte[] array, RunBuffers pool, int counted) {
            this.array = array;
            this.pool = pool;
            this.counted = counted;
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
                pool.recycle(array, counted);
            } else if (h < 0) {
                throw new IllegalStateException("run buffer released more often than held");
            }
        }
    }
}
