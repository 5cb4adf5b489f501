package io.warpdata.daemon.warpd;

import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import com.sun.net.httpserver.HttpExchange;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Unit;
import io.warpdata.blobcache.cache.ReadMetrics;
import io.warpdata.blobcache.cache.ReadSource;
import io.warpdata.store.StoreHealth;
import io.warpdata.store.BlobStore;
import io.warpdata.blobcache.cache.CacheStats;
import io.warpdata.blobcache.cache.RemoteTierStats;
import java.util.function.ToLongFunction;
import io.warpdata.manifest.DatasetId;
import io.warpdata.vfs.fuse.WarpFuse;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/**
 * warpd's metrics in Prometheus form, made with the Prometheus Java client library: counters and
 * gauges over what {@code stats.json} reports (read through callbacks at scrape time, so nothing
 * is counted twice), and histograms the read path feeds as it goes: FUSE read latency, time to
 * the first byte of a file, GET latency and size, and bytes read per dataset. Served as text by
 * {@code warpctl metrics} and, with {@code --metrics-listen}, over HTTP at {@code /metrics}.
 *
 * <p>The read path only observes histograms and bumps a cached counter data point: no locks, no
 * allocation, no logging per read. Its own registry (no global state), one per daemon.
 */
public final class DaemonMetrics implements ReadMetrics.GetListener, WarpFuse.ReadListener {
    /**
     * Datasets that get their own {@code dataset} label; reads of any further dataset count under
     * {@value #OTHER}. Each label value is a series in every Prometheus that scrapes the node; a
     * training node reads a handful of datasets, so 100 is far above need while bounding a
     * scrape's size on a node that walks a whole store.
     */
    static final int MAX_DATASET_LABELS = 100;
    /** The label of reads beyond {@link #MAX_DATASET_LABELS} datasets (no dataset id looks like it). */
    static final String OTHER = "_other";

    /**
     * Latency buckets, seconds: a page-cache-speed read (50 us) up to a read waiting out the read
     * deadline (60 s; audit 38: with 10 s the last, a p99 in an outage of a failing store could
     * never show more).
     */
    private static final double[] LATENCY_BUCKETS = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
            0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
    /** GET latency buckets, seconds: a loopback GET (1 ms) up to one near the read deadline (30 s). */
    private static final double[] GET_LATENCY_BUCKETS = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
            2.5, 5, 10, 30, 60};
    /** GET size buckets, bytes: powers of 4 from a small member (4 KiB) to the largest run (64 MiB). */
    private static final double[] GET_SIZE_BUCKETS = {4096, 16384, 65536, 262144, 1048576, 4194304, 16777216,
            67108864};
    private static final double NANOS_PER_SECOND = TimeUnit.SECONDS.toNanos(1);
    private static final java.util.List<ReadSource> SOURCES = java.util.List.of(ReadSource.values());

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final DistributionDataPoint fuseRead;
    private final DistributionDataPoint firstRead;
    private final DistributionDataPoint getSeconds;
    private final DistributionDataPoint getBytes;
    private final Counter datasetBytes;
    private final ConcurrentHashMap<DatasetId, CounterDataPoint> byDataset = new ConcurrentHashMap<>();
    /** The counter of datasets past the first {@link #MAX_DATASET_LABELS}, made when first needed. */
    private volatile CounterDataPoint otherDatasets;

    public DaemonMetrics() {
        fuseRead = Histogram.builder().name("warp_fuse_read_seconds").unit(Unit.SECONDS)
                .help("Latency of FUSE reads of files, from the request to the bytes in the reply buffer.")
                .classicOnly().classicUpperBounds(LATENCY_BUCKETS).withoutExemplars().register(registry);
        firstRead = Histogram.builder().name("warp_fuse_first_read_seconds").unit(Unit.SECONDS)
                .help("Time to first byte per open: latency of FUSE reads at offset 0 (files are opened without a"
                        + " round trip to warpd, so the read at offset 0 stands for the open).")
                .classicOnly().classicUpperBounds(LATENCY_BUCKETS).withoutExemplars().register(registry);
        getSeconds = Histogram.builder().name("warp_store_get_seconds").unit(Unit.SECONDS)
                .help("Latency of GETs of data from the store, from the request to the last byte.")
                .classicOnly().classicUpperBounds(GET_LATENCY_BUCKETS).withoutExemplars().register(registry);
        getBytes = Histogram.builder().name("warp_store_get_bytes").unit(Unit.BYTES)
                .help("Size of GETs of data from the store.")
                .classicOnly().classicUpperBounds(GET_SIZE_BUCKETS).withoutExemplars().register(registry);
        datasetBytes = Counter.builder().name("warp_dataset_read_bytes_total").unit(Unit.BYTES)
                .help("Bytes read through the mount, by dataset (the first " + MAX_DATASET_LABELS
                        + " datasets read; the rest as dataset=\"" + OTHER + "\").")
                .labelNames("dataset").withoutExemplars().register(registry);
    }

    @Override
    public void onGet(long nanos, long bytes) {
        getSeconds.observe(nanos / NANOS_PER_SECOND);
        getBytes.observe(bytes);
    }

    @Override
    public void onGetFailed(long nanos) {
        getSeconds.observe(nanos / NANOS_PER_SECOND); // a failed GET has a latency, not a size
    }

    @Override
    public void onReadFailed(long offset, long nanos) {
        double seconds = nanos / NANOS_PER_SECOND;
        fuseRead.observe(seconds);
        if (offset == 0) {
            firstRead.observe(seconds);
        }
    }

    @Override
    public void onRead(DatasetId dataset, long offset, int bytes, long nanos) {
        double seconds = nanos / NANOS_PER_SECOND;
        fuseRead.observe(seconds);
        if (offset == 0) {
            firstRead.observe(seconds);
        }
        if (dataset != null && bytes > 0) {
            CounterDataPoint c = byDataset.get(dataset);
            (c != null ? c : dataPoint(dataset)).inc(bytes);
        }
    }

    /** The counter of a dataset not seen before (rare: once per dataset). */
    private CounterDataPoint dataPoint(DatasetId dataset) {
        if (byDataset.size() >= MAX_DATASET_LABELS && !byDataset.containsKey(dataset)) {
            CounterDataPoint other = otherDatasets;
            if (other == null) {
                other = datasetBytes.labelValues(OTHER);
                otherDatasets = other;
            }
            return other;
        }
        return byDataset.computeIfAbsent(dataset, d -> datasetBytes.labelValues(d.toString()));
    }

    /** Bytes read through the mount so far, by dataset ({@value #OTHER} for the rest), by name. */
    public Map<String, Long> bytesReadByDataset() {
        Map<String, Long> m = new TreeMap<>();
        byDataset.forEach((d, c) -> m.put(d.toString(), c.getLongValue()));
        CounterDataPoint other = otherDatasets;
        if (other != null) {
            m.put(OTHER, other.getLongValue());
        }
        return m;
    }

    /**
     * Registers the counters and gauges of {@code daemon} (those of stats.json), read when
     * scraped. Call once, after the daemon has mounted.
     */
    void bind(WarpDaemon daemon) {
        ReadMetrics read = daemon.reader().metrics();
        counter("warp_store_gets_total", "GETs of data issued to the store (retries included).", read.getsIssued::sum);
        counter("warp_store_fetched_bytes_total", "Bytes of data fetched from the store.", read.bytesFetched::sum);
        counter("warp_store_retries_total", "GETs retried after a transient store failure.", read.retries::sum);
        BlobStore store = daemon.store();
        counter("warp_store_client_retries_total", "Attempts the S3 client made beyond the first of a call, for every"
                + " call (its own retries of 5xx, throttling and resets): requests the store saw that"
                + " warp_store_gets_total does not count.", store == null ? () -> 0L : store::clientRetries);
        gauge("warp_store_gets_in_flight", "GETs of data under way now.", read.getsInFlight::sum);
        counter("warp_cache_corrupt_blocks_total", "Cached blocks found damaged on the cache's disk (CRC32C or hash"
                + " failed, unreadable) and deleted, by a read or warpctl cache verify: a disk to look at.",
                read.cacheCorruptBlocks::sum);
        counter("warp_cache_hit_blocks_total", "Block reads served from the cache.", read.hitBlocks::sum);
        counter("warp_cache_hit_bytes_total", "Bytes served from the cache.", read.hitBytes::sum);
        counter("warp_cache_miss_blocks_total", "Block reads that had to wait for a fetch.", read.missBlocks::sum);
        counter("warp_cache_miss_bytes_total", "Bytes that had to wait for a fetch.", read.missBytes::sum);
        counter("warp_prefetch_blocks_total", "Blocks fetched ahead of readers.", read.prefetchedBlocks::sum);
        counter("warp_prefetch_planned_blocks_total", "Of the prefetched blocks, those fetched for an order plan.",
                read.plannedBlocks::sum);
        counter("warp_prefetch_planned_files_total", "Files fetched on their own for an order plan over more than the"
                + " cache keeps (each counted in warp_prefetch_blocks_total too).", read.plannedFiles::sum);
        counter("warp_prefetch_hit_blocks_total", "Prefetched blocks that a reader then read.", read.prefetchHitBlocks::sum);
        counter("warp_disk_read_ahead_blocks_total", "Cached blocks whose files were read into the page cache"
                + " ahead of a sequential reader.", read.diskReadAheadBlocks::sum);
        counter("warp_dense_random_blobs_total", "Blobs fetched whole because they were read densely at random"
                + " (auto mode: a shuffled pass over a shard).", read.denseRandomBlobs::sum);
        counter("warp_member_hits_total", "Member reads served from a copy cached under the member's SHA-256.",
                read.memberHits::sum);
        counter("warp_member_fetches_total", "Members fetched on their own (one ranged GET of their bytes: read at"
                + " random, or planned by an order plan over more than the cache keeps).", read.memberFetches::sum);
        counter("warp_member_fetched_bytes_total", "Bytes fetched by member GETs.", read.memberFetchedBytes::sum);
        counter("warp_member_dedup_hits_total", "Member reads served from another blob's cached blocks holding the"
                + " same bytes (another dataset's or version's shard).", read.dedupHits::sum);
        counter("warp_members_spared_total", "Members cached under their hash that left the disk index for the spare"
                + " ones kept on disk (its count bound, or an order plan's reader passed them).", read.membersSpared::sum);
        counter("warp_spare_member_hits_total", "Spare members read back into the disk index.",
                read.spareMemberHits::sum);
        counter("warp_prefetch_wasted_bytes_total", "Prefetched bytes evicted before anyone read them.",
                read.prefetchWastedBytes::sum);
        counter("warp_verification_failures_total", "Fetched blocks that failed SHA-256 verification.",
                read.verificationFailures::sum);
        counter("warp_cache_evictions_total", "Blocks evicted from the cache.", read.evictions::sum);
        counter("warp_cache_evicted_bytes_total", "Bytes evicted from the cache.", read.evictedBytes::sum);
        counter("warp_read_errors_total", "Reads of the block cache that failed (EIO): kernel read requests, so one"
                + " file read by an application may count several.", read.readErrors::sum);
        CounterWithCallback.builder().name("warp_read_source_reads_total")
                .help("Reads served, by where their bytes came from (the read plan's sources; mirror: fetched bytes a"
                        + " mirror served instead of the store). Each read counts once.").labelNames("source")
                .callback(cb -> {
                    for (ReadSource s : SOURCES) {
                        cb.call(read.reads(s), s.label());
                    }
                }).register(registry);
        CounterWithCallback.builder().name("warp_read_source_bytes_total").unit(Unit.BYTES)
                .help("Bytes served, by where they came from; all sources add up to the cache's hit and miss bytes.")
                .labelNames("source")
                .callback(cb -> {
                    for (ReadSource s : SOURCES) {
                        cb.call(read.bytes(s), s.label());
                    }
                }).register(registry);
        counter("warp_cache_writes_skipped_total", "Fetched blocks served without being cached (no room, or the write failed).",
                read.cacheWritesSkipped::sum);

        mirrorCounter(daemon, "warp_mirror_served_bytes_total", "Verified bytes each mirror served.",
                RemoteTierStats::bytesServed);
        mirrorCounter(daemon, "warp_mirror_hits_total", "Reads each mirror served with bytes that verified.",
                RemoteTierStats::hits);
        mirrorCounter(daemon, "warp_mirror_misses_total", "Reads each mirror did not serve (not held, failed or wrong"
                + " bytes): they went to the next mirror or the store.", RemoteTierStats::misses);
        mirrorCounter(daemon, "warp_mirror_verification_failures_total", "Answers of each mirror that failed SHA-256"
                + " verification (a poisoned or corrupt cache).", RemoteTierStats::verificationFailures);
        mirrorCounter(daemon, "warp_mirror_errors_total", "Failed reads of each mirror: error status, reset, wrong-sized"
                + " answer, timeout.", RemoteTierStats::errors);
        mirrorCounter(daemon, "warp_mirror_timeouts_total", "Reads of each mirror that ran into --mirror-timeout.",
                RemoteTierStats::timeouts);
        mirrorCounter(daemon, "warp_mirror_fills_total", "Objects warpd wrote to each S3 tier in the background (not those already there).",
                RemoteTierStats::fillsWritten);
        mirrorCounter(daemon, "warp_mirror_fill_failures_total", "Background writes to each S3 tier that failed.",
                RemoteTierStats::fillsFailed);
        GaugeWithCallback.builder().name("warp_mirror_up").help("1 if the mirror is used, 0 while it is skipped after"
                        + " a failure (backoff).").labelNames("mirror")
                .callback(cb -> daemon.reader().remoteTiers().forEach(m -> cb.call(m.state().equals("up") ? 1 : 0, m.name())))
                .register(registry);
        GaugeWithCallback.builder().name("warp_mirror_hit_ratio").help("Hits / (hits + misses) of each mirror, since start.")
                .labelNames("mirror")
                .callback(cb -> daemon.reader().remoteTiers().forEach(m -> cb.call(m.hitRatio(), m.name())))
                .register(registry);

        gauge("warp_cache_size_bytes", "Bytes in the disk cache.", () -> daemon.reader().stats().sizeBytes());
        gauge("warp_cache_limit_bytes", "The disk cache's size limit.", () -> daemon.reader().stats().limitBytes());
        gauge("warp_cache_blocks", "Blocks in the disk cache.", () -> daemon.reader().stats().blocks());
        gauge("warp_cache_spare_members", "Members kept on disk past the cache index's 32,768 (in warp_cache_blocks).",
                () -> daemon.reader().stats().spareMembers());
        gauge("warp_cache_spare_member_memory_bytes", "Memory outside the Java heap the spare members take.",
                () -> daemon.reader().stats().spareMemoryBytes());
        gauge("warp_cache_hit_ratio", "Bytes served from the cache / bytes read, since start.",
                () -> daemon.reader().stats().hitRate());
        GaugeWithCallback.builder().name("warp_cache_disk_free_bytes").help("Free space (usable by warpd) on the disk"
                        + " cache's file system; below warp_cache_free_floor_bytes warpd caches nothing more.")
                .callback(cb -> {
                    Long free = io.warpdata.daemon.control.ops.CacheStatsOperation.freeBytes(daemon.reader().stats().dir());
                    if (free != null) {
                        cb.call(free);
                    }
                })
                .register(registry);
        gauge("warp_cache_free_floor_bytes", "Free space warpd always leaves on the cache's file system: max(5% of it, 1 GiB).",
                () -> daemon.reader().stats().freeFloorBytes());

        Function<ToDoubleFunction<StoreHealth.Snapshot>, DoubleSupplier> health = f ->
                () -> daemon.health().map(h -> f.applyAsDouble(h.snapshot())).orElse(0.0);
        gauge("warp_store_reachable", "1 if the store answers, 0 if it is unreachable or offline (--mode local).",
                health.apply(h -> h.reachable() ? 1 : 0));
        counter("warp_store_failures_total", "Store requests that failed.", health.apply(h -> h.failures()));
        counter("warp_store_fast_failures_total", "Reads failed at once while the store was unreachable.",
                health.apply(h -> h.fastFailures()));
        counter("warp_store_outages_total", "Times the store became unreachable.", health.apply(h -> h.outages()));
        CounterWithCallback.builder().name("warp_catalog_stale_answers_total")
                .help("Catalog answers from the last known state, by why: store_failed (the store failed: an"
                        + " outage), slow (a re-check had not answered within 0.5 s: a hung store, or a busy start).")
                .labelNames("why")
                .callback(cb -> {
                    long slow = daemon.catalog().slowAnswers();
                    cb.call(daemon.catalog().staleAnswers() - slow, "store_failed");
                    cb.call(slow, "slow");
                })
                .register(registry);

        counter("warp_mount_not_found_total", "Lookups answered ENOENT.", () -> daemon.errno().notFoundCount());
        counter("warp_mount_log_lines_suppressed_total", "Mount error lines not logged by the log's rate limit (20 each"
                + " 10 s): a burst's size, whether or not its summary line was written yet.",
                () -> daemon.errno().suppressedLogLines());
        CounterWithCallback.builder().name("warp_mount_io_errors_total")
                .help("Requests answered EIO, by the failure's type.").labelNames("type")
                .callback(cb -> daemon.errno().ioErrorsByType().forEach((type, n) -> cb.call(n, type)))
                .register(registry);
        CounterWithCallback.builder().name("warp_fuse_requests_total")
                .help("FUSE requests served, by operation.").labelNames("op")
                .callback(cb -> daemon.fuse().requests().forEach((op, n) -> cb.call(n, op)))
                .register(registry);
        counter("warp_latest_link_reads_total", "Reads of latest/branch links (READLINK).", () -> daemon.fuse().linkReads());
        counter("warp_latest_link_invalidations_total", "Links the kernel was told to re-read after a pointer moved.",
                () -> daemon.fuse().linkInvalidations());

        counter("warp_index_parts_read_ahead_total", "Member index parts read ahead of a walk (find, ls -lR) over a parted index.",
                () -> daemon.tree().indexPartsReadAhead().started());
        counter("warp_index_parts_read_ahead_failed_total", "Index parts read ahead whose load failed (dropped; the walk's"
                + " own load reports the error).", () -> daemon.tree().indexPartsReadAhead().failures());
        counter("warp_tensor_folders_made_total", "F.tensors/ folders made from their safetensors file's header (again each"
                + " time one let go is needed).", () -> daemon.tree().tensorFolders().made());
        counter("warp_tensor_folders_let_go_for_room_total", "F.tensors/ folders let go because those kept did not fit their"
                + " budget together (3/10 of the heap); growing with warp_tensor_folders_made_total: raise WARP_HEAP.",
                () -> daemon.tree().tensorFolders().letGoForRoom());
        counter("warp_tensor_folders_collected_total", "F.tensors/ folders the collector took when the heap ran short;"
                + " growing with warp_tensor_folders_made_total: raise WARP_HEAP.", () -> daemon.tree().tensorFolders().collected());
        gauge("warp_tensor_folders_kept", "F.tensors/ folders kept now (about).", () -> daemon.tree().tensorFolders().kept());
        gauge("warp_tensor_folders_kept_bytes", "Heap the F.tensors/ folders kept weigh now.",
                () -> daemon.tree().tensorFolders().keptBytes());
        gauge("warp_tensor_folders_budget_bytes", "The most the F.tensors/ folders may weigh together.",
                () -> daemon.tree().tensorFolders().budgetBytes());
        gauge("warp_open_handles", "Directories open in the mount (files need no open).", () -> daemon.fuse().openHandles());
        counter("warp_passthrough_opens_total", "Opens of whole files the kernel reads from warpd's local copy, without warpd (docs/cache.md, Passthrough).",
                () -> daemon.fuse().passthroughOpens());
        gauge("warp_kernel_inodes", "Inodes of the mount the kernel holds that take a table entry in warpd (folders, links, table shards; member and tensor files have computed inode numbers and take none).", () -> daemon.fuse().kernelInodes());
        gauge("warp_indexed_members", "Archive members whose index entries are in memory.",
                () -> daemon.tree().indexedMembers());
        gauge("warp_mounted", "1 while the tree is mounted.", () -> daemon.mounted() ? 1 : 0);
        gauge("warp_uptime_seconds", "Seconds since warpd started.", daemon::uptimeSeconds);
        Runtime rt = Runtime.getRuntime();
        gauge("warp_heap_used_bytes", "JVM heap in use (garbage included).", () -> rt.totalMemory() - rt.freeMemory());
        gauge("warp_heap_max_bytes", "JVM heap limit.", rt::maxMemory);
        GaugeWithCallback.builder().name("warp_info").help("Always 1; the labels say which warpd this is.")
                .labelNames("version", "mode")
                .callback(cb -> cb.call(1, daemon.version(), daemon.mode()))
                .register(registry);
    }

    private void mirrorCounter(WarpDaemon daemon, String name, String help, ToLongFunction<RemoteTierStats> value) {
        CounterWithCallback.builder().name(name).help(help).labelNames("mirror")
                .callback(cb -> daemon.reader().remoteTiers().forEach(m -> cb.call(value.applyAsLong(m), m.name())))
                .register(registry);
    }

    private void counter(String name, String help, DoubleSupplier value) {
        CounterWithCallback.builder().name(name).help(help).callback(cb -> cb.call(value.getAsDouble())).register(registry);
    }

    private void gauge(String name, String help, DoubleSupplier value) {
        GaugeWithCallback.builder().name(name).help(help).callback(cb -> cb.call(value.getAsDouble())).register(registry);
    }

    /** Every metric now, in the Prometheus text format (version 0.0.4), as {@code /metrics} serves it by default. */
    public String text() {
        ByteArrayOutputStream out = new ByteArrayOutputStream(16384);
        try {
            PrometheusTextFormatWriter.create().write(out, registry.scrape());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    /**
     * Any path but {@code /metrics} and {@code /-/healthy}: a short text at {@code /}, 404
     * elsewhere, so that a scrape of a mistyped path fails instead of getting the library's HTML
     * landing page with 200.
     */
    private static void notMetrics(HttpExchange exchange) throws IOException {
        try (exchange) {
            boolean root = "/".equals(exchange.getRequestURI().getPath());
            byte[] body = (root ? "warpd: metrics at /metrics, liveness at /-/healthy\n"
                    : "not found: warpd serves /metrics and /-/healthy\n").getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
            boolean head = "HEAD".equals(exchange.getRequestMethod());
            exchange.sendResponseHeaders(root ? 200 : 404, head ? -1 : body.length);
            if (!head) {
                exchange.getResponseBody().write(body);
            }
        }
    }

    /**
     * Serves {@code /metrics} over HTTP at {@code address} (text, OpenMetrics or protobuf, as the
     * scraper asks) until the returned server is closed.
     *
     * @throws ConfigException if the address cannot be bound (in use, not local)
     */
    public HTTPServer serve(InetSocketAddress address) {
        try {
            return HTTPServer.builder().inetAddress(address.getAddress()).port(address.getPort())
                    .registry(registry).defaultHandler(DaemonMetrics::notMetrics).buildAndStart();
        } catch (IOException | RuntimeException e) {
            throw new ConfigException("cannot serve metrics on " + address.getHostString() + ":" + address.getPort()
                    + ": " + e.getMessage(),
                    "Pass a free local port with --metrics-listen (e.g. 127.0.0.1:9567), or leave the option out.");
        }
    }
}
