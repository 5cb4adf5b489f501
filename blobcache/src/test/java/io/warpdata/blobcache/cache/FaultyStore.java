package io.warpdata.blobcache.cache;

import io.warpdata.store.BlobStore;
import io.warpdata.store.ForwardingBlobStore;
import io.warpdata.store.StoreUnavailableException;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Wraps a store and injects faults into ranged reads: a number of 500-style failures, a number
 * of reads returning flipped bytes, a hang until released, or a delay. Counts ranged reads and
 * the largest number of reads in flight at once.
 */
final class FaultyStore extends ForwardingBlobStore {
    final AtomicInteger failuresLeft = new AtomicInteger();
    final AtomicInteger corruptionsLeft = new AtomicInteger();
    volatile boolean corruptForever;
    volatile long delayMillis;
    volatile CountDownLatch hang;
    final AtomicLong reads = new AtomicLong();
    final AtomicLong bytesRead = new AtomicLong();
    final AtomicInteger inFlight = new AtomicInteger();
    final AtomicInteger maxInFlight = new AtomicInteger();

    FaultyStore(BlobStore inner) {
        super(inner);
    }

    @Override
    public void read(String key, long offset, byte[] dst, int dstOff, int len) {
        int now = inFlight.incrementAndGet();
        maxInFlight.accumulateAndGet(now, Math::max);
        try {
            reads.incrementAndGet();
            CountDownLatch h = hang;
            if (h != null) {
                try {
                    h.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new StoreUnavailableException("interrupted", e);
                }
            }
            if (delayMillis > 0) {
                try {
                    Thread.sleep(delayMillis);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new StoreUnavailableException("interrupted", e);
                }
            }
            if (failuresLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                throw new StoreUnavailableException("HTTP 500 Internal Server Error (injected) for " + key, null);
            }
            inner.read(key, offset, dst, dstOff, len);
            bytesRead.addAndGet(len);
            if (len > 0 && (corruptForever || corruptionsLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0)) {
                dst[dstOff + len / 2] ^= 0x5a;
            }
        } finally {
            inFlight.decrementAndGet();
        }
    }

    @Override
    public OptionalLong length(String key) {
        return inner.length(key);
    }

    @Override
    public byte[] get(String key) {
        CountDownLatch h = hang;
        if (h != null) {
            try {
                h.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new StoreUnavailableException("interrupted", e);
            }
        }
        return inner.get(key);
    }

    @Override
    public String describe() {
        return "faulty(" + inner.describe() + ")";
    }
}
