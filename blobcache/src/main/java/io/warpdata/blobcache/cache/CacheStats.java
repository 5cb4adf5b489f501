package io.warpdata.blobcache.cache;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A snapshot of the cache for {@code warpctl cache stats}.
 *
 * @param mode           the cache mode
 * @param dir            the cache directory, or null in remote mode
 * @param sizeBytes      bytes held (disk: block files including their 4 KiB headers; remote: memory)
 * @param limitBytes     the size limit
 * @param freeFloorBytes free space always left on the cache filesystem
 * @param blocks         blocks held
 * @param hitRate        hit bytes / (hit + miss bytes) since start, 0 before any read
 * @param counters       {@link io.warpdata.blobcache.cache.ReadMetrics#snapshot()}
 * @param bySource       reads and bytes by where they came from ({@link ReadMetrics#bySource()})
 * @param spareMembers   members kept on disk past the index's count bound (in {@code blocks})
 * @param spareMemoryBytes memory outside the heap those take ({@code SpareMembers})
 */
public record CacheStats(CacheMode mode, String dir, long sizeBytes, long limitBytes, long freeFloorBytes,
        long blocks, double hitRate, Map<String, Long> counters, List<ReadMetrics.SourceCount> bySource,
        long spareMembers, long spareMemoryBytes) {
    public CacheStats {
        counters = Collections.unmodifiableMap(new LinkedHashMap<>(counters));
        bySource = List.copyOf(bySource);
    }
}
