package io.warpdata.blobcache.cache;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The writes under way into a cache directory (block files, block hash lists, whole-blob
 * copies; the catalog's last known state keeps one too), so that closing it waits for them
 * and refuses new ones: once
 * {@link #close} returned, nothing more is made there, and a GET that answers later is served,
 * not kept. (CI, 2026-12-02: a block hash list fetched before the cache closed was written after,
 * and JUnit's deletion of the directory met a file appearing in {@code v1/tmp}; so would a user's
 * {@code rm -rf} of the cache of a warpd just stopped.)
 *
 * <p>One atomic add to begin and one to end: a write of a block costs a file create, a write and
 * a rename besides. Thread-safe.
 */
public final class WriteGate {
    /** How long {@link #close} waits for the writes under way: each is one file (1 MiB and its header, or a list). */
    static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(5);
    private static final long CLOSED = 1L << 62;
    /** Writes under way (below {@link #CLOSED}), and {@link #CLOSED} once closed. */
    private final AtomicLong state = new AtomicLong();

    /** Begins a write; false once closed (then there is nothing to {@link #end}). */
    public boolean begin() {
        if ((state.incrementAndGet() & CLOSED) != 0) {
            state.decrementAndGet();
            return false;
        }
        return true;
    }

    /** Ends a write {@link #begin} let start. */
    public void end() {
        state.decrementAndGet();
    }

    /**
     * Refuses writes from now on and waits up to {@link #CLOSE_WAIT_NANOS} for those under way to
     * end. False if some had not (a disk that stopped answering): they may still land.
     */
    public boolean close() {
        long s;
        do {
            s = state.get();
        } while ((s & CLOSED) == 0 && !state.compareAndSet(s, s | CLOSED));
        long until = System.nanoTime() + CLOSE_WAIT_NANOS;
        while ((state.get() & ~CLOSED) != 0) {
            if (System.nanoTime() - until > 0) {
                return false;
            }
            LockSupport.parkNanos(200_000L);
        }
        return true;
    }
}
