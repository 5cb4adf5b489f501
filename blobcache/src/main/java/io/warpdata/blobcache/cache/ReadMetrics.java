package io.warpdata.blobcache.cache;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counters of the read path. Cheap to bump from many threads; read with {@link #snapshot()}. A
 * {@link GetListener} given at construction (warpd's Prometheus histograms) hears of every GET as
 * it completes.
 */
public final class ReadMetrics {
    public final LongAdder getsIssued = new LongAdder();
    public final LongAdder bytesFetched = new LongAdder();
    public final LongAdder hitBlocks = new LongAdder();
    public final LongAdder hitBytes = new LongAdder();
    public final LongAdder missBlocks = new LongAdder();
    public final LongAdder missBytes = new LongAdder();
    public final LongAdder prefetchedBlocks = new LongAdder();
    /** Of the prefetched blocks, those fetched for an order plan (a reader's announced order). */
    public final LongAdder plannedBlocks = new LongAdder();
    /** Files fetched on their own for an order plan over more than the cache keeps (each a prefetched block too). */
    public final LongAdder plannedFiles = new LongAdder();
    /** Members that left the disk index for the spare ones kept on disk: its count bound, or a plan's reader passed them ({@code SpareMembers}). */
    public final LongAdder membersSpared = new LongAdder();
    /** Spare members read back into the index. */
    public final LongAdder spareMemberHits = new LongAdder();
    public final LongAdder prefetchHitBlocks = new LongAdder();
    /** Cached blocks whose files were read into the page cache ahead of a sequential reader ({@link PageCacheHints}). */
    public final LongAdder diskReadAheadBlocks = new LongAdder();
    public final LongAdder prefetchWastedBytes = new LongAdder();
    /** Blobs auto mode fetched whole because they were being read densely at random (a shuffled pass over a shard). */
    public final LongAdder denseRandomBlobs = new LongAdder();
    /** Member reads served from a copy of the member cached under its SHA-256 (it was fetched on its own). */
    public final LongAdder memberHits = new LongAdder();
    /** Members fetched on their own (one ranged GET of exactly their bytes, checked against their SHA-256). */
    public final LongAdder memberFetches = new LongAdder();
    /** Bytes those member GETs brought (refetches after a mismatch included). */
    public final LongAdder memberFetchedBytes = new LongAdder();
    /** Member reads served from the cached blocks of another blob that holds the same bytes (another dataset's shard). */
    public final LongAdder dedupHits = new LongAdder();
    public final LongAdder verificationFailures = new LongAdder();
    public final LongAdder retries = new LongAdder();
    public final LongAdder evictions = new LongAdder();
    public final LongAdder evictedBytes = new LongAdder();
    public final LongAdder readErrors = new LongAdder();
    /** Fetched blocks served but not cached: no room above the free-space floor, or the write failed (ENOSPC, EROFS, directory gone). */
    public final LongAdder cacheWritesSkipped = new LongAdder();
    /** Cached blocks found damaged on the cache's disk (a CRC32C or hash that failed, a file that could not be read) and deleted. */
    public final LongAdder cacheCorruptBlocks = new LongAdder();
    /** When a fetched block was last not kept on disk ({@link System#nanoTime()}; 0: never). */
    private volatile long lastWriteSkippedNanos;
    /** GETs of data under way right now (a gauge: incremented when one starts, decremented when it ends). */
    public final LongAdder getsInFlight = new LongAdder();

    /** A fetched block served but not kept on disk (see {@link #cacheWritesSkipped}). */
    void writeSkipped() {
        cacheWritesSkipped.increment();
        lastWriteSkippedNanos = System.nanoTime();
    }

    /**
     * The disk was found unable to keep a block ({@link BlockStorage#keepsNothingNow}), before any
     * write: {@link #diskKeeps} says so as after a skipped write, none counted.
     */
    void diskKeepsNothing() {
        lastWriteSkippedNanos = System.nanoTime();
    }

    /**
     * Whether the disk kept every block it was given lately: no write was skipped (no room above
     * the floor, a failed write) in the last {@code windowNanos}.
     */
    boolean diskKeeps(long windowNanos) {
        long last = lastWriteSkippedNanos;
        return last == 0 || System.nanoTime() - last > windowNanos;
    }

    /** Reads and bytes by where they came from, by {@link ReadSource#ordinal()}; bumped only by {@link ReadExecutor}. */
    private final LongAdder[] sourceReads = adders(ReadSource.values().length);
    private final LongAdder[] sourceBytes = adders(ReadSource.values().length);

    private final GetListener getListener;

    /**
     * Reads and bytes served by one source since start.
     *
     * @param reads reads counted under it (each read once)
     * @param bytes bytes it served (each byte once: all sources add up to hit plus miss bytes)
     */
    public record SourceCount(ReadSource source, long reads, long bytes) {
    }

    private static LongAdder[] adders(int n) {
        LongAdder[] a = new LongAdder[n];
        for (int i = 0; i < n; i++) {
            a[i] = new LongAdder();
        }
        return a;
    }

    /** One read served by {@code source}. */
    void sourceRead(ReadSource source) {
        sourceReads[source.ordinal()].increment();
    }

    /** {@code bytes} of a read served by {@code source}. */
    void sourceBytes(ReadSource source, long bytes) {
        sourceBytes[source.ordinal()].add(bytes);
    }

    /** Reads served by {@code source} since start. */
    public long reads(ReadSource source) {
        return sourceReads[source.ordinal()].sum();
    }

    /** Bytes served by {@code source} since start. */
    public long bytes(ReadSource source) {
        return sourceBytes[source.ordinal()].sum();
    }

    /** Reads and bytes of every source, in the order of {@link ReadSource}. */
    public List<SourceCount> bySource() {
        List<SourceCount> out = new ArrayList<>(sourceReads.length);
        for (ReadSource s : ReadSource.values()) {
            out.add(new SourceCount(s, reads(s), bytes(s)));
        }
        return List.copyOf(out);
    }

    /**
     * Hears of every GET of data that completed: how long it took and how many bytes it brought.
     * Called on fetch threads right after the GET, so it must be cheap and must not block.
     */
    @FunctionalInterface
    public interface GetListener {
        /** Listens to nothing. */
        GetListener NONE = (nanos, bytes) -> { };

        /**
         * @param nanos the GET's duration, from the request to its last byte
         * @param bytes the bytes it brought
         */
        void onGet(long nanos, long bytes);

        /**
         * A GET that failed (timed out, refused, cut off), after {@code nanos}: its latency counts
         * too, or a hung store would not show in the latency a dashboard watches.
         */
        default void onGetFailed(long nanos) {
        }
    }

    /** Counters whose GETs no one listens to. */
    public ReadMetrics() {
        this(GetListener.NONE);
    }

    /** Counters that tell {@code listener} of every completed GET ({@link #getCompleted}). */
    public ReadMetrics(GetListener listener) {
        this.getListener = java.util.Objects.requireNonNull(listener, "listener");
    }

    /** Counts a completed GET of {@code bytes} that took {@code nanos}, and tells the listener. */
    public void getCompleted(long nanos, long bytes) {
        bytesFetched.add(bytes);
        getListener.onGet(nanos, bytes);
    }

    /** A GET that went to the store and failed after {@code nanos}. */
    public void getFailed(long nanos) {
        getListener.onGetFailed(nanos);
    }

    /** All counters by name (snake_case), in a stable order. */
    public Map<String, Long> snapshot() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("gets_issued", getsIssued.sum());
        m.put("bytes_fetched", bytesFetched.sum());
        m.put("hit_blocks", hitBlocks.sum());
        m.put("hit_bytes", hitBytes.sum());
        m.put("miss_blocks", missBlocks.sum());
        m.put("miss_bytes", missBytes.sum());
        m.put("prefetched_blocks", prefetchedBlocks.sum());
        m.put("planned_blocks", plannedBlocks.sum());
        m.put("planned_files", plannedFiles.sum());
        m.put("prefetch_hit_blocks", prefetchHitBlocks.sum());
        m.put("prefetch_wasted_bytes", prefetchWastedBytes.sum());
        m.put("disk_read_ahead_blocks", diskReadAheadBlocks.sum());
        m.put("dense_random_blobs", denseRandomBlobs.sum());
        m.put("member_hits", memberHits.sum());
        m.put("member_fetches", memberFetches.sum());
        m.put("member_fetched_bytes", memberFetchedBytes.sum());
        m.put("dedup_hits", dedupHits.sum());
        m.put("members_spared", membersSpared.sum());
        m.put("spare_member_hits", spareMemberHits.sum());
        m.put("verification_failures", verificationFailures.sum());
        m.put("retries", retries.sum());
        m.put("evictions", evictions.sum());
        m.put("evicted_bytes", evictedBytes.sum());
        m.put("read_errors", readErrors.sum());
        m.put("cache_writes_skipped", cacheWritesSkipped.sum());
        m.put("cache_corrupt_blocks", cacheCorruptBlocks.sum());
        return m;
    }
}
