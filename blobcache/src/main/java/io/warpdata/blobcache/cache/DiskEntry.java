package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlobId;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One cached block. Its file's path is not kept ({@link CacheDirectory#path} makes it when the
 * file is opened or deleted): a Path with its bytes is about 170 bytes of heap a block, more
 * than the rest of the entry, and the file is opened only when its channel is not cached.
 */
final class DiskEntry {
    final int headerLength;
    final int length;
    final int[] crcs;
    final BlobId listId;
    /** A whole small blob verified by its own id (a member cached under its hash): its list id is its blob id. */
    final boolean member;
    /** The read-ahead credit shared with the fetch (see {@link Tier#put}); null if not read ahead. */
    final AtomicBoolean prefetchCredit;
    /** Reads in progress: while positive, eviction leaves the block's open channel alone. */
    final AtomicInteger readers = new AtomicInteger();
    volatile boolean evicted;
    /**
     * Its file was handed to the kernel to read ahead ({@link PageCacheHints}) and no read came
     * since: read-ahead streams that overlap (DataLoader workers in one shard) hint it once.
     */
    volatile boolean hinted;
    /**
     * Where the last read of it ended, -1 before the first: a read that starts there continues a
     * scan through the block and is not another use of it ({@link DiskBlocks#get}). Written by
     * every read without a lock; a lost update only counts a use more or less.
     */
    int readEnd = -1;
    /** {@link #readEnd}, for the one compare-and-set ({@code DiskBlocks.admit}). */
    static final VarHandle READ_END;

    static {
        try {
            READ_END = MethodHandles.lookup().findVarHandle(DiskEntry.class, "readEnd", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    DiskEntry(BlockKey key, int headerLength, int length, int[] crcs, BlobId listId, AtomicBoolean prefetchCredit) {
        this.member = listId.equals(key.blob());
        this.headerLength = headerLength;
        this.length = length;
        this.crcs = crcs;
        this.listId = listId;
        this.prefetchCredit = prefetchCredit;
    }

    /**
     * Read ahead and not read yet, held out of eviction (in {@code DiskBlocks.held}, not its
     * index). Set before the entry is placed, cleared once, under the entry's lock.
     */
    volatile boolean pinned;

    int weight() {
        return headerLength + length;
    }
}

