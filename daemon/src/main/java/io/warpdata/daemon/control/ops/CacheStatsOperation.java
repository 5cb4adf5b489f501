package io.warpdata.daemon.control.ops;

import io.warpdata.blobcache.cache.BlockCache;
import io.warpdata.blobcache.cache.CacheStats;
import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.TypedOperation;
import io.warpdata.daemon.control.protocol.CacheCalls;
import io.warpdata.daemon.control.protocol.Calls;
import io.warpdata.daemon.control.protocol.Empty;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/** {@code cache.stats}: the cache's sizes and counters, and the read-ahead's efficiency. */
public final class CacheStatsOperation extends TypedOperation<Empty, CacheCalls.Stats, Empty> {
    private final BlockCache cache;

    public CacheStatsOperation(BlockCache cache) {
        super(Calls.CACHE_STATS, AccessPolicy.Access.OPEN);
        this.cache = cache;
    }

    @Override
    protected CacheCalls.Stats run(Empty request, Events<Empty> events) {
        CacheStats s = cache.stats();
        long prefetched = s.counters().getOrDefault("prefetched_blocks", 0L);
        long prefetchHits = s.counters().getOrDefault("prefetch_hit_blocks", 0L);
        return new CacheCalls.Stats(s.mode().toString().toLowerCase(Locale.ROOT), s.dir(), s.sizeBytes(), s.limitBytes(),
                s.freeFloorBytes(), freeBytes(s.dir()), s.blocks(), s.hitRate(),
                prefetched == 0 ? 0.0 : (double) prefetchHits / prefetched, s.counters(),
                ReadSources.of(s.bySource()),
                MirrorStatuses.of(cache.remoteTiers()), s.spareMembers(), s.spareMemoryBytes());
    }

    /** Free space (usable by warpd) on the cache directory's file system; null without a disk cache. */
    public static Long freeBytes(String dir) {
        if (dir == null || dir.isBlank()) {
            return null;
        }
        try {
            return Files.getFileStore(Path.of(dir)).getUsableSpace();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
