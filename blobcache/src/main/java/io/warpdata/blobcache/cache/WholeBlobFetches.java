package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Whole blobs fetched in the background at read-ahead priority, a few runs at a time across all
 * of them: hybrid mode's first touch of a blob, and auto mode's blobs read densely at random
 * (a shuffled pass over a tar shard). Runs are registered and queued through the
 * {@link FetchScheduler} like any other.
 */
final class WholeBlobFetches {
    /**
     * Runs all whole-blob fetches together keep in flight at the largest run size (enough
     * to fill the pipe, few enough to leave room for reads); smaller runs (a slower connection,
     * {@link ConnectionRate}) get more, up to the same {@link #HYBRID_BYTES_IN_FLIGHT}.
     */
    static final int HYBRID_RUNS_IN_FLIGHT = 4;
    /** Bytes of hybrid runs in flight: 4 runs of 32 MiB, or 32 of 4 MiB (bounded by the read-ahead workers). */
    static final long HYBRID_BYTES_IN_FLIGHT = (long) HYBRID_RUNS_IN_FLIGHT * FetchScheduler.MAX_RUN_BYTES;
    /** Progress of a hybrid-mode whole-blob fetch. */
    private static final class HybridCursor {
        final BlobRef blob;
        final BlockHashList list;
        int next;

        HybridCursor(BlobRef blob, BlockHashList list) {
            this.blob = blob;
            this.list = list;
        }
    }

    private final FetchScheduler scheduler;
    private final ReadMetrics metrics;
    private final ConnectionRate rate;
    private final int maxPrefetchWorkers;
    private final Queue<HybridCursor> hybridQueue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger hybridRuns = new AtomicInteger();

    WholeBlobFetches(FetchScheduler scheduler, ReadMetrics metrics, ConnectionRate rate, int maxPrefetchWorkers) {
        this.scheduler = scheduler;
        this.metrics = metrics;
        this.rate = rate;
        this.maxPrefetchWorkers = maxPrefetchWorkers;
    }

    /** Hybrid mode: fetch all of {@code blob} in the background, {@link #HYBRID_RUNS_IN_FLIGHT} runs at a time with other blobs. */
    void fetch(BlobRef blob, BlockHashList list) {
        hybridQueue.add(new HybridCursor(blob, list));
        pumpHybrid();
    }

    private void pumpHybrid() {
        while (!scheduler.closed()) {
            HybridCursor c = hybridQueue.peek();
            if (c == null || !startHybridRun()) {
                return;
            }
            List<Fetch> run = null;
            synchronized (c) {
                int bs = c.list.blockSize();
                int count = c.list.blockCount();
                c.next = scheduler.inFlight().nextMissing(c.blob, bs, c.next, count);
                if (c.next < count) {
                    int end = scheduler.inFlight().missingRunEnd(c.blob, c.list, c.next, count, Math.max(1, rate.runBytes() / bs),
                            Long.MAX_VALUE);
                    run = scheduler.inFlight().register(c.blob, c.list, c.next, end, true);
                    c.next += Math.max(1, run.size());
                }
            }
            if (run == null) {
                hybridQueue.remove(c);
                hybridRuns.decrementAndGet();
                continue;
            }
            if (run.isEmpty()) {
                hybridRuns.decrementAndGet();
                continue;
            }
            metrics.prefetchedBlocks.add(run.size());
            CompletableFuture.allOf(run.stream().map(f -> f.done).toArray(CompletableFuture[]::new))
                    .whenComplete((v, e) -> {
                        hybridRuns.decrementAndGet();
                        pumpHybrid();
                    });
            scheduler.enqueueBackground(run);
        }
    }

    /** Takes a hybrid run slot: {@link #HYBRID_BYTES_IN_FLIGHT} at the current run size, 4 or more, at most the read-ahead workers. */
    private boolean startHybridRun() {
        int limit = (int) Math.max(HYBRID_RUNS_IN_FLIGHT, Math.min(maxPrefetchWorkers, HYBRID_BYTES_IN_FLIGHT / rate.runBytes()));
        while (true) {
            int n = hybridRuns.get();
            if (n >= limit) {
                return false;
            }
            if (hybridRuns.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }

    /** Whether no whole blob is waiting to be fetched. */
    boolean idle() {
        return hybridQueue.isEmpty();
    }
}
