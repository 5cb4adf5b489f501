package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlobId;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One local tier of verified blocks: memory ({@link MemoryBlocks}) or disk ({@link DiskBlocks}).
 * {@link Tiers} composes them in order, as Mountpoint's multilevel {@code DataCache} or Trino's
 * {@code TieredBlobCache} compose theirs; behind them come the remote tiers ({@link RemoteTier},
 * untrusted, verified) and the store.
 */
interface Tier {
    /**
     * Copies {@code [offInBlock, offInBlock+len)} of a held block into {@code dst} at index
     * {@code dstIndex} (absolute: the buffer's position and limit are not used or changed).
     *
     * @return false if the block is not held, or was found damaged (it is then dropped)
     */
    boolean get(BlockKey key, int offInBlock, ByteBuffer dst, int dstIndex, int len);

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
     *        re-verified by that id, and their number is bounded ({@link DiskBlocks#MAX_MEMBERS}
     *        indexed, {@link SpareMembers} past that)
     * @return whether this tier holds the block now (or is closed: then no tier should)
     */
    boolean put(BlockKey key, BlobId listId, byte[] data, int off, int len, AtomicBoolean prefetchCredit);

    boolean contains(BlockKey key);

    /**
     * Whether a block is held where it outlives warpd (on disk): what {@code warm} promises.
     * A disk cache's memory fallback holds blocks the disk refused, which are not.
     */
    default boolean kept(BlockKey key) {
        return contains(key);
    }

    /**
     * Makes a block held only where it does not outlive warpd (a disk cache's memory fallback)
     * kept on disk, if the disk takes it now: what {@code warm} asks of a block it finds cached.
     *
     * @param listId the block hash list of its blob, which a block file names
     * @return whether it is kept now
     */
    default boolean keep(BlockKey key, BlobId listId) {
        return kept(key);
    }
}
