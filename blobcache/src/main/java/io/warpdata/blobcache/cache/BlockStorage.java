package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlobId;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;

/** Where verified blocks are kept between reads: on disk ({@link DiskBlocks}) or in memory ({@link MemoryBlocks}). */
interface BlockStorage extends AutoCloseable {

    /**
     * Copies {@code [offInBlock, offInBlock+len)} of a cached block into {@code dst} at index
     * {@code dstIndex} (absolute: the buffer's position and limit are not used or changed).
     *
     * @return false if the block is not cached, or was found damaged (it is then dropped)
     */
    boolean read(BlockKey key, int offInBlock, ByteBuffer dst, int dstIndex, int len);

    boolean contains(BlockKey key);

    /** The data length of a cached block, or -1 if it is not cached. */
    int length(BlockKey key);

    /**
     * Keeps a verified block. Failing to keep it (disk full, I/O error) is logged, not thrown:
     * the cache is an optimisation.
     *
     * @param prefetchCredit for a read-ahead block, its fetch's credit (false until claimed):
     *        the first read served from the cache claims it (a prefetch hit), eviction claims it
     *        if nobody did (wasted). Shared with the fetch, so that a reader taking the block
     *        from the fetch while it is being written claims the same credit and a block
     *        is never counted twice or not at all. Null for blocks not read ahead.
     * @param listId the id of the block hash list that verified the block; for a whole small blob
     *        verified against its own id (an archive member cached under its SHA-256, see
     *        {@link MemberReads}) it is the blob id itself, {@code key.blob()}: such entries are
     *        re-verified by that id, and their number is bounded ({@link DiskBlocks#MAX_MEMBERS})
     */
    void put(BlockKey key, BlobId listId, byte[] data, int off, int len, AtomicBoolean prefetchCredit);

    /** Bytes held (on disk: headers included). */
    long sizeBytes();

    long blockCount();

    /** The configured size limit. */
    long limitBytes();

    /** Free-space floor on the cache filesystem (0 in memory). */
    long freeFloorBytes();

    /**
     * Evicts until at most {@code limitBytes} are held.
     *
     * @return bytes freed
     */
    long gc(long limitBytes);

    /** Re-checks every block; see {@link BlockCache#verify(LongConsumer, BooleanSupplier)}. */
    VerifyResult verify(HashLists lists, LongConsumer progress, BooleanSupplier cancelled);

    @Override
    void close();
}
