package io.warpdata.blobcache.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import io.warpdata.manifest.BlobId;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;

/**
 * Blocks in a bounded memory cache: the only tier in {@link CacheMode#REMOTE} (nothing touches the
 * disk), and the disk's fallback in front of it otherwise ({@link Tiers}).
 * Caffeine's W-TinyLFU with a byte weigher; memory is trusted, so no checksums. Each entry
 * weighs its bytes plus {@link #ENTRY_HEAP_BYTES}, so that the bound holds for the heap the
 * entries take however small they are (members cached under their hash, {@link MemberReads}).
 */
final class MemoryBlocks implements BlockStorage {
    /** Heap an entry takes besides its bytes: key, entry, array header, Caffeine's node (about 250 bytes). */
    static final int ENTRY_HEAP_BYTES = 256;

    private static final class Entry {
        final byte[] data;
        /** The read-ahead credit shared with the fetch (see {@link BlockStorage#put}); null if not read ahead. */
        final AtomicBoolean prefetchCredit;

        Entry(byte[] data, AtomicBoolean prefetchCredit) {
            this.data = data;
            this.prefetchCredit = prefetchCredit;
        }
    }

    private final ReadMetrics metrics;
    private final long limit;
    private final Cache<BlockKey, Entry> blocks;

    MemoryBlocks(long limitBytes, ReadMetrics metrics) {
        this.metrics = metrics;
        this.limit = limitBytes;
        this.blocks = Caffeine.newBuilder()
                .maximumWeight(limitBytes)
                .weigher((BlockKey k, Entry e) -> e.data.length + ENTRY_HEAP_BYTES)
                .executor(Runnable::run)
                .evictionListener((BlockKey k, Entry e, RemovalCause cause) -> {
                    if (e != null) {
                        metrics.evictions.increment();
                        metrics.evictedBytes.add(e.data.length);
                        if (e.prefetchCredit != null && e.prefetchCredit.compareAndSet(false, true)) {
                            metrics.prefetchWastedBytes.add(e.data.length);
                        }
                    }
                })
                .build();
    }

    @Override
    public boolean get(BlockKey key, int offInBlock, ByteBuffer dst, int dstIndex, int len) {
        Entry e = blocks.getIfPresent(key);
        if (e == null || offInBlock + len > e.data.length) {
            return false;
        }
        dst.put(dstIndex, e.data, offInBlock, len);
        if (e.prefetchCredit != null && !e.prefetchCredit.get() && e.prefetchCredit.compareAndSet(false, true)) {
            metrics.prefetchHitBlocks.increment();
        }
        return true;
    }

    @Override
    public boolean contains(BlockKey key) {
        return blocks.asMap().containsKey(key);
    }

    @Override
    public int length(BlockKey key) {
        Entry e = blocks.asMap().get(key);
        return e == null ? -1 : e.data.length;
    }

    @Override
    public boolean put(BlockKey key, BlobId listId, byte[] data, int off, int len, AtomicBoolean prefetchCredit) {
        blocks.asMap().putIfAbsent(key, new Entry(Arrays.copyOfRange(data, off, off + len), prefetchCredit));
        return true;
    }

    /** Lets go of a block (another tier holds it now). */
    void drop(BlockKey key) {
        blocks.invalidate(key);
    }

    @Override
    public long sizeBytes() {
        return blocks.policy().eviction().orElseThrow().weightedSize().orElse(0);
    }

    @Override
    public long blockCount() {
        return blocks.estimatedSize();
    }

    @Override
    public long limitBytes() {
        return limit;
    }

    @Override
    public long freeFloorBytes() {
        return 0;
    }

    @Override
    public synchronized long gc(long limitBytes) {
        var eviction = blocks.policy().eviction().orElseThrow();
        long before = sizeBytes();
        eviction.setMaximum(Math.max(0, limitBytes));
        blocks.cleanUp();
        eviction.setMaximum(limit);
        return before - sizeBytes();
    }

    @Override
    public VerifyResult verify(HashLists lists, LongConsumer progress, BooleanSupplier cancelled) {
        return new VerifyResult(0, 0, 0, 0, 0, false);
    }

    @Override
    public void close() {
        blocks.invalidateAll();
    }
}
