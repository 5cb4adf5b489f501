package io.warpdata.blobcache.cache;

import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;

/** The local tiers as the cache sees them ({@link Tiers}, or one {@link Tier} alone): reads, writes, size, gc, verify. */
interface BlockStorage extends Tier, AutoCloseable {

    /** The data length of a held block, or -1 if it is not held. */
    int length(BlockKey key);

    /** Bytes held (on disk: headers included). */
    long sizeBytes();

    long blockCount();

    /** Members kept past the disk index's count bound ({@link SpareMembers}; counted in {@link #blockCount}). */
    default long spareMembers() {
        return 0;
    }

    /** Memory outside the heap those members take ({@link SpareMembers#memoryBytes}). */
    default long spareMemoryBytes() {
        return 0;
    }

    /** The configured size limit. */
    long limitBytes();

    /**
     * What it holds out of eviction for blocks read ahead and not yet read (on disk: headers
     * included); a read-ahead window larger than that has its oldest blocks, the next to be read,
     * evicted unread ({@link ReadAhead#maxWindowBlocks}). Unbounded where nothing is held (memory).
     */
    default long heldRoomBytes() {
        return Long.MAX_VALUE;
    }

    /** Free-space floor on the cache filesystem (0 in memory). */
    long freeFloorBytes();

    /**
     * Whether a block given now would surely not be kept, found by looking, not by a write: even
     * with all it holds evicted there is no room for a block above its free-space floor, or its
     * directory is gone or another process's. For an order plan that starts before any write
     * was skipped, and would otherwise fetch its whole horizon into memory at once. False by default.
     */
    default boolean keepsNothingNow() {
        return false;
    }

    /**
     * Evicts until at most {@code limitBytes} are held.
     *
     * @return bytes freed
     */
    long gc(long limitBytes);

    /**
     * Says the block will be read soon: a disk tier starts reading its file into the page cache
     * ({@link PageCacheHints}). Does nothing for a block it does not hold, and by default.
     *
     * @return whether a read of the block was started
     */
    default boolean willNeed(BlockKey key) {
        return false;
    }

    /**
     * The reader of an order plan by file has passed the member cached under its hash as
     * {@code key}: the plan reads it again only in its next pass, after every member it has not
     * reached yet, so a disk tier lets it go before those ({@link SpareMembers}). Nothing by
     * default.
     */
    default void passed(BlockKey key) {
    }

    /**
     * A new pass of order plans by file begins: the members passed in the last one count as any
     * other ({@link SpareMembers#newPass}). Nothing by default.
     */
    default void newPass() {
    }

    /** Re-checks every block; see {@link BlockCache#verify(LongConsumer, BooleanSupplier)}. */
    VerifyResult verify(HashLists lists, LongConsumer progress, BooleanSupplier cancelled);

    @Override
    void close();
}
