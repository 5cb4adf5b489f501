package io.warpdata.blobcache.cache;

import io.warpdata.store.BlobStore;
import io.warpdata.store.ForwardingBlobStore;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntConsumer;

/**
 * A store whose data GETs (keys under {@code blobs/}) each deliver {@code rate} bytes per second,
 * streamed in 64 KiB pieces, as one connection to a far store does; records each GET's length
 * and the most GETs and bytes under way at once. Metadata reads pass straight through.
 */
final class PacedStore extends ForwardingBlobStore {
    final List<Integer> lengths = new CopyOnWriteArrayList<>();
    final AtomicInteger gets = new AtomicInteger();
    final AtomicInteger peakGets = new AtomicInteger();
    final AtomicLong bytes = new AtomicLong();
    final AtomicLong peakBytes = new AtomicLong();
    private final double rate;

    PacedStore(BlobStore inner, double rate) {
        super(inner);
        this.rate = rate;
    }

    @Override
    public void read(String key, long offset, byte[] dst, int dstOff, int len) {
        read(key, offset, dst, dstOff, len, n -> { });
    }

    @Override
    public void read(String key, long offset, byte[] dst, int dstOff, int len, IntConsumer arrived) {
        if (!key.contains("blobs/")) {
            inner.read(key, offset, dst, dstOff, len);
            arrived.accept(len);
            return;
        }
        lengths.add(len);
        peakGets.accumulateAndGet(gets.incrementAndGet(), Math::max);
        peakBytes.accumulateAndGet(bytes.addAndGet(len), Math::max);
        long start = System.nanoTime();
        try {
            for (int pos = 0; pos < len; ) {
                int n = Math.min(64 << 10, len - pos);
                inner.read(key, offset + pos, dst, dstOff + pos, n);
                pos += n;
                long wait = start + (long) (pos / rate * 1e9) - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                }
                arrived.accept(pos);
            }
        } finally {
            bytes.addAndGet(-len);
            gets.decrementAndGet();
        }
    }
}
