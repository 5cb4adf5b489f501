package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;

/**
 * Decides where the bytes of a read come from: a pure function of the read and of what the
 * tiers hold ({@link Holdings}), returning a {@link Source}. Nothing here reads, fetches or
 * counts; {@link ReadExecutor} runs the plan. This is the one place that knows the order.
 */
final class ReadPlan {
    private ReadPlan() {
    }

    /** What the tiers hold, as far as a plan needs to know. Answers only; never reads bytes for the reader. */
    interface Holdings {
        /** Whether the member is cached under its hash with its exact length. */
        boolean memberCached(BlobMember m);

        /** Where else the member's bytes were served from blocks, or null. */
        MemberLocator.Location located(BlobMember m);

        /** The blob's block hash list (from memory, disk, or the store). */
        BlockHashList list(BlobRef blob);

        /** Whether every block of {@code [from, from + n)} of the blob is in a local tier. */
        boolean blocksCached(BlobRef blob, BlockHashList list, long from, int n);

        /** Whether a fetch of this member on its own is under way. */
        boolean memberInFlight(BlobMember m);

        /** Whether a block the member lies in failed verification twice lately ({@link Suspects#badBlock}). */
        boolean blockFailed(BlobMember m, BlockHashList list);

        /** Whether a block the member lies in is being fetched and not cached yet. */
        boolean blocksInFlight(BlobMember m, BlockHashList list);

        /**
         * Whether the read at {@code from} (in the blob) continues a sequential stream of the
         * blob or the blob is being fetched whole: its blocks then serve it better than a member GET.
         */
        boolean followsBlocks(BlobMember m, BlockHashList list, long from);

        /**
         * Whether the disk keeps the blocks it is given (false while it skips writes: no room
         * above the free-space floor, a read-only or vanished cache directory).
         */
        boolean diskKeeps();

        /**
         * Whether an order plan that fetches files ({@link OrderPrefetcher}: a plan over more than
         * the cache keeps) has this member among them: it is then fetched on its own up to 1 MiB,
         * not only up to 256 KiB, when its reader comes before the plan's fetch (its blocks are
         * what such a cache does not keep).
         */
        default boolean plannedFile(BlobMember m) {
            return false;
        }

        CacheMode mode();
    }

    /**
     * The source of {@code n} bytes at {@code offset} in member {@code m}, trying only sources
     * ranked after {@code after} (null: from the first). The blob's list is asked for only once
     * the member is not to be served by its hash: a deduplicated read costs no request at all.
     */
    static Source member(BlobMember m, long offset, int n, Holdings h, Source after) {
        int from = after == null ? 0 : Source.rank(after);
        if (from < 1 && m.length() <= MemberReads.MEMBER_BLOCK_SIZE && h.memberCached(m)) {
            return Source.MemberCached.INSTANCE;
        }
        if (from < 2) {
            MemberLocator.Location l = h.located(m);
            // Known only where this very read would look next (its own blocks) is no other place.
            if (l != null && l.length == m.length() && !(l.offset == m.offset() && l.blob.id().equals(m.blob().id()))) {
                return new Source.Located(l);
            }
        }
        BlockHashList list = h.list(m.blob());
        long at = m.offset() + offset;
        if (from < 3 && h.blocksCached(m.blob(), list, at, n)) {
            return new Source.OwnBlocks(list);
        }
        // In flight: a reader's fetch, or an order plan's of a file up to 1 MiB (OrderPrefetcher.MAX_FILE_BYTES).
        if (from < 5 && m.length() <= MemberReads.MEMBER_BLOCK_SIZE && h.memberInFlight(m)) {
            return new Source.AwaitMember(list);
        }
        if (from < 5 && (memberGetAllowed(m, h.mode())
                || m.length() <= OrderPrefetcher.MAX_FILE_BYTES && fetchesMembers(h.mode()) && h.plannedFile(m))) {
            // Its block is served wrong by the store: the member's own bytes, checked by its own
            // hash, may be intact; the block would be fetched twice more and fail again.
            if (h.blockFailed(m, list)) {
                return new Source.MemberGet(list);
            }
            // Blocks serve a stream better than member GETs only if they are kept: on a disk that
            // keeps nothing a member's 1 MiB block is fetched for its few KB and soon dropped (a
            // shuffled pass fetched 17x what it read), so the member is fetched on its own.
            // A lookup a plan fetches on its own (a tensor whose reader told its picks ahead) is
            // fetched so when its reader outruns the plan too, not through its shard's blocks.
            if (!h.blocksInFlight(m, list) && (m.lookup() && h.plannedFile(m)
                    || !(h.followsBlocks(m, list, at) && h.diskKeeps()))) {
                return new Source.MemberGet(list);
            }
        }
        return new Source.Blocks(list);
    }

    /**
     * Whether the mode fetches members on their own and the member is small enough: auto and
     * remote do; hybrid fetches whole blobs at first touch, local fetches nothing. A lookup (a
     * tensor, a safetensors header) is small enough up to the member cache's 1 MiB: the blocks
     * around it are what the reader skips.
     */
    static boolean memberGetAllowed(BlobMember m, CacheMode mode) {
        long max = m.lookup() ? MemberReads.MEMBER_BLOCK_SIZE : MemberReads.MAX_FETCH_BYTES;
        return m.length() <= max && fetchesMembers(mode);
    }

    /** Whether the mode fetches members on their own at all: auto and remote. */
    private static boolean fetchesMembers(CacheMode mode) {
        return mode.fetches() && mode != CacheMode.HYBRID;
    }

    /**
     * Whether a member index is read whole in one GET ({@link Source#WholeBlob}) rather than
     * through its blocks: at most {@link WholeBlobReads#MAX_BYTES}, first touch (its list is
     * neither in memory nor on disk), and a mode that fetches.
     */
    static boolean indexWhole(BlobRef blob, boolean listKnownHere, CacheMode mode) {
        return blob.size() > 0 && blob.size() <= WholeBlobReads.MAX_BYTES && mode.fetches() && !listKnownHere;
    }
}
