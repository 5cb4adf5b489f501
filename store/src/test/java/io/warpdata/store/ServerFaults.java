package io.warpdata.store;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Faults an {@link S3ProxyFixture} server injects into object GETs (HEADs, single PUTs and
 * listings are never affected, so clients can still discover and publish; multipart parts can be
 * failed with {@link #failNextParts}). Counters are decremented per GET;
 * set them before the requests they should hit. {@link #clear()} undoes everything.
 */
public final class ServerFaults {
    final AtomicInteger fail500 = new AtomicInteger();
    final AtomicInteger fail503 = new AtomicInteger();
    final AtomicInteger corrupt = new AtomicInteger();
    final AtomicInteger failParts = new AtomicInteger();
    final AtomicReference<Duration> delay = new AtomicReference<>(Duration.ZERO);
    volatile boolean hang;
    final AtomicReference<Duration> trickle = new AtomicReference<>(Duration.ZERO);
    private final Map<String, Runnable> afterHead = new ConcurrentHashMap<>();

    /** The next {@code n} GETs answer HTTP 500 InternalError. */
    public ServerFaults failNextGetsWith500(int n) {
        fail500.set(n);
        return this;
    }

    /** The next {@code n} GETs answer HTTP 503 (SlowDown, throttling). */
    public ServerFaults failNextGetsWith503(int n) {
        fail503.set(n);
        return this;
    }

    /** Every GET answers HTTP 500 until {@link #clear()}. */
    public ServerFaults failAllGets() {
        fail500.set(Integer.MAX_VALUE);
        return this;
    }

    /** The next {@code n} multipart part uploads answer HTTP 500 (to test aborts). */
    public ServerFaults failNextParts(int n) {
        failParts.set(n);
        return this;
    }

    /** The next {@code n} GETs serve the right length but with the first byte flipped. */
    public ServerFaults corruptNextGets(int n) {
        corrupt.set(n);
        return this;
    }

    /** Every GET waits {@code d} before answering. */
    public ServerFaults delayGets(Duration d) {
        delay.set(d);
        return this;
    }

    /**
     * Every GET answers at once (status and headers) but sends its body one byte every
     * {@code perByte}: a server that never stalls long enough for a socket timeout, and never ends.
     */
    public ServerFaults trickleGets(Duration perByte) {
        trickle.set(perByte);
        return this;
    }

    /** Every GET blocks until {@link #clear()} or the fixture is closed. */
    public ServerFaults hangGets() {
        hang = true;
        return this;
    }

    /**
     * Runs {@code writer} once, right after the server has answered the next HEAD of an object
     * whose key ends with {@code keySuffix}: another writer landing between a client's read of
     * an object's version and its conditional write, at exactly that point.
     */
    public ServerFaults afterNextHead(String keySuffix, Runnable writer) {
        afterHead.put(keySuffix, writer);
        return this;
    }

    /** The writer to run after a HEAD of {@code key}, taken (so it runs once), or null. */
    Runnable takeAfterHead(String key) {
        for (String suffix : afterHead.keySet()) {
            if (key.endsWith(suffix)) {
                return afterHead.remove(suffix);
            }
        }
        return null;
    }

    public ServerFaults clear() {
        afterHead.clear();
        fail500.set(0);
        fail503.set(0);
        corrupt.set(0);
        failParts.set(0);
        delay.set(Duration.ZERO);
        trickle.set(Duration.ZERO);
        synchronized (this) {
            hang = false;
            notifyAll();
        }
        return this;
    }

    /** Blocks while {@link #hangGets()} is in effect. */
    void awaitUnhung() {
        synchronized (this) {
            while (hang) {
                try {
                    wait(1000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    static boolean takeOne(AtomicInteger counter) {
        while (true) {
            int n = counter.get();
            if (n <= 0) {
                return false;
            }
            if (n == Integer.MAX_VALUE || counter.compareAndSet(n, n - 1)) {
                return true;
            }
        }
    }
}
