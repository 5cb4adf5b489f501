package io.warpdata.daemon.control.protocol;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code stats}: the daemon's counters and gauges, as also written to {@code stats.json} (what
 * {@code warpctl status --watch} turns into rates each second).
 */
public final class StatsCall {
    private StatsCall() {
    }

    /**
     * @param read               the read path's counters (hit_bytes, miss_bytes, bytes_fetched, ...)
     * @param readsBySource      reads and bytes by where they came from, in the order the read plan tries them
     *                           (as {@code cache stats} and Prometheus' {@code warp_read_source_*} show them)
     * @param readBytesByDataset bytes read through the mount, by dataset
     * @param orderPlans         the prefetch order plans the cache knows
     * @param fuseRequests       FUSE requests served, by kind
     */
    public record Reply(long pid,
                        String mount,
                        String remote,
                        String mode,
                        boolean mounted,
                        long uptimeSeconds,
                        Counters read,
                        List<ReadSourceCount> readsBySource,
                        Map<String, Long> readBytesByDataset,
                        List<OrderPlanState> orderPlans,
                        StoreStatus store,
                        List<MirrorStatus> mirrors,
                        MountErrors mountErrors,
                        LatestLinks latestLinks,
                        Map<String, Long> fuseRequests,
                        Gauges gauges) {
        /** What a daemon that keeps no counters answers. */
        public static final Reply NONE = new Reply(0, null, null, null, false, 0, null, null, null, null, null, null,
                null, null, null, null);

        public Reply {
            read = read == null ? Counters.NONE : read;
            readsBySource = readsBySource == null ? List.of() : List.copyOf(readsBySource);
            readBytesByDataset = readBytesByDataset == null ? Map.of() : readBytesByDataset;
            orderPlans = orderPlans == null ? List.of() : orderPlans;
            mirrors = mirrors == null ? List.of() : List.copyOf(mirrors);
            fuseRequests = fuseRequests == null ? Map.of() : fuseRequests;
            gauges = gauges == null ? Gauges.NONE : gauges;
        }
    }

    /**
     * The read path's counters by name (an open set: the cache adds counters without a protocol
     * change); the ones warpctl shows have accessors here, the one place that names them.
     */
    public record Counters(Map<String, Long> all) {
        public static final Counters NONE = new Counters(Map.of());

        public Counters {
            all = all == null ? Map.of() : new TreeMap<>(all);
        }

        @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
        static Counters read(Map<String, Long> all) {
            return new Counters(all);
        }

        @JsonValue
        public Map<String, Long> all() {
            return all;
        }

        public long hitBytes() {
            return get("hit_bytes");
        }

        public long missBytes() {
            return get("miss_bytes");
        }

        public long bytesFetched() {
            return get("bytes_fetched");
        }

        public long getsIssued() {
            return get("gets_issued");
        }

        public long readErrors() {
            return get("read_errors");
        }

        private long get(String name) {
            Long v = all.get(name);
            return v == null ? 0 : v;
        }
    }

    /**
     * One prefetch order plan: what it is for, how far it got. {@code fetches} is {@code blocks},
     * or {@code files} for a plan over more than the cache keeps, which fetches each file on its
     * own: then {@code grains}, {@code grainsScheduled} and {@code fetchedBlocks} count files.
     */
    public record OrderPlanState(String name, @com.fasterxml.jackson.annotation.JsonProperty("for") String forWhat,
                                 String state, long members, long reached, long blobs, long plannedBytes, long grains,
                                 long grainsScheduled, long fetchedBlocks, long heldBytes, String fetches) {
    }

    /** Errors the mount answered with. */
    public record MountErrors(long notFound, long ioErrors, Map<String, Long> ioErrorsByType) {
    }

    /** The latest links: whether the kernel caches them, how often they were read and invalidated. */
    public record LatestLinks(boolean kernelCached, long reads, long invalidations) {
    }

    /** Gauges: values now, not counts. */
    public record Gauges(long getsInFlight, long openHandles, long maxReadBytes, long kernelInodes, long indexedMembers,
                         long heapUsedBytes, long heapMaxBytes) {
        public static final Gauges NONE = new Gauges(0, 0, 0, 0, 0, 0, 0);
    }
}
