package io.warpdata.daemon.control.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warpdata.blobcache.cache.BlockCache;
import io.warpdata.blobcache.cache.CacheStats;
import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.ControlProtocol;
import io.warpdata.daemon.control.Operation;
import io.warpdata.daemon.control.OperationContext;

import java.util.Locale;

/** {@code cache.stats}: the cache's sizes and counters, and the read-ahead's efficiency. */
public final class CacheStatsOperation implements Operation {
    private final BlockCache cache;

    public CacheStatsOperation(BlockCache cache) {
        this.cache = cache;
    }

    @Override
    public String name() {
        return "cache.stats";
    }

    @Override
    public AccessPolicy.Access access() {
        return AccessPolicy.Access.OPEN;
    }

    @Override
    public JsonNode run(OperationContext ctx) {
        CacheStats s = cache.stats();
        ObjectNode m = ControlProtocol.object();
        m.put("mode", s.mode().toString().toLowerCase(Locale.ROOT));
        m.put("dir", s.dir());
        m.put("size_bytes", s.sizeBytes());
        m.put("limit_bytes", s.limitBytes());
        m.put("free_floor_bytes", s.freeFloorBytes());
        m.put("blocks", s.blocks());
        m.put("hit_rate", s.hitRate());
        long prefetched = s.counters().getOrDefault("prefetched_blocks", 0L);
        long prefetchHits = s.counters().getOrDefault("prefetch_hit_blocks", 0L);
        m.put("prefetch_efficiency", prefetched == 0 ? 0.0 : (double) prefetchHits / prefetched);
        m.set("counters", ControlProtocol.json().valueToTree(s.counters()));
        return m;
    }
}
