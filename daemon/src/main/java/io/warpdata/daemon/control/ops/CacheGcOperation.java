package io.warpdata.daemon.control.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warpdata.blobcache.cache.BlockCache;
import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.ControlProtocol;
import io.warpdata.daemon.control.Operation;
import io.warpdata.daemon.control.OperationContext;

/** {@code cache.gc {limit?}}: evicts down to {@code limit} (bytes or "500GB"; the configured limit when absent). */
public final class CacheGcOperation implements Operation {
    private final BlockCache cache;

    public CacheGcOperation(BlockCache cache) {
        this.cache = cache;
    }

    @Override
    public String name() {
        return "cache.gc";
    }

    @Override
    public AccessPolicy.Access access() {
        return AccessPolicy.Access.PRIVILEGED;
    }

    @Override
    public JsonNode run(OperationContext ctx) {
        BlockCache c = DiskCache.require(cache, "gc");
        long before = c.stats().sizeBytes();
        long evictionsBefore = c.metrics().evictions.sum();
        long freed = c.gc(ctx.args().optSize("limit").orElse(c.stats().limitBytes()));
        ObjectNode r = ControlProtocol.object();
        r.put("bytes_before", before);
        r.put("bytes_after", c.stats().sizeBytes());
        r.put("blocks_evicted", c.metrics().evictions.sum() - evictionsBefore);
        r.put("bytes_evicted", freed);
        return r;
    }
}
