package io.warpdata.daemon.control.wiring;

import io.warpdata.blobcache.cache.BlockCache;
import io.warpdata.blobcache.cache.CacheStats;
import io.warpdata.daemon.control.ops.CacheControl;
import io.warpdata.manifest.BlobRef;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;

/** {@link CacheControl} over the daemon's {@link BlockCache}. */
public final class BlockCacheControl implements CacheControl {
    private final BlockCache cache;

    public BlockCacheControl(BlockCache cache) {
        this.cache = cache;
    }

    @Override
    public Map<String, Object> stats() {
        CacheStats s = cache.stats();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("mode", s.mode().toString().toLowerCase(java.util.Locale.ROOT));
        m.put("dir", s.dir());
        m.put("size_bytes", s.sizeBytes());
        m.put("limit_bytes", s.limitBytes());
        m.put("free_floor_bytes", s.freeFloorBytes());
        m.put("blocks", s.blocks());
        m.put("hit_rate", s.hitRate());
        long prefetched = s.counters().getOrDefault("prefetched_blocks", 0L);
        long prefetchHits = s.counters().getOrDefault("prefetch_hit_blocks", 0L);
        m.put("prefetch_efficiency", prefetched == 0 ? 0.0 : (double) prefetchHits / prefetched);
        m.put("counters", s.counters());
        return m;
    }

    @Override
    public GcResult gc(OptionalLong limit) {
        long before = cache.stats().sizeBytes();
        long evictionsBefore = cache.metrics().evictions.sum();
        long freed = cache.gc(limit.orElse(cache.stats().limitBytes()));
        long after = cache.stats().sizeBytes();
        return new GcResult(before, after, cache.metrics().evictions.sum() - evictionsBefore, freed);
    }

    @Override
    public VerifyResult verify(LongConsumer progress, BooleanSupplier cancelled) {
        // BlockCache.verify neither reports progress nor stops early; it runs to the end.
        io.warpdata.blobcache.cache.VerifyResult v = cache.verify();
        return new VerifyResult(v.blocksChecked(), cache.stats().sizeBytes(), v.blocksRemoved());
    }

    @Override
    public WarmResult warm(BlobRef blob, long maxBytes, LongConsumer progress, BooleanSupplier cancelled) {
        io.warpdata.blobcache.cache.WarmResult w = cache.warm(blob, maxBytes, (done, total) -> progress.accept(done), cancelled);
        return new WarmResult(w.bytesCached() + w.bytesFetched(), w.bytesFetched());
    }
}
