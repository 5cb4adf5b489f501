package io.warpdata.blobcache.cache;

import io.warpdata.store.StoreUnavailableException;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Block hash lists loaded before a read asks for them ({@link BlockCache#prefetchHashLists}):
 * when an artifact's folder is entered, the lists of its shards load while its member index does
 * (which says which shard and offset a member is at: a round trip of its own), so that the first
 * read of a member waits for its data block only, not for its shard's list and then the block. Each load goes
 * through {@link HashLists} (one load per list however many want it; a read that needs a list
 * being prefetched waits for that load, a read that needs one still queued loads it itself), so
 * a prefetched list is checked and kept exactly like one a read fetched.
 *
 * <p>A hint, bounded so that it can never cost a read anything: lists waiting are at most
 * {@link #QUEUED} (the oldest are dropped), loads in flight at most {@link #IN_FLIGHT}, and what
 * they may allocate at most {@link #MAX_BYTES_IN_FLIGHT}. A failed load is dropped without a log
 * line: the read that needs the list loads it again and reports the error. While the store does
 * not answer, prefetching stops ({@link #PAUSE}): an outage is no time for requests nobody
 * waits for, and versions opened from the last known state must not add a wave of refused
 * requests to the store's failure counts each. Nothing here blocks the caller or holds a lock
 * across a store call. Thread-safe.
 */
final class HashListPrefetcher {
    /**
     * Loads in flight at once: 16. Enough that the lists of a version of up to 16 shards arrive
     * in one round trip; a quarter of the S3 client's 64 connections, so reads keep the rest.
     */
    static final int IN_FLIGHT = 16;
    /**
     * What the loads in flight may allocate together: 64 MiB, as much as the memory the cache
     * keeps lists in. Each load counts the most its list may take
     * ({@link BlockHashList#maxSerializedSize}: a store lying about a list can make us read that
     * much before the hash check refuses it), and at least a 16th of this, so that small lists
     * go {@link #IN_FLIGHT} at a time. A blob whose list could take more (over 8 GiB at the
     * smallest block size) is never prefetched: its first read loads its list.
     */
    static final long MAX_BYTES_IN_FLIGHT = 64L << 20;
    /**
     * Lists waiting for a load: 1024, the lists of 16 artifacts or tables entered at once at 64
     * lists each; when more arrive, the oldest go (their folders were entered earlier).
     */
    static final int QUEUED = 1024;

    /**
     * After a load found the store not answering ({@link StoreUnavailableException}), nothing is
     * prefetched for 5 s and what was queued is dropped: as long as warpd leaves an unreachable
     * store alone before probing it again ({@link io.warpdata.store.StoreHealth#PROBE_INTERVAL}).
     */
    static final Duration PAUSE = Duration.ofSeconds(5);

    private final HashLists lists;
    private final BlockFetcher fetcher;
    /** Guarded by this, as is {@link #budget}. */
    private final ArrayDeque<BlobRef> queue = new ArrayDeque<>();
    private long budget = MAX_BYTES_IN_FLIGHT;
    private boolean closed;
    /** System.nanoTime before which nothing is prefetched; guarded by this. */
    private long pausedUntil = System.nanoTime();

    HashListPrefetcher(HashLists lists, BlockFetcher fetcher) {
        this.lists = lists;
        this.fetcher = fetcher;
    }

    /** Queues the lists of {@code blobs} not yet in memory and starts loads as the bounds allow; returns at once. */
    void prefetch(List<BlobRef> blobs) {
        synchronized (this) {
            if (System.nanoTime() - pausedUntil < 0) {
                return;
            }
            for (BlobRef blob : blobs) {
                if (closed || cost(blob) > MAX_BYTES_IN_FLIGHT || lists.getIfPresent(blob.blocks()) != null) {
                    continue;
                }
                queue.addLast(blob);
                if (queue.size() > QUEUED) {
                    queue.pollFirst();
                }
            }
        }
        pump();
    }

    /** Starts queued loads while the bounds allow; each load that ends starts the next. */
    private void pump() {
        while (true) {
            BlobRef next;
            long cost;
            synchronized (this) {
                next = queue.peekFirst();
                if (next == null || closed) {
                    return;
                }
                cost = cost(next);
                if (cost > budget) {
                    return; // a load in flight ends, gives its bytes back and pumps again
                }
                queue.pollFirst();
                if (lists.getIfPresent(next.blocks()) != null) {
                    continue;
                }
                budget -= cost;
            }
            CompletableFuture<BlockHashList> load = lists.loading(next, fetcher.deadlineFromNow());
            if (load.isDone()) {
                // In memory meanwhile, or a load that already ended: no callback, no recursion.
                ended(load.isCompletedExceptionally() ? load.exceptionNow() : null, cost);
            } else {
                load.whenComplete((list, failed) -> {
                    ended(failed, cost);
                    pump();
                });
            }
        }
    }

    /** A load ended ({@code failed} null if it succeeded): its bytes come back; an unanswering store pauses prefetching. */
    private synchronized void ended(Throwable failed, long cost) {
        budget += cost;
        if (Deadlines.unwrap(failed) instanceof StoreUnavailableException) {
            pausedUntil = System.nanoTime() + PAUSE.toNanos();
            queue.clear();
        }
    }

    /** The share of {@link #MAX_BYTES_IN_FLIGHT} a load of {@code blob}'s list takes. */
    private static long cost(BlobRef blob) {
        return Math.max(BlockHashList.maxSerializedSize(blob.size()), MAX_BYTES_IN_FLIGHT / IN_FLIGHT);
    }

    /** Whether nothing is queued or loading (tests count what a read sequence left behind). */
    synchronized boolean idle() {
        return queue.isEmpty() && budget == MAX_BYTES_IN_FLIGHT;
    }

    /** Drops what is queued; loads in flight end on their own. */
    synchronized void close() {
        closed = true;
        queue.clear();
    }
}
