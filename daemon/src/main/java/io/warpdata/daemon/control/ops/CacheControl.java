package io.warpdata.daemon.control.ops;

import io.warpdata.manifest.BlobRef;

import java.util.Map;
import java.util.OptionalLong;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;

/**
 * The disk block cache as the control socket drives it; warpd implements it over BlockCache.
 * Implementations are thread-safe: warm, gc and verify may run while the mount reads.
 */
public interface CacheControl {

    /**
     * Counters and sizes (size, limit, hit rate, GETs, bytes fetched, prefetch efficiency,
     * evictions...), snake_case names, JSON-serialisable values.
     */
    Map<String, Object> stats();

    /**
     * Evicts least valuable blocks until the cache holds at most {@code limit} bytes (the
     * configured limit when empty). Blocks under an open read are kept.
     *
     * @throws io.warpdata.manifest.WarpException on failure
     */
    GcResult gc(OptionalLong limit);

    /**
     * Re-hashes every cached block and removes the bad ones.
     *
     * @param progress receives the bytes checked so far
     * @throws io.warpdata.manifest.WarpException on failure
     */
    VerifyResult verify(LongConsumer progress, BooleanSupplier cancelled);

    /**
     * Makes sure the first {@code maxBytes} of {@code blob} are cached, fetching missing blocks
     * (already-cached blocks are skipped) and honouring the cache limit.
     *
     * @param progress receives the bytes of {@code blob} covered so far (cached or fetched)
     * @throws io.warpdata.manifest.WarpException on failure
     */
    WarmResult warm(BlobRef blob, long maxBytes, LongConsumer progress, BooleanSupplier cancelled);

    record GcResult(long bytesBefore, long bytesAfter, long blocksEvicted, long bytesEvicted) {
    }

    record VerifyResult(long blocksChecked, long bytesChecked, long blocksRemoved) {
    }

    /** {@code bytesCovered}: bytes of the blob now in the cache; {@code bytesFetched}: of those, fetched by this call. */
    record WarmResult(long bytesCovered, long bytesFetched) {
    }
}
