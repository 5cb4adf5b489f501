package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlobId;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;

/** Where verified blocks are kept between reads: on disk ({@link DiskBlocks}) or in memory ({@link MemoryBlocks}). */
interface BlockStorage extends AutoCloseable {

    /**
     * Copies {@code [offInBlock, offInBlock+len)} of a cached block into {@code dst}.
     *
     * @return false if the block is not cached, or was found damaged (it is then dropped)
     */
    boolean read(BlockKey key, int offInBlock, byte[] dst, int dstOff, int len);

    boolean contains(BlockKey key);

    /**
     * Keeps a verified block. Failing to keep it (disk full, I/O error) is logged, not thrown:
     * the cache is an optimisation.
     *
     * @param prefetched whether it was read ahead and nobody has read it yet
     */
    void put(BlockKey key, BlobId listId, byte[] data, int off, int len, boolean prefetched);

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
