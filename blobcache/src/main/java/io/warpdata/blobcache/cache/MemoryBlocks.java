package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlobId;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;

/**
 * Blocks in a bounded memory cache: the only tier in {@link CacheMode#REMOTE} (nothing touches the
 * disk), and the disk's fallback in front of it otherwise ({@link Tiers}). Least recently used
 * out, by bytes; memory is trusted, so no checksums. Each entry weighs its bytes plus
 * {@link #ENTRY_HEAP_BYTES}, so that the bound holds for the heap the entries take however small
 * they are (members cached under their hash, {@link MemberReads}).
 *
 * <p>Plain LRU, not Caffeine's W-TinyLFU: what lands here is mostly read ahead of its reader
 * (blocks fetched before anyone asked), which a frequency-based admission refuses in favour of
 * blocks read many times already (a block serves several small reads). On a full cache disk a
 * 100 MB file read once fetched 2.3-5x its bytes: each block read ahead was dropped on arrival
 * and fetched again when its reader came.
 */
final class MemoryBlocks implements BlockStorage {
    /** Heap an entry takes besides its bytes: key, entry, array header, the map's node (about 250 bytes). */
    static final int ENTRY_HEAP_BYTES = 256;

    private record Entry(byte[] data, AtomicBoolean prefetchCredit) {
        long weight() {
            return (long) data.length + ENTRY_HEAP_BYTES;
        }
    }

    private final ReadMetrics metrics;
    private final long limit;
    /** Access-ordered: the eldest is the least recently used. Guarded by itself. */
    private final LinkedHashMap<BlockKey, Entry> blocks = new LinkedHashMap<>(64, 0.75f, true);
    private long weight;

    MemoryBlocks(long limitBytes, ReadMetrics metrics) {
        this.metrics = metrics;
        this.limit = limitBytes;
    }

    @Override
    public boolean get(BlockKey key, int offInBlock, ByteBuffer dst, int dstIndex, int len) {
        Entry e;
        synchronized (blocks) {
            e = blocks.get(key);
        }
        // The bytes are never changed once put: copied out without the lock.
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
        synchronized (blocks) {
            return blocks.containsKey(key);
        }
    }

    @Override
    public int length(BlockKey key) {
        synchronized (blocks) {
            Entry e = blocks.get(key);
            return e == null ? -1 : e.data.length;
        }
    }

    @Override
    public boolean put(BlockKey key, BlobId listId, byte[] data, int off, int len, AtomicBoolean prefetchCredit) {
        Entry e = new Entry(Arrays.copyOfRange(data, off, off + len), prefetchCredit);
        synchronized (blocks) {
            if (blocks.containsKey(key)) {
                return true;
            }
            blocks.put(key, e);
            weight += e.weight();
            evictTo(limit);
        }
        return true;
    }

    /** Evicts the least recently used entries until the weight is at most {@code bound}; under the lock. */
    private void evictTo(long bound) {
        Iterator<Map.Entry<BlockKey, Entry>> it = blocks.entrySet().iterator();
        while (weight > bound && it.hasNext()) {
            Entry e = it.next().getValue();
            it.remove();
            weight -= e.weight();
            metrics.evictions.increment();
            metrics.evictedBytes.add(e.data.length);
            if (e.prefetchCredit != null && e.prefetchCredit.compareAndSet(false, true)) {
                metrics.prefetchWastedBytes.add(e.data.length);
            }
        }
    }

    /** Lets go of a block (another tier holds it now). */
    void drop(BlockKey key) {
        synchronized (blocks) {
            Entry e = blocks.remove(key);
            if (e != null) {
                weight -= e.weight();
            }
        }
    }

    @Override
    public long sizeBytes() {
        synchronized (blocks) {
            return weight;
        }
    }

    @Override
    public long blockCount() {
        synchronized (blocks) {
            return blocks.size();
        }
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
    public long gc(long limitBytes) {
        synchronized (blocks) {
            long before = weight;
            evictTo(Math.max(0, limitBytes));
            return before - weight;
        }
    }

    @Override
    public VerifyResult verify(HashLists lists, LongConsumer progress, BooleanSupplier cancelled) {
        return new VerifyResult(0, 0, 0, 0, 0, false);
    }

    @Override
    public void close() {
        synchronized (blocks) {
            blocks.clear();
            weight = 0;
        }
    }
}
