package io.warpdata.daemon.warpd;

import io.warpdata.daemon.control.ops.MirrorStatuses;
import io.warpdata.daemon.control.ops.ReadSources;
import io.warpdata.daemon.control.protocol.MirrorStatus;
import io.warpdata.store.AuthenticationException;
import io.warpdata.store.BlobStore;
import io.warpdata.catalog.Catalog;
import io.warpdata.catalog.LastKnownGood;
import io.warpdata.store.NoSuchBucketException;
import io.warpdata.store.PermissionDeniedException;
import io.warpdata.store.StoreException;
import io.warpdata.store.StoreHealth;
import io.warpdata.blobcache.cache.BlockCache;
import io.warpdata.blobcache.cache.CacheMode;
import io.warpdata.blobcache.cache.PlanStatus;
import io.warpdata.daemon.control.ops.DaemonInfo;
import io.warpdata.daemon.control.protocol.PassthroughStatus;
import io.warpdata.daemon.control.protocol.StatsCall;
import io.warpdata.daemon.control.protocol.StoreStatus;
import io.warpdata.vfs.Errno;
import io.warpdata.vfs.WarpTree;
import io.warpdata.vfs.fuse.KernelReadAhead;
import io.warpdata.vfs.fuse.MountOptions;
import io.warpdata.vfs.fuse.WarpFuse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.github.benmanes.caffeine.cache.Ticker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One running warpd: store, catalog, blob reader, tree and the FUSE mount, plus any services
 * plugged in later (the control socket registers itself with {@link #addService}). Closing it
 * unmounts and closes everything in reverse order of opening.
 */
public final class WarpDaemon implements AutoCloseable, DaemonInfo {
    private static final Logger LOG = LoggerFactory.getLogger(WarpDaemon.class);
    /**
     * DESIGN.md section 11 budgets under 200 bytes of heap per indexed member; the member index
     * cache may use a quarter of the heap.
     */
    private static final long BYTES_PER_MEMBER = 200;
    /** How often the mount's presence is checked: reading mountinfo is cheap, a stray daemon is not. */
    private static final long MOUNT_WATCH_SECONDS = 2;
    /**
     * How long a start waits for the store to answer before mounting anyway (from the catalog's
     * last known state): long enough for a slow first TLS handshake, short enough that a node
     * whose store is down still comes up quickly.
     */
    static final Duration STORE_CHECK_WAIT = Duration.ofSeconds(10);

    private final DaemonConfig config;
    private final long startedNanos = System.nanoTime();
    private final Instant startedAt = Instant.now();
    private final Deque<AutoCloseable> services = new ArrayDeque<>();
    private final CountDownLatch closed = new CountDownLatch(1);
    /** Counted down when {@link #open} has returned or failed. */
    private final CountDownLatch opened = new CountDownLatch(1);
    /** Set (under this object's lock) just before the mount, unless a close came first. */
    private boolean mounting;
    private final AtomicBoolean closing = new AtomicBoolean();
    private final DaemonMetrics metrics = new DaemonMetrics();
    private volatile String metricsUrl;
    private BlobStore store;
    private StoreHealth health;
    private Catalog catalog;
    /** The catalog's last known state (whether this cache ever served the store: checkStore). */
    private LastKnownGood known;
    private BlockCache reader;
    private Errno errno;
    private WarpTree tree;
    private WarpFuse fuse;
    private volatile boolean mounted;
    /** Whether the mount was ever made: a mount point warpd created is removed only if not. */
    private volatile boolean everMounted;

    private WarpDaemon(DaemonConfig config) {
        this.config = config;
    }

    /**
     * Opens the store, checks it answers, mounts, and starts writing stats.
     *
     * @throws ConfigException if the mount point or settings cannot be used
     * @throws StoreException if the store rejects our credentials
     */
    public static WarpDaemon start(DaemonConfig config) {
        return start(config, d -> { });
    }

    /**
     * As {@link #start(DaemonConfig)}, handing the daemon to {@code created} before anything is
     * opened: a shutdown hook that closes it then unmounts a mount made at any moment of the start
     * (a SIGTERM just after the mount appeared left it dead, audit 27). A close during the start
     * stops it before the mount, or waits for the started daemon and closes all of it.
     *
     * @throws StartStoppedException if the daemon was closed before it mounted
     */
    public static WarpDaemon start(DaemonConfig config, java.util.function.Consumer<WarpDaemon> created) {
        WarpDaemon d = new WarpDaemon(config);
        created.accept(d);
        try {
            d.open();
            d.opened.countDown();
            return d;
        } catch (RuntimeException | Error e) {
            // An Error too (a native library missing, the heap exhausted): a stop request waits on
            // this latch, and waited its full 30 s for a start that had already failed.
            d.opened.countDown();
            d.close();
            throw e;
        }
    }

    /** The daemon was stopped (SIGTERM, SIGINT) while it started, before it mounted: nothing is left behind. */
    public static final class StartStoppedException extends RuntimeException {
        StartStoppedException() {
            super("stopped while starting, before the mount");
        }
    }

    private void open() {
        try {
            PrivateDirectories.prepare(config.cacheDir(), config.mode().usesDisk() ? PrivateDirectories.FOLDERS
                    : List.of(PrivateDirectories.PUBLISH_STAGING), uid());
        } catch (PrivateDirectories.UnsafeCacheDirectoryException e) {
            throw new ConfigException("will not use cache directory " + config.cacheDir() + ": " + e.getMessage(),
                    "Remove it (or the folder named) if you do not know who made it, or pass a --cache-dir of warpd's"
                            + " own user, not writable by others (its default under ~/.cache is).");
        } catch (IOException e) {
            throw new ConfigException("cannot create cache directory " + config.cacheDir() + ": " + e.getMessage(),
                    "Pass a writable --cache-dir (or set WARP_CACHE_DIR).");
        }
        // Packed data of publishes a killed warpd ran (none runs now: each holds its folder's lock).
        io.warpdata.daemon.publish.Staging.removeLeftovers(
                config.cacheDir().resolve(PrivateDirectories.PUBLISH_STAGING), "warp-");
        boolean root = uid() == 0;
        if (config.allowOther() && !root && !MountPoint.userAllowOther()) {
            throw new ConfigException("--allow-other needs 'user_allow_other' in /etc/fuse.conf when warpd is not root",
                    "Add the line 'user_allow_other' to /etc/fuse.conf, or drop --allow-other.");
        }
        MountPoint.prepare(config.mountPoint()).ifPresent(top -> services.push(() -> {
            if (!everMounted) {
                MountPoint.removeCreated(config.mountPoint(), top);
            }
        }));

        StoreWiring wiring = StoreWiring.open(config);
        store = wiring.checked();
        health = wiring.health();
        services.push(wiring.bare());
        reader = wiring.openCache(config, metrics);
        warnIfUnderTheFloor(reader.stats());
        if (config.passthrough()) {
            reader.adoptLocalCopies();
        } else {
            // Copies a warpd with --passthrough on left are of no use to this one.
            reader.dropLocalCopies();
        }
        services.push(reader);
        // Version manifests come from the store only, never a mirror (Manifests says why).
        known = openKnownState(config);
        services.push(known::close);
        catalog = new Catalog(store, Catalog.Config.defaults().withPointerTtl(config.pointerTtl()),
                Ticker.systemTicker(), known, Clock.systemUTC());
        if (config.mode() != CacheMode.LOCAL) {
            checkStore();
        }
        ExecutorService indexLoader = Executors.newVirtualThreadPerTaskExecutor();
        services.push(indexLoader::shutdownNow);
        errno = new Errno(System::nanoTime);
        long maxMembers = Math.max(100_000, Runtime.getRuntime().maxMemory() / 4 / BYTES_PER_MEMBER);
        tree = new WarpTree(catalog, reader, maxMembers, indexLoader);
        if (config.passthrough() && !config.mode().usesDisk()) {
            LOG.warn("--passthrough on needs a disk cache to keep copies in; --mode {} keeps none, so files are read"
                    + " through warpd", config.mode().text());
        }
        fuse = new WarpFuse(tree, errno, uid(), gid());
        fuse.listen(metrics);
        synchronized (this) {
            // A close that came first finds no mount to wait for; one that comes after waits for
            // the rest of the start, so that it unmounts (see close()).
            if (closing.get()) {
                throw new StartStoppedException();
            }
            mounting = true;
        }
        fuse.mount(config.mountPoint(), MountOptions.defaults(config.allowOther()).withLinkCheck(config.pointerTtl())
                .withPassthrough(config.passthrough() && config.mode().usesDisk()));
        mounted = true;
        everMounted = true;
        services.push(this::unmount);
        KernelReadAhead.raise(config.mountPoint(), MountOptions.MAX_READAHEAD);
        config.statsFile().ifPresent(file -> services.push(new StatsWriter(file, this::stats).start()));
        metrics.bind(this);
        config.metricsListen().ifPresent(address -> {
            var server = metrics.serve(address);
            services.push(server);
            metricsUrl = "http://" + (address.getAddress() instanceof java.net.Inet6Address
                    ? "[" + address.getAddress().getHostAddress() + "]" : address.getAddress().getHostAddress())
                    + ":" + server.getPort() + "/metrics";
            LOG.info("serving metrics at {}", metricsUrl);
        });
        startMountWatch();
        startStoreProbe();
    }

    /** Where {@code /metrics} is served over HTTP ({@code --metrics-listen}), if it is. */
    public Optional<String> metricsUrl() {
        return Optional.ofNullable(metricsUrl);
    }

    /** The daemon's Prometheus metrics. */
    public DaemonMetrics metrics() {
        return metrics;
    }

    @Override
    public Optional<String> metricsText() {
        return Optional.of(metrics.text());
    }

    /** Seconds since this daemon started. */
    public long uptimeSeconds() {
        return TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startedNanos);
    }

    /**
     * Stops the daemon when its mount is removed from outside (fusermount -u, umount): a warpd
     * without a mount must not linger, so that systemd or the user sees it stop. Armed only once
     * the mount is seen in /proc/self/mountinfo under its real path, so an unusual path can
     * never make the daemon stop itself by mistake.
     */
    /**
     * warpd's exit status when its mount was removed from outside: not 0, so that a supervisor
     * restarting on failure (the unit's {@code Restart=on-failure}) brings the mount back; a
     * stop asked for (SIGTERM, {@code systemctl stop}) still exits 0.
     */
    public static final int UNMOUNTED_EXIT = 3;
    private volatile boolean unmountedFromOutside;

    /** Whether warpd stopped because its mount was removed from outside. */
    public boolean unmountedFromOutside() {
        return unmountedFromOutside;
    }

    private void startMountWatch() {
        Path real;
        try {
            real = config.mountPoint().toRealPath();
        } catch (IOException e) {
            return;
        }
        if (MountPoint.mountAt(real).isEmpty()) {
            LOG.debug("mount watch not armed: {} not found in mountinfo", real);
            return;
        }
        ScheduledExecutorService watch = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "warpd-mount-watch");
            t.setDaemon(true);
            return t;
        });
        watch.scheduleWithFixedDelay(() -> {
            if (mounted && MountPoint.mountAt(real).isEmpty()) {
                LOG.warn("the mount at {} was removed from outside (fusermount -u?); stopping with exit status {}",
                        real, UNMOUNTED_EXIT);
                unmountedFromOutside = true;
                mounted = false;
                new Thread(this::close, "warpd-stop-unmounted").start();
            }
        }, MOUNT_WATCH_SECONDS, MOUNT_WATCH_SECONDS, TimeUnit.SECONDS);
        services.push(watch::shutdownNow);
    }

    /**
     * Where the catalog keeps its last known good state: {@code <cache dir>/catalog}, so that
     * the mount works through outages and restarts without the store; memory only in remote
     * mode, which keeps nothing on disk.
     */
    static LastKnownGood openKnownState(DaemonConfig config) {
        if (!config.mode().usesDisk()) {
            return LastKnownGood.inMemory();
        }
        Path dir = config.cacheDir().resolve(PrivateDirectories.CATALOG);
        try {
            // Member indexes kept there stay above the disk's free-space floor, as cached blocks do,
            // and within a budget beside the blocks' limit, least recently used deleted at start.
            LastKnownGood known = LastKnownGood.onDisk(dir, bytes -> aboveFloor(dir, bytes));
            known.trimBlobs(keptIndexBudget(config.cacheSizeBytes()));
            return known;
        } catch (UncheckedIOException e) {
            throw new ConfigException("cannot use " + dir + ": " + e.getCause().getMessage(),
                    "Pass a writable --cache-dir (or set WARP_CACHE_DIR).");
        }
    }

    /**
     * The bytes of member indexes the catalog keeps across starts: an eighth of the cache's limit
     * (12.5 GB of the default 100 GB: a hundred ImageNet-sized artifacts), at least 1 GiB (a
     * 10M-member index is 860 MB), beside the blocks' limit as the passthrough copies are.
     */
    static long keptIndexBudget(long cacheSizeBytes) {
        return Math.max(cacheSizeBytes / 8, 1L << 30);
    }

    /** Whether {@code bytes} more on {@code dir}'s file system leave it above the cache's free-space floor. */
    private static boolean aboveFloor(Path dir, long bytes) {
        try {
            java.nio.file.FileStore fs = java.nio.file.Files.getFileStore(dir);
            return fs.getUsableSpace() - bytes >= io.warpdata.blobcache.cache.CacheConfig.floorBytes(
                    io.warpdata.blobcache.cache.CacheConfig.AUTO_FREE_FLOOR, fs.getTotalSpace());
        } catch (java.io.IOException e) {
            return true; // the write itself says what is wrong
        }
    }

    /**
     * While the store is down, asks it every {@link StoreHealth#PROBE_INTERVAL} whether it is
     * back, even when nothing reads: a warpd left idle after an outage never asked again, so
     * {@code status} and {@code doctor} said "unreachable" for as long as it stayed idle. The
     * probe asks the length of one small key through the health-checked store (one HEAD).
     */
    /** What the probe asks the length of: absent in any store, so a HEAD answered 404 (the store answers). */
    static final String PROBE_KEY = "warp-probe";

    private void startStoreProbe() {
        if (health == null || store == null || health.offline()) {
            return;
        }
        ScheduledExecutorService probe = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "warpd-store-probe");
            t.setDaemon(true);
            return t;
        });
        long every = StoreHealth.PROBE_INTERVAL.toMillis();
        probe.scheduleWithFixedDelay(() -> {
            if (!health.snapshot().reachable()) {
                try {
                    store.length(PROBE_KEY);
                } catch (RuntimeException stillDown) {
                    // Recorded by the store's health; the next probe asks again.
                }
            }
        }, every, every, TimeUnit.MILLISECONDS);
        services.push(probe::shutdownNow);
    }

    /**
     * Fails fast on credentials that cannot work and on a bucket that does not exist (the mount
     * would fail every listing while status said the store was reachable); a store that is unreachable or slow is only
     * logged (by {@link StoreHealth}), and after {@link #STORE_CHECK_WAIT} the mount goes on: the
     * catalog answers from its last known state and cached data is served.
     */
    private void checkStore() {
        CompletableFuture<List<String>> check = CompletableFuture.supplyAsync(catalog::workspaces);
        try {
            check.get(STORE_CHECK_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof AuthenticationException || e.getCause() instanceof PermissionDeniedException
                    || e.getCause() instanceof NoSuchBucketException) {
                throw (StoreException) e.getCause();
            }
            java.net.UnknownHostException unknown = unknownHost(e.getCause());
            if (unknown != null && known.knowsNothing() && stillUnknown(unknown)) {
                // A mistyped endpoint on a fresh cache (audit 23): nothing could be served, and a
                // mount that says "mounted" while every ls fails looks healthy to systemd.
                throw new ConfigException("the store's host " + unknown.getMessage() + " is not known (no DNS name"
                        + " resolves, also after " + DNS_RETRIES + " more tries), and this cache holds nothing to"
                        + " serve without it", "Check --endpoint (or WARP_S3_ENDPOINT) and --remote for a typo, and"
                        + " the machine's DNS (not up yet at boot? systemd restarts warpd); warpd starts without the"
                        + " store only when it has served this store before (its last known state).");
            }
            LOG.warn("the store {} does not answer yet ({}); mounting anyway: known datasets and cached data are"
                    + " served, the rest fails with EIO until it answers", store.describe(), e.getCause().getMessage());
        } catch (TimeoutException e) {
            LOG.warn("the store {} did not answer within {} s; mounting anyway from the last known state",
                    store.describe(), STORE_CHECK_WAIT.toSeconds());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Said at start, not at the first block write (audit 23: a 64 MiB tmpfs under the default 100 GB
     * limit logged nothing until then): a cache disk below its free-space floor caches nothing.
     */
    private static void warnIfUnderTheFloor(io.warpdata.blobcache.cache.CacheStats s) {
        Long free = io.warpdata.daemon.control.ops.CacheStatsOperation.freeBytes(s.dir());
        if (free != null && free < s.freeFloorBytes()) {
            LOG.warn("the cache directory {} has {} free on its disk, under the free-space floor of {}: warpd caches"
                    + " nothing there and fetches every read from the store (free space there, or pass a --cache-dir on"
                    + " a larger disk; warpctl doctor)", s.dir(), io.warpdata.daemon.ByteSize.format(free),
                    io.warpdata.daemon.ByteSize.format(s.freeFloorBytes()));
        }
    }

    /** Tries of a host that did not resolve before warpd refuses it, 2 s apart: DNS may be coming up. */
    static final int DNS_RETRIES = 3;

    /** Whether the host {@code e} names still does not resolve after {@link #DNS_RETRIES} more tries. */
    private static boolean stillUnknown(java.net.UnknownHostException e) {
        String host = String.valueOf(e.getMessage()).split(":", 2)[0].strip();
        for (int i = 0; i < DNS_RETRIES; i++) {
            try {
                Thread.sleep(2_000);
                java.net.InetAddress.getByName(host);
                return false;
            } catch (java.net.UnknownHostException still) {
                // again
            } catch (InterruptedException stop) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }

    /** The unknown host somewhere in {@code e}'s causes, or null. */
    static java.net.UnknownHostException unknownHost(Throwable e) {
        for (Throwable t = e; t != null && t.getCause() != t; t = t.getCause()) {
            if (t instanceof java.net.UnknownHostException u) {
                return u;
            }
        }
        return null;
    }

    private void unmount() {
        if (mounted) {
            mounted = false;
            fuse.umount();
            LOG.info("unmounted {}", config.mountPoint());
        }
    }

    /** Whether a stop was asked for (the daemon is closing or closed). */
    public boolean stopping() {
        return closing.get();
    }

    /** Whether the start reached its mount: from then on the start runs to its end, and its caller finishes it. */
    public synchronized boolean mountStarted() {
        return mounting;
    }

    /** Registers a service to close (before the mount goes) when the daemon stops. */
    public void addService(AutoCloseable service) {
        synchronized (this) {
            if (!closing.get()) {
                services.push(service);
                return;
            }
        }
        // Closed meanwhile (a stop request during the start): nobody else will close it.
        try {
            service.close();
        } catch (Exception e) {
            LOG.warn("closing {} failed: {}", service, e.toString());
        }
    }

    /** Counters and gauges, as written to stats.json and served on the control socket. */
    @Override
    public StatsCall.Reply stats() {
        Runtime rt = Runtime.getRuntime();
        return new StatsCall.Reply(ProcessHandle.current().pid(), config.mountPoint().toString(), config.remote(),
                config.mode().text(), mounted, uptimeSeconds(),
                new StatsCall.Counters(readCounters()),
                reader == null ? List.of() : ReadSources.of(reader.metrics().bySource()),
                metrics.bytesReadByDataset(),
                reader == null ? List.of() : reader.plans().stream().map(WarpDaemon::plan).toList(),
                storeStatus().orElse(null), mirrors(),
                new StatsCall.MountErrors(errno == null ? 0 : errno.notFoundCount(), errno == null ? 0 : errno.ioErrorCount(),
                        errno == null ? Map.of() : errno.ioErrorsByType()),
                new StatsCall.LatestLinks(fuse != null && fuse.kernelCachesLinks(), fuse == null ? 0 : fuse.linkReads(),
                        fuse == null ? 0 : fuse.linkInvalidations()),
                fuse == null ? Map.of() : fuse.requests(),
                new StatsCall.Gauges(reader == null ? 0 : reader.metrics().getsInFlight.sum(),
                        fuse == null ? 0 : fuse.openHandles(), fuse == null ? 0 : fuse.maxReadBytes(),
                        fuse == null ? 0 : fuse.kernelInodes(), tree == null ? 0 : tree.indexedMembers(),
                        rt.totalMemory() - rt.freeMemory(), rt.maxMemory()));
    }

    /** The read path's counters, with the index parts read ahead of walks. */
    private Map<String, Long> readCounters() {
        Map<String, Long> all = new HashMap<>(reader == null ? Map.of() : reader.metrics().snapshot());
        if (tree != null) {
            var ahead = tree.indexPartsReadAhead();
            all.put("index_parts_read_ahead", ahead.started());
            all.put("index_parts_read_ahead_loaded", ahead.loadedParts());
            all.put("index_parts_read_ahead_failed", ahead.failures());
            var folders = tree.tensorFolders();
            all.put("tensor_folders_made", folders.made());
            all.put("tensor_folders_let_go_for_room", folders.letGoForRoom());
            all.put("tensor_folders_collected", folders.collected());
        }
        if (fuse != null) {
            all.put("passthrough_opens", fuse.passthroughOpens());
        }
        if (reader != null) {
            all.put("local_copies_made", reader.localCopiesMade());
            all.put("local_copy_bytes", reader.localCopyBytes());
        }
        return all;
    }

    /** An order plan's status as stats.json shows it. */
    private static StatsCall.OrderPlanState plan(PlanStatus p) {
        return new StatsCall.OrderPlanState(p.name(), p.description(), p.state(), p.members(), p.reached(), p.blobs(),
                p.plannedBytes(), p.grains(), p.grainsScheduled(), p.fetchedBlocks(), p.heldBytes(),
                p.byFile() ? "files" : "blocks");
    }

    /** Passthrough as asked for, as the kernel and this process allow it, and what it served. */
    @Override
    public Optional<PassthroughStatus> passthrough() {
        if (fuse == null) {
            return Optional.empty();
        }
        String state = fuse.passthroughState();
        String reason = fuse.passthroughReason();
        if (config.passthrough() && !config.mode().usesDisk()) {
            state = "unavailable";
            reason = "--mode " + config.mode().text() + " keeps no disk cache to hold copies in; use --mode auto or"
                    + " hybrid";
        }
        return Optional.of(new PassthroughStatus(state, reason, fuse.passthroughOpens(),
                reader == null ? 0 : reader.localCopies(), reader == null ? 0 : reader.localCopyBytes()));
    }

    /** Each mirror's state and counters, in the order they are tried. */
    @Override
    public List<MirrorStatus> mirrors() {
        return reader == null ? List.of() : MirrorStatuses.of(reader.remoteTiers());
    }

    /** Whether the store answers, since when it does not, and what the catalog served meanwhile. */
    @Override
    public Optional<StoreStatus> storeStatus() {
        if (health == null) {
            return Optional.empty();
        }
        StoreHealth.Snapshot h = health.snapshot();
        Optional<StoreHealth.Outage> outage = h.outage();
        return Optional.of(new StoreStatus(h.reachable(), h.offline(),
                h.offline() ? "offline" : outage.map(StoreHealth.Outage::state).orElse("reachable"),
                outage.map(StoreHealth.Outage::notAnswering).orElse(false),
                outage.map(o -> o.since().toString()).orElse(null), outage.map(StoreHealth.Outage::error).orElse(null),
                h.failures(), h.fastFailures(), h.outages(), catalog == null ? 0 : catalog.staleAnswers(),
                config.pointerTtl().toSeconds()));
    }

    /**
     * Tries the store on the next call even if it was found unreachable moments ago: a person
     * asked for something now (a publish, a refresh), typically right after bringing it back.
     */
    public void retryStoreNow() {
        if (health != null) {
            health.retryNow();
        }
    }

    /** The store's reachability (for status and doctor). */
    public Optional<StoreHealth> health() {
        return Optional.ofNullable(health);
    }

    /**
     * Makes the mount re-read now the latest pointers behind the links the kernel caches (after
     * a publish or refresh through this daemon), so that a moved link is seen at once.
     */
    public void checkLinks() {
        retryStoreNow();
        WarpFuse f = fuse;
        if (f != null && mounted) {
            f.checkLinks();
        }
    }

    @Override
    public String version() {
        return io.warpdata.daemon.WarpVersion.version();
    }

    @Override
    public String mountPoint() {
        return config.mountPoint().toString();
    }

    @Override
    public String remote() {
        return config.remote();
    }

    @Override
    public Optional<String> endpoint() {
        return config.endpoint();
    }

    @Override
    public String mode() {
        return config.mode().text();
    }

    /** When this daemon started. */
    @Override
    public Instant startedAt() {
        return startedAt;
    }

    /**
     * Files open in the mount right now, counted from /proc ({@link OpenFiles}): the kernel opens
     * the mount's files without telling warpd.
     */
    @Override
    public java.util.OptionalLong openFiles() {
        if (fuse == null) {
            return java.util.OptionalLong.empty();
        }
        Path mount;
        try {
            mount = config.mountPoint().toRealPath();
        } catch (IOException e) {
            mount = config.mountPoint();
        }
        return java.util.OptionalLong.of(OpenFiles.count(Path.of("/proc"), mount, fuse::isDirectory).files());
    }

    /** Directories open in the mount right now (each opendir reaches warpd). */
    @Override
    public java.util.OptionalLong openDirectories() {
        return fuse == null ? java.util.OptionalLong.empty() : java.util.OptionalLong.of(fuse.openHandles());
    }

    /** The last error lines the mount logged, with their times, oldest first (for warpctl status). */
    @Override
    public List<String> recentErrors() {
        return errno == null ? List.of() : errno.recentErrors();
    }


    public DaemonConfig config() {
        return config;
    }

    public BlobStore store() {
        return store;
    }

    public Catalog catalog() {
        return catalog;
    }

    /** The read path: the block cache (on disk, or in memory in remote mode). */
    public BlockCache reader() {
        return reader;
    }

    public WarpTree tree() {
        return tree;
    }

    /** The FUSE server of the mount (null before it is mounted). */
    public WarpFuse fuse() {
        return fuse;
    }

    public Errno errno() {
        return errno;
    }

    public boolean mounted() {
        return mounted;
    }

    /** Blocks until {@link #close()} has finished. */
    public void awaitClosed() throws InterruptedException {
        closed.await();
    }

    /** Unmounts and closes every service, last opened first. Idempotent; safe from a shutdown hook. */
    @Override
    public void close() {
        if (!closing.compareAndSet(false, true)) {
            try {
                closed.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return;
        }
        boolean startMounted;
        synchronized (this) {
            startMounted = mounting;
        }
        if (startMounted) {
            // The start has mounted or is mounting: what follows the mount in it makes no network
            // call, so it ends soon; its services (the unmount first) are then all here to close.
            try {
                if (!opened.await(30, TimeUnit.SECONDS)) {
                    LOG.warn("the start had not ended 30 s after a stop request; closing what it opened so far");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        try {
            while (true) {
                AutoCloseable s;
                synchronized (this) {
                    s = services.poll();
                }
                if (s == null) {
                    break;
                }
                try {
                    s.close();
                } catch (Exception e) {
                    LOG.warn("closing {} failed: {}", s, e.toString());
                }
            }
        } finally {
            closed.countDown();
        }
    }

    static long uid() {
        return new com.sun.security.auth.module.UnixSystem().getUid();
    }

    static long gid() {
        return new com.sun.security.auth.module.UnixSystem().getGid();
    }
}
