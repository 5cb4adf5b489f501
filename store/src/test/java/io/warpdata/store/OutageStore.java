package io.warpdata.store;

import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntConsumer;

/**
 * A store that can be taken down and brought back, for outage tests: while down every call fails
 * as a dead server's would ({@link StoreUnreachableException}, or with {@link #failWith5xx} a
 * {@link StoreUnavailableException} as after a 5xx). Counts the calls that reached the store
 * by kind, and the conditional GETs answered "not modified".
 */
public final class OutageStore extends ForwardingBlobStore {
    private volatile boolean down;
    private volatile boolean fiveXx;
    private volatile boolean silent;
    /** While set, every call waits on it (a store that takes requests and does not answer yet). */
    private volatile java.util.concurrent.CountDownLatch hang;
    public final LongAdder calls = new LongAdder();
    public final LongAdder lists = new LongAdder();
    public final LongAdder gets = new LongAdder();
    public final LongAdder conditionalGets = new LongAdder();
    public final LongAdder notModified = new LongAdder();
    public final LongAdder reads = new LongAdder();
    public final LongAdder refused = new LongAdder();

    public OutageStore(BlobStore inner) {
        super(inner);
    }

    /** Every call fails until {@link #up()}, as if nothing listened. */
    public OutageStore down() {
        fiveXx = false;
        down = true;
        return this;
    }

    /** Every call fails until {@link #up()}, as if the server answered 503 after the retries. */
    public OutageStore failWith5xx() {
        fiveXx = true;
        down = true;
        return this;
    }

    /**
     * Every call fails until {@link #up()} as one does that waited out the answer timeout of a
     * store that took the connection and sent nothing ({@link StoreNotAnsweringException}).
     */
    public OutageStore silent() {
        fiveXx = false;
        silent = true;
        down = true;
        return this;
    }

    /** Every call blocks until {@link #answer()}, then goes on as usual. */
    public OutageStore hang() {
        hang = new java.util.concurrent.CountDownLatch(1);
        return this;
    }

    /** Lets the calls held by {@link #hang()} through. */
    public OutageStore answer() {
        java.util.concurrent.CountDownLatch h = hang;
        hang = null;
        if (h != null) {
            h.countDown();
        }
        return this;
    }

    public OutageStore up() {
        down = false;
        silent = false;
        return this;
    }

    private void check(String key) {
        calls.increment();
        java.util.concurrent.CountDownLatch h = hang;
        if (h != null) {
            try {
                h.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new StoreUnavailableException("interrupted (injected hang) for " + key, e);
            }
        }
        if (down) {
            refused.increment();
            if (silent) {
                throw new StoreNotAnsweringException("not answering (injected) for " + key, null);
            }
            if (fiveXx) {
                throw new StoreUnavailableException("503 SlowDown (injected) for " + key, null);
            }
            throw new StoreUnreachableException("cannot connect (injected) for " + key, null);
        }
    }

    @Override
    public OptionalLong length(String key) {
        check(key);
        return super.length(key);
    }

    @Override
    public void read(String key, long offset, byte[] dst, int dstOff, int len) {
        check(key);
        reads.increment();
        super.read(key, offset, dst, dstOff, len);
    }

    @Override
    public void read(String key, long offset, byte[] dst, int dstOff, int len, IntConsumer arrived) {
        check(key);
        reads.increment();
        inner.read(key, offset, dst, dstOff, len, arrived);
    }

    @Override
    public byte[] get(String key) {
        check(key);
        gets.increment();
        return super.get(key);
    }

    @Override
    public byte[] get(String key, int maxBytes) {
        check(key);
        gets.increment();
        return super.get(key, maxBytes);
    }

    @Override
    public Versioned getIfChanged(String key, String ifNoneMatch, int maxBytes) {
        check(key);
        if (ifNoneMatch != null) {
            conditionalGets.increment();
        } else {
            gets.increment();
        }
        Versioned v = super.getIfChanged(key, ifNoneMatch, maxBytes);
        if (v == null) {
            notModified.increment();
        }
        return v;
    }

    @Override
    public void put(String key, byte[] data) {
        check(key);
        super.put(key, data);
    }

    @Override
    public boolean putIfAbsent(String key, byte[] data) {
        check(key);
        return super.putIfAbsent(key, data);
    }

    @Override
    public boolean putIfAbsent(String key, Path source) {
        check(key);
        return super.putIfAbsent(key, source);
    }

    @Override
    public List<String> list(String prefix) {
        check(prefix);
        lists.increment();
        return super.list(prefix);
    }
}
