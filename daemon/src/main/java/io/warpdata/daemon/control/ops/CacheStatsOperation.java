package io.warpdata.daemon.control.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warpdata.blobcache.cache.BlockCache;
import io.warpdata.blobcache.cache.CacheStats;
import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.ControlProtocol;
import io.warpdata.daemon.control.Operation;
import io.warpdata.daemon.control.OperationContext;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.OptionalLong;

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
        freeBytes(s.dir()).ifPresentOrElse(free -> m.put("free_bytes", free), () -> m.putNull("free_bytes"));
        m.put("blocks", s.blocks());
        m.put("hit_rate", s.hitRate());
        long prefetched = s.counters().getOrDefault("prefetched_blocks", 0L);
        long prefetchHits = s.counters().getOrDefault("prefetch_hit_blocks", 0L);
        m.put("prefetch_efficiency", prefetched == 0 ? 0.0 : (double) prefetchHits / prefetched);
        m.set("counters", ControlProtocol.json().valueToTree(s.counters()));
        m.set("mirrors", ControlProtocol.json().valueToTree(
                cache.remoteTiers().stream().map(io.warpdata.blobcache.cache.RemoteTierStats::asMap).toList()));
        return m;
    }

    /** Free space (usable by warpd) on the cache directory's file system; empty without a disk cache. */
    private static OptionalLong freeBytes(String dir) {
        if (dir == null || dir.isBlank()) {
            return OptionalLong.empty();
        }
        try {
            return OptionalLong.of(Files.getFileStore(Path.of(dir)).getUsableSpace());
        } catch (IOException | RuntimeException e) {
            return OptionalLong.empty();
        }
    }
}
