package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntPredicate;

/**
 * The blocks being fetched: one {@link Fetch} per block, however many readers and planners want
 * it (single flight), registered here from the moment it is planned until it is cached or failed.
 * With the local tiers it answers what every planner of runs asks ({@link FetchScheduler},
 * {@link Warmer}, {@link WholeBlobFetches}): which blocks are missing, neither cached nor in flight.
 * Thread-safe; holds no lock.
 */
final class InFlightBlocks {
    private final ConcurrentHashMap<BlockKey, Fetch> fetches = new ConcurrentHashMap<>();
    private final BlockStorage storage;

    InFlightBlocks(BlockStorage storage) {
        this.storage = storage;
    }

    /** Whether a block is cached or being fetched. */
    boolean cachedOrInFlight(BlockKey key) {
        return fetches.containsKey(key) || storage.contains(key);
    }

    /** Whether a block is cached (in a local tier). */
    boolean cached(BlockKey key) {
        return storage.contains(key);
    }

    /** Whether a block is cached where it outlives warpd ({@link Tier#kept}). */
    boolean kept(BlockKey key) {
        return storage.kept(key);
    }

    /** Whether a block is kept where it outlives warpd, moved there now if it can be ({@link Tier#keep}). */
    boolean keep(BlockKey key, io.warpdata.manifest.BlobId listId) {
        return storage.keep(key, listId);
    }

    /** Whether a block is being fetched now. */
    boolean inFlight(BlockKey key) {
        return fetches.containsKey(key);
    }

    /** The first block at or after {@code from}, before {@code limit}, that is neither cached nor in flight ({@code limit} if none). */
    int nextMissing(BlobRef blob, int blockSize, int from, int limit) {
        int b = from;
        while (b < limit && cachedOrInFlight(new BlockKey(blob.id(), blockSize, b))) {
            b++;
        }
        return b;
    }

    /**
     * The end (exclusive) of the run of consecutive missing blocks that starts at missing block
     * {@code from}: before {@code limit}, at most {@code maxBlocks} blocks and {@code maxBytes}
     * bytes (the first block always counts, however large).
     */
    int missingRunEnd(BlobRef blob, BlockHashList list, int from, int limit, int maxBlocks, long maxBytes) {
        int bs = list.blockSize();
        int end = from + 1;
        long bytes = list.blockLength(from);
        while (end < limit && end - from < maxBlocks && bytes + list.blockLength(end) <= maxBytes
                && !cachedOrInFlight(new BlockKey(blob.id(), bs, end))) {
            bytes += list.blockLength(end);
            end++;
        }
        return end;
    }

    /**
     * The run of missing blocks around missing block {@code block}: forward, then backward, the
     * neighbours that are {@code wanted} and neither cached nor in flight, at most
     * {@code maxBlocks} in all (an order plan's run: {@link OrderPrefetcher.PlannedRun}).
     *
     * @return blocks {@code [start, end)} packed as {@code start << 32 | end}
     */
    long missingAround(BlobRef blob, BlockHashList list, int block, int maxBlocks, IntPredicate wanted) {
        int bs = list.blockSize();
        int end = block + 1;
        while (end < list.blockCount() && end - block < maxBlocks && wanted.test(end)
                && !cachedOrInFlight(new BlockKey(blob.id(), bs, end))) {
            end++;
        }
        int start = block;
        while (start > 0 && end - start < maxBlocks && wanted.test(start - 1)
                && !cachedOrInFlight(new BlockKey(blob.id(), bs, start - 1))) {
            start--;
        }
        return (long) start << 32 | end;
    }

    /** Registers fetches for blocks [from, to), stopping at the first one cached or in flight. */
    List<Fetch> register(BlobRef blob, BlockHashList list, int from, int to, boolean prefetch) {
        List<Fetch> run = new ArrayList<>(to - from);
        for (int i = from; i < to; i++) {
            Fetch f = new Fetch(new BlockKey(blob.id(), list.blockSize(), i), blob, list, prefetch, Fetch.QUEUED);
            if (fetches.putIfAbsent(f.key, f) != null) {
                break;
            }
            if (storage.contains(f.key)) {
                fetches.remove(f.key, f);
                f.retry();
                break;
            }
            run.add(f);
        }
        return run;
    }

    /** The fetch of {@code key} under way, or null. */
    Fetch get(BlockKey key) {
        return fetches.get(key);
    }

    /** Registers {@code f} unless a fetch of its block is under way: returns that one, or null if {@code f} was registered. */
    Fetch putIfAbsent(Fetch f) {
        return fetches.putIfAbsent(f.key, f);
    }

    /** Takes {@code f} out (only if it is still the one registered for its block). */
    void retire(Fetch f) {
        fetches.remove(f.key, f);
    }

    boolean isEmpty() {
        return fetches.isEmpty();
    }

    /** The fetches under way now (a copy). */
    List<Fetch> snapshot() {
        return List.copyOf(fetches.values());
    }
}
