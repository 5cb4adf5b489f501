package io.warpdata.manifest;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Reading a parted index's parts ahead of a walk (issue 26): {@code find} over a never-opened
 * version otherwise fetches and verifies each part only when the walk reaches it, one at a time.
 * A {@link PartedMemberIndex} detects a walk conservatively, once {@link #WALK} consecutive parts
 * have been touched in order (a first {@code ls} of one folder touches one or two), and then keeps
 * the next {@code window} parts loaded or loading, at most {@code inFlight} at once across all the
 * indexes sharing this object. A read-ahead goes through the same loader as a demand load (the
 * verified path) and under the same per-part lock, so a demand for a part being read ahead waits
 * for that one fetch (single flight), and a demand for any other part waits for nothing it did not
 * ask for. Read-ahead errors are counted and dropped (the walk stops being read ahead until it is
 * detected again); the demand load of that part reports its own error.
 */
public final class PartReadAhead {
    /** Consecutive parts touched in order before reading ahead starts. */
    public static final int WALK = 3;
    /** No reading ahead. */
    public static final PartReadAhead NONE = new PartReadAhead(Runnable::run, 0, 0);

    private final Executor executor;
    private final int inFlight;
    private final int window;
    private final AtomicInteger running = new AtomicInteger();
    private final LongAdder started = new LongAdder();
    private final LongAdder loaded = new LongAdder();
    private final LongAdder failed = new LongAdder();

    /**
     * @param executor runs read-aheads (they block on the store: virtual threads suit)
     * @param inFlight parts read ahead at once, at most (0: none)
     * @param window parts ahead of the walk kept loaded or loading
     */
    public PartReadAhead(Executor executor, int inFlight, int window) {
        if (inFlight < 0 || window < 0) {
            throw new IllegalArgumentException("inFlight and window must be >= 0: " + inFlight + ", " + window);
        }
        this.executor = executor;
        this.inFlight = inFlight;
        this.window = window;
    }

    int window() {
        return inFlight == 0 ? 0 : window;
    }

    /** Takes one of the in-flight slots, if one is free. */
    boolean tryAcquire() {
        for (int n = running.get(); n < inFlight; n = running.get()) {
            if (running.compareAndSet(n, n + 1)) {
                return true;
            }
        }
        return false;
    }

    /** Gives back a slot taken by {@link #tryAcquire}. */
    void release() {
        running.decrementAndGet();
    }

    /**
     * Runs {@code task}, which holds a slot taken by {@link #tryAcquire} and must {@link #release}
     * it; false (slot released) if the executor refused it.
     */
    boolean submit(Runnable task) {
        try {
            executor.execute(task);
            started.increment();
            return true;
        } catch (RejectedExecutionException e) { // shutting down
            running.decrementAndGet();
            return false;
        }
    }

    void loaded() {
        loaded.increment();
    }

    void failed() {
        failed.increment();
    }

    /** Read-aheads started so far. */
    public long started() {
        return started.sum();
    }

    /** Parts loaded by read-ahead so far (not those a demand had loaded first). */
    public long loadedParts() {
        return loaded.sum();
    }

    /** Read-aheads that failed (dropped) so far. */
    public long failures() {
        return failed.sum();
    }

    /** Read-aheads running now. */
    public int running() {
        return running.get();
    }
}
