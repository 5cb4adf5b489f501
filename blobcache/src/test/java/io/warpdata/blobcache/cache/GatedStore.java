package io.warpdata.blobcache.cache;

import io.warpdata.store.BlobStore;
import io.warpdata.store.ForwardingBlobStore;
import io.warpdata.store.StoreUnavailableException;
import io.warpdata.store.StoreUnreachableException;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Wraps a store, counts whole-object GETs ({@code get(key, max)}: block hash lists, indexes read
 * whole) and ranged reads per key, the most GETs in flight at once, and holds GETs of chosen
 * keys (or all) until {@link #open} is counted down.
 */
final class GatedStore extends ForwardingBlobStore {
    final Map<String, AtomicLong> gets = new ConcurrentHashMap<>();
    final Map<String, AtomicLong> reads = new ConcurrentHashMap<>();
    final Set<String> gated = ConcurrentHashMap.newKeySet();
    volatile boolean gateAll;
    /** Every GET fails as a store that cannot be reached does. */
    volatile boolean unreachable;
    final CountDownLatch open = new CountDownLatch(1);
    final AtomicInteger getsInFlight = new AtomicInteger();
    final AtomicInteger maxGetsInFlight = new AtomicInteger();

    GatedStore(BlobStore inner) {
        super(inner);
    }

    long gets(String key) {
        AtomicLong n = gets.get(key);
        return n == null ? 0 : n.get();
    }

    long reads(String key) {
        AtomicLong n = reads.get(key);
        return n == null ? 0 : n.get();
    }

    long allGets() {
        return gets.values().stream().mapToLong(AtomicLong::get).sum();
    }

    long allReads() {
        return reads.values().stream().mapToLong(AtomicLong::get).sum();
    }

    @Override
    public byte[] get(String key, int maxBytes) {
        gets.computeIfAbsent(key, k -> new AtomicLong()).incrementAndGet();
        maxGetsInFlight.accumulateAndGet(getsInFlight.incrementAndGet(), Math::max);
        try {
            if (unreachable) {
                throw new StoreUnreachableException("connection refused (injected) for " + key, null);
            }
            if (gateAll || gated.contains(key)) {
                try {
                    open.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new StoreUnavailableException("interrupted", e);
                }
            }
            return super.get(key, maxBytes);
        } finally {
            getsInFlight.decrementAndGet();
        }
    }

    @Override
    public void read(String key, long offset, byte[] dst, int dstOff, int len) {
        reads.computeIfAbsent(key, k -> new AtomicLong()).incrementAndGet();
        super.read(key, offset, dst, dstOff, len);
    }
}
