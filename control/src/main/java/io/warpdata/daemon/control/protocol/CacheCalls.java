package io.warpdata.daemon.control.protocol;

import java.util.List;
import java.util.Map;

/** {@code cache.stats}, {@code cache.gc} and {@code cache.verify}. */
public final class CacheCalls {
    private CacheCalls() {
    }

    /**
     * {@code cache.stats}: the cache's sizes and counters, and the read-ahead's efficiency.
     *
     * @param mode      memory, disk, ... (lower case)
     * @param dir       the cache directory, empty without a disk cache
     * @param freeBytes free space usable on the cache's file system, null without a disk cache
     * @param readsBySource reads and bytes by where they came from, in the order the read plan tries them
     * @param spareMembers members kept on disk past the cache index's 32,768 (counted in {@code blocks})
     * @param spareMemberMemoryBytes memory outside warpd's heap those members take (about 60 bytes each)
     */
    public record Stats(String mode, String dir, long sizeBytes, long limitBytes, long freeFloorBytes, Long freeBytes,
                        long blocks, double hitRate, double prefetchEfficiency, Map<String, Long> counters,
                        List<ReadSourceCount> readsBySource, List<MirrorStatus> mirrors, long spareMembers,
                        long spareMemberMemoryBytes) {
        public Stats {
            counters = counters == null ? Map.of() : counters;
            readsBySource = readsBySource == null ? List.of() : List.copyOf(readsBySource);
            mirrors = mirrors == null ? List.of() : List.copyOf(mirrors);
        }
    }

    /** {@code cache.gc {limit?}}: evict down to {@code limit}; the configured limit when absent. */
    @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
    public record GcRequest(ByteCount limit) {
    }

    public record GcReply(long bytesBefore, long bytesAfter, long blocksEvicted, long bytesEvicted) {
    }

    /** A progress event of {@code cache.verify}: data bytes checked so far, of the cache's size. */
    public record VerifyProgress(long bytesDone, long bytesTotal) {
    }

    /** @param blocksMissing blocks whose files were gone (deleted by something else), forgotten: no damage */
    public record VerifyReply(long blocksChecked, long bytesChecked, long blocksRemoved, long bytesRemoved,
                              long blocksWithoutList, long blocksMissing) {
    }
}
