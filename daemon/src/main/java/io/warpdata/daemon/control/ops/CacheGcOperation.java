package io.warpdata.daemon.control.ops;

import io.warpdata.blobcache.cache.BlockCache;
import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.TypedOperation;
import io.warpdata.daemon.control.protocol.CacheCalls;
import io.warpdata.daemon.control.protocol.Calls;
import io.warpdata.daemon.control.protocol.Empty;

/** {@code cache.gc {limit?}}: evicts down to {@code limit} (bytes or "500GB"; the configured limit when absent). */
public final class CacheGcOperation extends TypedOperation<CacheCalls.GcRequest, CacheCalls.GcReply, Empty> {
    private final BlockCache cache;

    public CacheGcOperation(BlockCache cache) {
        super(Calls.CACHE_GC, AccessPolicy.Access.PRIVILEGED);
        this.cache = cache;
    }

    @Override
    protected CacheCalls.GcReply run(CacheCalls.GcRequest request, Events<Empty> events) {
        BlockCache c = DiskCache.require(cache, "gc");
        long before = c.stats().sizeBytes();
        long evictionsBefore = c.metrics().evictions.sum();
        long freed = c.gc(request.limit() == null ? c.stats().limitBytes() : request.limit().bytes());
        return new CacheCalls.GcReply(before, c.stats().sizeBytes(), c.metrics().evictions.sum() - evictionsBefore, freed);
    }
}
