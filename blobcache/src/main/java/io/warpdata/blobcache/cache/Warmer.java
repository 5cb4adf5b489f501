package io.warpdata.blobcache.cache;

import io.warpdata.store.StoreException;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * {@code warpctl warm}: makes sure a blob's blocks are cached, fetching the missing ones in
 * order through the {@link FetchScheduler} at read-ahead priority (so a reader's own fetches go
 * first), {@link #WARM_RUNS_IN_FLIGHT} runs at a time, and returning only once they are on disk.
 */
final class Warmer {
    /** Runs one warm() keeps in flight: enough to fill the pipe, few enough to leave room for reads. */
    static final int WARM_RUNS_IN_FLIGHT = 4;

    private final FetchScheduler scheduler;

    Warmer(FetchScheduler scheduler) {
        this.scheduler = scheduler;
    }

    /**
     * See {@link BlockCache#warm}: the first {@code count} blocks of {@code blob}, skipping cached
     * ones, stopping early without error when the cache's limit would be exceeded or when
     * cancelled.
     *
     * @throws StoreException if a fetch fails (after retries)
     */
    WarmResult warm(BlobRef blob, BlockHashList list, int count, WarmListener listener, BooleanSupplier cancelled) {
        WarmResult r = warm(blob, list, List.of(new int[] {0, count}), listener, cancelled);
        if (count >= list.blockCount()) {
            return r;
        }
        // Complete means the whole blob: a warm of its first blocks is not.
        return new WarmResult(r.blocksFetched(), r.bytesFetched(), r.blocksCached(), r.bytesCached(), false, r.cancelled(),
                r.bytesNotKept());
    }

    /**
     * As {@link #warm(BlobRef, BlockHashList, int, WarmListener, BooleanSupplier)}, for the blocks
     * of {@code spans} ({@code [first, end)} block indexes, ascending, not overlapping): the
     * blocks a view's members lie in, say. Runs never cross a span's end, and the window of runs
     * in flight carries over from one span to the next. Complete when every span is covered.
     */
    WarmResult warm(BlobRef blob, BlockHashList list, List<int[]> spans, WarmListener listener, BooleanSupplier cancelled) {
        int bs = list.blockSize();
        long spanBytes = 0;
        for (int[] span : spans) {
            for (int i = span[0]; i < span[1]; i++) {
                spanBytes += list.blockLength(i);
            }
        }
        int maxRun = FetchScheduler.maxRunBlocks(bs);
        long fetchedBlocks = 0;
        long fetchedBytes = 0;
        long cachedBlocks = 0;
        long cachedBytes = 0;
        long notKeptBytes = 0;
        long scheduledBytes = 0;
        boolean stopped = false;
        boolean wasCancelled = false;
        RuntimeException failure = null;
        ArrayDeque<List<Fetch>> window = new ArrayDeque<>();
        int span = 0;
        int b = spans.isEmpty() ? 0 : spans.get(0)[0];
        while (true) {
            while (!stopped && window.size() < WARM_RUNS_IN_FLIGHT && span < spans.size()) {
                int count = spans.get(span)[1];
                if (b >= count) {
                    span++;
                    if (span < spans.size()) {
                        b = Math.max(b, spans.get(span)[0]);
                    }
                    continue;
                }
                if (cancelled.getAsBoolean() || scheduler.closed()) {
                    wasCancelled = true;
                    stopped = true;
                    break;
                }
                BlockKey key = new BlockKey(blob.id(), bs, b);
                if (scheduler.inFlight().cachedOrInFlight(key)) {
                    cachedBlocks++;
                    cachedBytes += list.blockLength(b);
                    if (!scheduler.inFlight().inFlight(key) && !scheduler.inFlight().keep(key, list.id())) {
                        // In the memory fallback (the disk refused it once) and the disk refuses it still.
                        notKeptBytes += list.blockLength(b);
                    }
                    b++;
                    continue;
                }
                long room = scheduler.limitBytes() - cachedBytes - scheduledBytes;
                if (list.blockLength(b) > room) {
                    stopped = true;
                    break;
                }
                int end = scheduler.inFlight().missingRunEnd(blob, list, b, count, maxRun, room);
                List<Fetch> run = scheduler.inFlight().register(blob, list, b, end, false);
                if (run.isEmpty()) {
                    continue;
                }
                scheduledBytes += BlockFetcher.runLength(list, b, run.size());
                scheduler.enqueueBackground(run);
                window.add(run);
                b += run.size();
            }
            List<Fetch> run = window.poll();
            if (run == null) {
                break;
            }
            long deadline = scheduler.deadlineFromNow();
            for (Fetch f : run) {
                try {
                    scheduler.await(f, deadline);
                    // Return only once the block is on disk: warm's promise is "cached".
                    Deadlines.await(f.settled, deadline, () -> "writing " + f.key + " to the cache");
                    fetchedBlocks++;
                    fetchedBytes += f.list.blockLength(f.key.index());
                    if (!scheduler.inFlight().kept(f.key)) {
                        // Below the floor, read-only, full: served, not kept (audit 23: "in cache", exit 0).
                        notKeptBytes += f.list.blockLength(f.key.index());
                    }
                } catch (RuntimeException e) {
                    if (failure == null) {
                        failure = e;
                    }
                    stopped = true;
                }
            }
            listener.progress(cachedBytes + fetchedBytes, spanBytes);
        }
        if (failure != null) {
            throw failure;
        }
        return new WarmResult(fetchedBlocks, fetchedBytes, cachedBlocks, cachedBytes,
                !stopped && span >= spans.size() && notKeptBytes == 0, wasCancelled, notKeptBytes);
    }

    /** Byte ranges as ascending, disjoint {@code [first, end)} block spans, cut off at {@code maxBytes} of blocks. */
    static List<int[]> blockSpans(BlockHashList list, List<long[]> ranges, long maxBytes) {
        int bs = list.blockSize();
        List<long[]> sorted = new ArrayList<>(ranges);
        sorted.sort(java.util.Comparator.comparingLong(r -> r[0]));
        List<int[]> spans = new ArrayList<>();
        long budget = maxBytes;
        for (long[] r : sorted) {
            if (r[1] <= r[0]) {
                continue;
            }
            int first = (int) Math.min(r[0] / bs, list.blockCount());
            int end = (int) Math.min((r[1] + bs - 1) / bs, list.blockCount());
            int[] last = spans.isEmpty() ? null : spans.get(spans.size() - 1);
            if (last != null && first <= last[1]) {
                first = last[1];
            }
            int b = first;
            while (b < end && budget >= list.blockLength(b)) {
                budget -= list.blockLength(b);
                b++;
            }
            if (b > first) {
                if (last != null && first == last[1]) {
                    last[1] = b;
                } else {
                    spans.add(new int[] {first, b});
                }
            }
            if (b < end) {
                break;
            }
        }
        return spans;
    }
}
