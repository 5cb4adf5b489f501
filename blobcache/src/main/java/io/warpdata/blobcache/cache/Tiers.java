package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlobId;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;

/**
 * The local tiers of a disk cache, composed in the order a read tries them: memory, then disk.
 * A block is written to the disk; the memory tier keeps only what the disk could not (no room
 * above the free-space floor, ENOSPC, EROFS, the directory gone), up to
 * {@link #MEMORY_FALLBACK_BYTES}, least recently used out: without it every small read of such
 * a block (an ImageFolder pass reads ~30 members of each 1 MiB block) fetched the whole block
 * again. Size, limit, gc and verify are the disk's. (In remote mode the memory tier is the only
 * one, {@link MemoryBlocks}, used alone.)
 */
final class Tiers implements BlockStorage {
    /** The memory fallback's bound: 32 MiB. */
    static final long MEMORY_FALLBACK_BYTES = 32L << 20;

    private final MemoryBlocks memory;
    private final DiskBlocks disk;

    Tiers(DiskBlocks disk) {
        // Its own counters: blocks it holds or lets go of are not the cache's evictions.
        this.memory = new MemoryBlocks(MEMORY_FALLBACK_BYTES, new ReadMetrics());
        this.disk = disk;
    }

    DiskBlocks disk() {
        return disk;
    }

    @Override
    public boolean get(BlockKey key, int offInBlock, ByteBuffer dst, int dstIndex, int len) {
        return memory.get(key, offInBlock, dst, dstIndex, len) || disk.get(key, offInBlock, dst, dstIndex, len);
    }

    @Override
    public boolean put(BlockKey key, BlobId listId, byte[] data, int off, int len, AtomicBoolean prefetchCredit) {
        if (disk.put(key, listId, data, off, len, prefetchCredit)) {
            memory.drop(key);
            return true;
        }
        return memory.put(key, listId, data, off, len, null);
    }

    @Override
    public boolean willNeed(BlockKey key) {
        return disk.willNeed(key);
    }

    @Override
    public void passed(BlockKey key) {
        disk.passed(key);
    }

    @Override
    public void newPass() {
        disk.newPass();
    }

    @Override
    public boolean contains(BlockKey key) {
        return memory.contains(key) || disk.contains(key);
    }

    @Override
    public boolean kept(BlockKey key) {
        return disk.contains(key);
    }

    @Override
    public boolean keep(BlockKey key, BlobId listId) {
        if (disk.contains(key)) {
            return true;
        }
        int n = memory.length(key);
        if (n < 0) {
            return false;
        }
        byte[] data = new byte[n];
        if (!memory.get(key, 0, ByteBuffer.wrap(data), 0, n) || !disk.put(key, listId, data, 0, n, null)) {
            return false;
        }
        memory.drop(key);
        return true;
    }

    @Override
    public int length(BlockKey key) {
        int n = memory.length(key);
        return n >= 0 ? n : disk.length(key);
    }

    @Override
    public long sizeBytes() {
        return disk.sizeBytes();
    }

    @Override
    public long blockCount() {
        return disk.blockCount();
    }

    @Override
    public long spareMembers() {
        return disk.spareMembers();
    }

    @Override
    public long spareMemoryBytes() {
        return disk.spareMemoryBytes();
    }

    @Override
    public long limitBytes() {
        return disk.limitBytes();
    }

    @Override
    public long heldRoomBytes() {
        return disk.heldRoomBytes();
    }

    @Override
    public boolean keepsNothingNow() {
        return disk.keepsNothingNow();
    }

    @Override
    public long freeFloorBytes() {
        return disk.freeFloorBytes();
    }

    @Override
    public long gc(long limitBytes) {
        if (limitBytes <= 0) {
            memory.gc(0); // emptied means emptied, memory included
        }
        return disk.gc(limitBytes);
    }

    @Override
    public VerifyResult verify(HashLists lists, LongConsumer progress, BooleanSupplier cancelled) {
        return disk.verify(lists, progress, cancelled);
    }

    @Override
    public void close() {
        disk.close();
        memory.close();
    }
}
