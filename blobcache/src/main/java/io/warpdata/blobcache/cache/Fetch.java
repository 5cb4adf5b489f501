package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One block's fetch: created once by the {@link FetchScheduler}, shared by every reader of the
 * block until it is cached. {@link #done} delivers the verified bytes (or the failure),
 * {@link #settled} completes once the outcome is final: written to the cache (or not), out of
 * the in-flight map.
 */
final class Fetch {
    static final int QUEUED = 0;
    static final int QUEUED_DEMANDED = 1;
    static final int RUNNING = 2;

    /** A fetch completed with this means "it was cached meanwhile: read it from the cache". */
    static final BlockBytes RETRY = new BlockBytes(null, 0, 0, false);

    /**
     * Verified bytes of one block inside a fetch buffer. A reader must {@link RunBuffers.Run#retain}
     * the run before copying (and release it after): the buffer is reused once the run is cached.
     *
     * @param mirrored whether a mirror served the bytes (else the store did)
     */
    record BlockBytes(RunBuffers.Run run, int offset, int length, boolean mirrored) {
    }

    final BlockKey key;
    final BlobRef blob;
    final BlockHashList list;
    final boolean prefetch;
    final CompletableFuture<BlockBytes> done = new CompletableFuture<>();
    /** Completes once the outcome is final: bytes written to the cache (or not), map entry gone. */
    final CompletableFuture<Void> settled = new CompletableFuture<>();
    final AtomicInteger state;
    /**
     * Taken exactly once: by the first reader that waits on this read-ahead fetch (a prefetch
     * hit), or else through the cache entry it becomes, which shares this flag (a hit when
     * first read there, waste if evicted unread). Sharing it closes the window in which the
     * entry had taken the credit but a reader still got the block from the fetch: then
     * neither counted a hit.
     */
    final AtomicBoolean prefetchCredit = new AtomicBoolean();

    Fetch(BlockKey key, BlobRef blob, BlockHashList list, boolean prefetch, int state) {
        this.key = key;
        this.blob = blob;
        this.list = list;
        this.prefetch = prefetch;
        this.state = new AtomicInteger(state);
    }

    /** Whether the caller may run this fetch (exactly one caller ever gets true). */
    boolean claim() {
        return state.compareAndSet(QUEUED, RUNNING) || state.compareAndSet(QUEUED_DEMANDED, RUNNING);
    }

    /** Whether the caller should queue this (not yet started) fetch at high priority. */
    boolean promote() {
        return state.compareAndSet(QUEUED, QUEUED_DEMANDED);
    }

    /** Completed without bytes: the block was cached meanwhile (or read-ahead was dropped). */
    void retry() {
        done.complete(RETRY);
        settled.complete(null);
    }
}
