package io.warpdata.blobcache;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/** Counters of the read path. Cheap to bump from many threads; read with {@link #snapshot()}. */
public final class ReadMetrics {
    public final LongAdder getsIssued = new LongAdder();
    public final LongAdder bytesFetched = new LongAdder();
    public final LongAdder hitBlocks = new LongAdder();
    public final LongAdder hitBytes = new LongAdder();
    public final LongAdder missBlocks = new LongAdder();
    public final LongAdder missBytes = new LongAdder();
    public final LongAdder prefetchedBlocks = new LongAdder();
    public final LongAdder prefetchHitBlocks = new LongAdder();
    public final LongAdder prefetchWastedBytes = new LongAdder();
    public final LongAdder verificationFailures = new LongAdder();
    public final LongAdder retries = new LongAdder();
    public final LongAdder evictions = new LongAdder();
    public final LongAdder evictedBytes = new LongAdder();
    public final LongAdder readErrors = new LongAdder();

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
        m.put("prefetch_hit_blocks", prefetchHitBlocks.sum());
        m.put("prefetch_wasted_bytes", prefetchWastedBytes.sum());
        m.put("verification_failures", verificationFailures.sum());
        m.put("retries", retries.sum());
        m.put("evictions", evictions.sum());
        m.put("evicted_bytes", evictedBytes.sum());
        m.put("read_errors", readErrors.sum());
        return m;
    }
}
