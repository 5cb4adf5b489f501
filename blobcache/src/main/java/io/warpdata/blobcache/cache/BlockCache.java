package io.warpdata.blobcache.cache;

import io.warpdata.store.BlobStore;
import io.warpdata.store.StoreException;
import io.warpdata.store.StoreHealth;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Warp's read path: a content-addressed block cache in front of a {@link BlobStore}, with
 * single-flight verified fetches, adaptive per-blob read-ahead and the four cache modes.
 *
 * <p>A read looks up each block it covers (by blob id, block size and index) in the cache
 * ({@link DiskBlocks} on disk, or {@link MemoryBlocks} in remote mode). Hits are copied out after
 * checking the CRC32C of the 64 KiB chunks touched. Misses are handed to the
 * {@link FetchScheduler} (one fetch per block however many readers want it, demand ahead of
 * read-ahead, runs of blocks in one ranged GET, each block verified as it streams in); the
 * reader then records the access for read-ahead ({@link ReadAhead}) and waits only for its own
 * blocks, at most until its deadline. An archive member ({@link #readMember}) is looked up by its
 * own SHA-256 first and small ones read at random are fetched on their own ({@link MemberReads}).
 * {@code warm} is the {@link Warmer}'s; verify and gc are the storage's. No lock is held across a
 * store call; the hit path allocates nothing but a small key and logs nothing.
 */
public final class BlockCache implements BlobReader {
    /** The folder of a cache directory the block cache keeps its files in (its on-disk format's version). */
    public static final String FOLDER = "v1";

    private static final Logger LOG = LoggerFactory.getLogger(BlockCache.class);
    /** Memory for block hash lists (32 B per block: 64 MiB covers 2 TiB of blobs). */
    static final long HASH_LIST_MEMORY = 64L << 20;

    private final CacheConfig config;
    private final BlobStore store;
    private final ReadMetrics metrics;
    private final BlockFetcher fetcher;
    private final HashLists lists;
    private final BlockStorage storage;
    private final FetchScheduler scheduler;
    private final Warmer warmer;
    private final MemberReads members;
    private final ReadExecutor reads;
    /** Blobs whose bytes failed verification, and their bad blocks. */
    private final Suspects suspects = new Suspects();
    private final HashListPrefetcher prefetcher;
    /** Order plans (null in local mode, which fetches nothing). */
    private final OrderPrefetcher orders;
    private final ExecutorService owned;
    /** Whole-blob copies for passthrough opens (null without a disk cache). */
    private final LocalCopies copies;
    private volatile boolean closed;

    /**
     * A cache fetching on {@code fetchExecutor}, which the caller owns (and shuts down after
     * {@link #close()}); it must run tasks on its own threads (a pool, not a caller-runs
     * executor) and allow {@code maxConcurrentFetches} of them at once plus block-hash-list loads
     * (a cached thread pool, as {@link #open} uses, is right). Opening a disk cache
     * deletes temp files and rebuilds its accounting.
     *
     * @throws CacheDirectoryException if the cache directory is unusable or in use
     */
    public BlockCache(BlobStore store, CacheConfig config, Executor fetchExecutor) {
        this(store, config, fetchExecutor, null, null);
    }

    /**
     * A cache with its own pool of fetch threads, shut down by {@link #close()}.
     *
     * @throws CacheDirectoryException if the cache directory is unusable or in use
     */
    public static BlockCache open(BlobStore store, CacheConfig config) {
        return open(store, config, List.of());
    }

    /**
     * As {@link #open(BlobStore, CacheConfig)}, with remote tiers tried in order, each verified,
     * between the local tiers and the store ({@link RemoteTier}: issue 25's mirrors plug in here).
     *
     * @throws CacheDirectoryException if the cache directory is unusable or in use
     */
    public static BlockCache open(BlobStore store, CacheConfig config, List<RemoteTier> remotes) {
        return open(store, null, config, remotes, ReadMetrics.GetListener.NONE);
    }

    /**
     * As {@link #open(BlobStore, CacheConfig, List)}, reading the bare {@code store} and telling
     * {@code health} of every attempt (warpd: the health the catalog's
     * {@link io.warpdata.store.HealthCheckedStore} shares), so that fetches fail at once while the
     * store is known unreachable, and telling {@code gets} of every GET of data as it completes.
     *
     * @param health the store's health, or null not to track it
     * @param gets   hears of every completed GET ({@link ReadMetrics.GetListener}: warpd's histograms)
     * @throws CacheDirectoryException if the cache directory is unusable or in use
     */
    public static BlockCache open(BlobStore store, StoreHealth health, CacheConfig config, List<RemoteTier> remotes,
                                  ReadMetrics.GetListener gets) {
        AtomicInteger n = new AtomicInteger();
        ExecutorService pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "warp-fetch-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        try {
            return new BlockCache(store, health, config, pool, pool, null, OrderPrefetcher.MAX_PLAN_BYTES, remotes,
                    new ReadMetrics(gets));
        } catch (RuntimeException e) {
            pool.shutdownNow();
            throw e;
        }
    }

    BlockCache(BlobStore store, CacheConfig config, Executor executor, ExecutorService owned, DiskSpace space) {
        this(store, config, executor, owned, space, OrderPrefetcher.MAX_PLAN_BYTES);
    }

    /** As above, with the memory all order plans may hold (tests make it small). */
    BlockCache(BlobStore store, CacheConfig config, Executor executor, ExecutorService owned, DiskSpace space,
               long maxPlanBytes) {
        this(store, config, executor, owned, space, maxPlanBytes, List.of());
    }

    /**
     * Builds the read path bottom up: the store and the remote tiers behind it ({@link Remotes}),
     * the local tiers, the scheduler, the planners (read-ahead, order plans), then the executor
     * that runs read plans over all of them. Nothing below calls anything above.
     */
    BlockCache(BlobStore store, CacheConfig config, Executor executor, ExecutorService owned, DiskSpace space,
               long maxPlanBytes, List<RemoteTier> remotes) {
        this(store, null, config, executor, owned, space, maxPlanBytes, remotes, new ReadMetrics());
    }

    private BlockCache(BlobStore store, StoreHealth health, CacheConfig config, Executor executor,
                       ExecutorService owned, DiskSpace space, long maxPlanBytes, List<RemoteTier> remotes,
                       ReadMetrics metrics) {
        this.metrics = metrics;
        this.config = Objects.requireNonNull(config, "config");
        this.store = Objects.requireNonNull(store, "store");
        Objects.requireNonNull(executor, "executor");
        this.owned = owned;
        this.fetcher = new BlockFetcher(store, health, metrics, config.retry(), new Remotes(remotes, metrics));
        if (config.mode().usesDisk()) {
            DiskBlocks disk = new DiskBlocks(config.dir(), config.maxBytes(), config.minFreeBytes(),
                    config.maxOpenFiles(), metrics, space);
            this.storage = new Tiers(disk);
            this.lists = new HashLists(fetcher, disk.listsDir(), disk.tmpDir(), disk.writes(), HASH_LIST_MEMORY, executor);
            HashLists held = this.lists;
            // Off the write that found the folder made again: up to 64 MiB of lists to write.
            disk.onRemade(() -> executor.execute(held::saveHeld));
            this.copies = new LocalCopies(disk.root(), disk.tmpDir(), disk.writes(), LocalCopies.budgetFor(config.maxBytes()),
                    disk.freeFloorBytes(), disk.space(), new LocalCopies.Source() {
                        @Override
                        public boolean cached(BlobRef blob) {
                            return wholeCached(blob);
                        }

                        @Override
                        public void read(BlobRef blob, long offset, ByteBuffer dst, int at, int len) {
                            BlockCache.this.read(blob, offset, dst, at, len);
                        }
                    });
        } else {
            this.copies = null;
            this.storage = new MemoryBlocks(config.memoryBytes(), metrics);
            this.lists = new HashLists(fetcher, null, null, null, HASH_LIST_MEMORY, executor);
        }
        Suspects suspects = this.suspects;
        // Order plans share read-ahead's budget: none without one (nor in local mode, which fetches nothing).
        this.orders = config.mode().fetches() && config.maxPrefetchBytes() > 0
                ? new OrderPrefetcher(lists, config.retry().readDeadline(), OrderPrefetcher.aheadBytes(config),
                        OrderPrefetcher.keepsBytes(storage), storage.heldRoomBytes(), config.mode() != CacheMode.HYBRID,
                        maxPlanBytes, storage::newPass, () -> metrics.diskKeeps(ReadExecutor.UNKEPT_WINDOW_NANOS),
                        () -> {
                            if (storage.keepsNothingNow()) {
                                metrics.diskKeepsNothing();
                            }
                        })
                : null;
        this.members = new MemberReads(config, metrics, storage, fetcher, lists, suspects, executor);
        this.scheduler = new FetchScheduler(config, metrics, storage, fetcher, executor, suspects, orders, members);
        this.warmer = new Warmer(scheduler);
        this.prefetcher = new HashListPrefetcher(lists, fetcher);
        this.reads = new ReadExecutor(config, metrics, lists, storage, scheduler,
                config.mode().fetches() ? new ReadAhead(suspects, new ParquetLayouts(storage), storage.limitBytes(),
                        storage.heldRoomBytes()) : null,
                orders, members,
                new WholeBlobReads(fetcher, lists, storage, metrics, executor, () -> closed), suspects,
                blob -> prefetcher.prefetch(List.of(blob)));
    }

    /** Forgets the blocks that failed verification twice, as if their 30 s had passed (tests). */
    void forgetBadBlocks() {
        suspects.forgetBadBlocks();
    }

    // ---------------------------------------------------------------- reads

    /**
     * {@inheritDoc}
     *
     * <p>Here ({@link LocalCopies}): with a disk cache, a copy is made in the background of a blob
     * of 64 KiB or more whose every block is cached, when a file of it is closed or opened again,
     * and kept within an eighth of the cache's limit (8 GiB at most).
     */
    @Override
    public java.nio.file.Path localCopy(BlobRef blob) {
        return copies == null || closed ? null : copies.open(blob);
    }

    /**
     * Whether every block of {@code blob} is cached or on its way (fetched, being written: a
     * file read whole is closed before its last blocks are on disk), so that reading it all costs
     * no further GET; its hash list must be in memory.
     */
    private boolean wholeCached(BlobRef blob) {
        BlockHashList list = lists.getIfPresent(blob.blocks());
        if (list == null) {
            return false;
        }
        InFlightBlocks inFlight = scheduler.inFlight();
        for (int i = 0; i < list.blockCount(); i++) {
            if (!inFlight.cachedOrInFlight(new BlockKey(blob.id(), list.blockSize(), i))) {
                return false;
            }
        }
        return true;
    }

    @Override
    public void closed(BlobRef blob) {
        if (copies != null && !closed) {
            copies.closed(blob);
        }
    }

    /**
     * Deletes the whole-blob copies, those an earlier warpd left too, and makes no more: for a
     * warpd that does not serve files through them (no passthrough).
     */
    public void dropLocalCopies() {
        if (copies != null) {
            copies.discard();
        }
    }

    /**
     * Begins serving the copies an earlier run left, each once it hashes to its name (in the
     * background): what a warpd with passthrough does at start ({@link #dropLocalCopies} is the
     * other choice).
     */
    public void adoptLocalCopies() {
        if (copies != null) {
            copies.adoptKeptOnce();
        }
    }

    /** Bytes of whole-blob copies on disk now, beside the blocks ({@link #localCopy}). */
    public long localCopyBytes() {
        return copies == null ? 0 : copies.bytes();
    }

    /** Whole-blob copies on disk now. */
    public long localCopies() {
        return copies == null ? 0 : copies.count();
    }

    /** Whole-blob copies made since start. */
    public long localCopiesMade() {
        return copies == null ? 0 : copies.made();
    }

    @Override
    public int read(BlobRef blob, long offset, byte[] dst, int dstOff, int len) {
        Objects.checkFromIndexSize(dstOff, len, dst.length);
        return read(blob, offset, ByteBuffer.wrap(dst), dstOff, len);
    }

    @Override
    public int read(BlobRef blob, long offset, ByteBuffer dst) {
        int n = read(blob, offset, dst, dst.position(), dst.remaining());
        dst.position(dst.position() + n);
        return n;
    }

    /** Reads into {@code dst[dstOff, dstOff+len)} (absolute indexes; position and limit untouched). */
    private int read(BlobRef blob, long offset, ByteBuffer dst, int dstOff, int len) {
        if (offset < 0) {
            throw new IllegalArgumentException("negative offset " + offset + " in blob " + blob.id());
        }
        if (offset >= blob.size() || len == 0) {
            return 0;
        }
        ensureOpen();
        int n = (int) Math.min(len, blob.size() - offset);
        reads.read(blob, offset, dst, dstOff, n);
        return n;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Here: from where {@link ReadPlan} says, in the order of {@link Source}: the member
     * cached under its hash, another blob's cached blocks holding the same bytes, its own blocks
     * when cached, a small member read at random fetched on its own, else its blob's blocks
     * with read-ahead, as {@link #read} reads them.
     */
    @Override
    public int readMember(BlobMember member, long offset, ByteBuffer dst) {
        if (offset < 0) {
            throw new IllegalArgumentException("negative offset " + offset + " in member " + member.hash());
        }
        if (offset >= member.length() || !dst.hasRemaining()) {
            return 0;
        }
        ensureOpen();
        int n = (int) Math.min(dst.remaining(), member.length() - offset);
        int at = dst.position();
        reads.readMember(member, offset, dst, at, n);
        dst.position(at + n);
        return n;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Here: the lists not yet in memory are loaded (from disk, else the store) by the
     * {@link HashListPrefetcher}, within its bounds; in local mode, which never fetches, nothing.
     */
    @Override
    public void prefetchHashLists(List<BlobRef> blobs) {
        if (!closed && config.mode().fetches()) {
            prefetcher.prefetch(blobs);
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Here: an index of at most {@link WholeBlobReads#MAX_BYTES} whose block hash list is
     * neither in memory nor on disk (first touch) is fetched whole with one GET and verified
     * against its id, while its list loads alongside to cache its blocks ({@link WholeBlobReads});
     * any other, and every index in local mode, is read as {@link #readAll} reads.
     */
    @Override
    public byte[] readIndex(BlobRef blob) {
        ensureOpen();
        byte[] whole = reads.readIndexWhole(blob);
        return whole != null ? whole : readAll(blob);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Here: read as {@link #readIndex(BlobRef)}; an index of at most one default block read
     * whole comes into a pooled buffer ({@link WholeBlobReads#readInto}). With {@link
     * IndexBlocks#CALLER_KEEPS}, an index read whole is not written to the cache as blocks (one read through
     * its blocks, when its list is known here, still is).
     */
    @Override
    public void readIndex(BlobRef blob, IndexBlocks blocks, IndexSink sink) {
        ensureOpen();
        if (!reads.readIndexWhole(blob, blocks == IndexBlocks.CACHE, sink)) {
            byte[] b = readAll(blob);
            sink.accept(b, b.length);
        }
    }

    // ---------------------------------------------------------------- order plans

    /**
     * A builder for an order plan: the members a reader will read, in order. Its memory counts
     * against the bound of all plans as it grows ({@link OrderPrefetcher#MAX_PLAN_BYTES}); hand
     * it to {@link #startPlan} or {@link OrderPlan.Builder#discard()} it.
     *
     * @param description what the plan is for, for logs and status
     * @throws StoreException if this cache cannot fetch ahead (local mode, or read-ahead off)
     */
    public OrderPlan.Builder orderPlan(String description) {
        ensureOpen();
        return requireOrders().builder(description);
    }

    /**
     * Fetches ahead of the reader in the plan's order, as plan {@code name}, replacing the plan
     * of that name (the reader's previous epoch); see {@link OrderPrefetcher}.
     *
     * @return the new plan's status
     * @throws StoreException if this cache cannot fetch ahead
     */
    public PlanStatus startPlan(String name, OrderPlan.Builder plan) {
        ensureOpen();
        PlanStatus started = requireOrders().start(name, plan);
        scheduler.followPlans();
        return started;
    }

    /** Stops plan {@code name}; false if there is none. */
    public boolean stopPlan(String name) {
        return orders != null && orders.stop(name);
    }

    /** The order plans followed now, then the last few finished or replaced. */
    public java.util.List<PlanStatus> plans() {
        return orders == null ? java.util.List.of() : orders.status();
    }

    /** How far past its reader a plan is fetched in this cache (0 if plans are not possible). */
    public long planAheadBytes() {
        return orders == null ? 0 : orders.aheadBytes();
    }

    private OrderPrefetcher requireOrders() {
        if (orders == null) {
            throw new StoreException("This warpd never fetches ahead (" + (config.mode().fetches()
                    ? "read-ahead is off" : "--mode local: only cached blocks are read") + "), so an order plan has"
                    + " nothing to do", "Fill the cache with 'warpctl warm DATASET' before reading, or restart warpd"
                    + " with --mode auto.", null);
        }
        return orders;
    }

    // ---------------------------------------------------------------- operations

    /**
     * Makes sure the first {@code maxBytes} of {@code blob} (whole blocks: every block that
     * starts before {@code maxBytes}) are cached, fetching missing blocks in order and skipping
     * cached ones, for {@code warpctl warm}. Works in every disk mode, including local (it is how
     * a local cache is filled). Stops early, without error, when the blob's cached bytes would
     * exceed the cache's size limit, or when cancelled. Returns once fetched blocks are on disk.
     *
     * @param maxBytes  how much of the blob, from its start, to cover ({@code Long.MAX_VALUE}: all)
     * @param listener  told of progress after each run
     * @param cancelled polled between runs
     * @throws StoreException if a fetch fails (after retries) or the cache is in remote mode
     */
    public WarmResult warm(BlobRef blob, long maxBytes, WarmListener listener, BooleanSupplier cancelled) {
        ensureOpen();
        if (!config.mode().usesDisk()) {
            throw new StoreException("Cannot warm blob " + blob.id() + ": the cache is in remote mode and keeps"
                    + " nothing on disk", "Restart warpd with --mode auto (or hybrid) to warm datasets.", null);
        }
        if (blob.size() == 0) {
            return new WarmResult(0, 0, 0, 0, true, cancelled.getAsBoolean());
        }
        BlockHashList list = lists.get(blob, fetcher.deadlineFromNow(), true);
        int bs = list.blockSize();
        int count = maxBytes >= blob.size() ? list.blockCount()
                : (int) Math.min(list.blockCount(), (Math.max(0, maxBytes) + bs - 1) / bs);
        return warmer.warm(blob, list, count, listener, cancelled);
    }

    /**
     * As {@link #warm(BlobRef, long, WarmListener, BooleanSupplier)}, for the blocks that hold
     * {@code ranges} of the blob ({@code [offset, end)} byte ranges, any order, may overlap): the
     * members of a view, which live in its parent's shards among members the view does not
     * select. At most {@code maxBytes} of blocks are covered, in blob order. The result is complete
     * when every block of the ranges is cached.
     *
     * @throws StoreException if a fetch fails (after retries) or the cache is in remote mode
     */
    public WarmResult warm(BlobRef blob, List<long[]> ranges, long maxBytes, WarmListener listener,
                           BooleanSupplier cancelled) {
        ensureOpen();
        if (!config.mode().usesDisk()) {
            throw new StoreException("Cannot warm blob " + blob.id() + ": the cache is in remote mode and keeps"
                    + " nothing on disk", "Restart warpd with --mode auto (or hybrid) to warm datasets.", null);
        }
        if (blob.size() == 0 || ranges.isEmpty()) {
            return new WarmResult(0, 0, 0, 0, true, cancelled.getAsBoolean());
        }
        BlockHashList list = lists.get(blob, fetcher.deadlineFromNow(), true);
        return warmer.warm(blob, list, Warmer.blockSpans(list, ranges, maxBytes), listener, cancelled);
    }

    /** The bytes of the blocks that hold {@code ranges} of the blob: what {@link #warm(BlobRef, List, long, WarmListener, BooleanSupplier)} covers. */
    public long blockBytes(BlobRef blob, List<long[]> ranges) {
        if (blob.size() == 0 || ranges.isEmpty()) {
            return 0;
        }
        BlockHashList list = lists.get(blob, fetcher.deadlineFromNow(), true);
        long bytes = 0;
        for (int[] span : Warmer.blockSpans(list, ranges, Long.MAX_VALUE)) {
            for (int b = span[0]; b < span[1]; b++) {
                bytes += list.blockLength(b);
            }
        }
        return bytes;
    }

    /** Size, limit, hit rate and counters. */
    public CacheStats stats() {
        long hit = metrics.hitBytes.sum();
        long miss = metrics.missBytes.sum();
        return new CacheStats(config.mode(), config.mode().usesDisk() ? config.dir().toString() : null,
                storage.sizeBytes(), storage.limitBytes(), storage.freeFloorBytes(), storage.blockCount(),
                hit + miss == 0 ? 0 : (double) hit / (hit + miss), metrics.snapshot(), metrics.bySource(),
                storage.spareMembers(), storage.spareMemoryBytes());
    }

    /**
     * Re-hashes every cached block against its SHA-256 (block hash lists are kept on disk for
     * this) and deletes the ones that do not match. Reads keep working meanwhile.
     */
    public VerifyResult verify() {
        return verify(done -> { }, () -> false);
    }

    /**
     * As {@link #verify()}, reporting the data bytes checked so far after each block and
     * stopping early when {@code cancelled} says so.
     */
    public VerifyResult verify(LongConsumer progress, BooleanSupplier cancelled) {
        ensureOpen();
        if (copies != null) {
            // Each against its name, the blob's SHA-256; one that fails is deleted, and made
            // again from verified blocks when its file is next read whole.
            copies.verify();
        }
        return storage.verify(lists, progress, cancelled);
    }

    /**
     * Evicts until at most {@code limitBytes} are cached; the configured limit is unchanged.
     *
     * @return bytes freed
     */
    public long gc(long limitBytes) {
        ensureOpen();
        if (copies != null) {
            copies.clear();
        }
        return storage.gc(limitBytes);
    }

    /** Counters of each remote tier ({@link RemoteTier}), in the order they are tried; empty without any. */
    public List<RemoteTierStats> remoteTiers() {
        return fetcher.remotes().snapshot();
    }

    /** The block hash lists this cache holds (for tests: whether a list is in memory). */
    HashLists hashLists() {
        return lists;
    }

    @Override
    public ReadMetrics metrics() {
        return metrics;
    }

    public CacheConfig config() {
        return config;
    }

    private void ensureOpen() {
        if (closed) {
            throw new StoreException("The block cache is closed", "This is a bug in warpd: reads after shutdown.", null);
        }
    }

    /**
     * Waits until no fetch (nor hash-list prefetch) is queued or in flight and every fetched block is written, for tests
     * and benchmarks that count what a read sequence left behind.
     *
     * @return whether it became idle within {@code timeout}
     */
    public boolean awaitIdle(Duration timeout) throws InterruptedException {
        long until = System.nanoTime() + timeout.toNanos();
        while (!scheduler.idle() || !members.idle() || !prefetcher.idle()) {
            if (System.nanoTime() > until) {
                return false;
            }
            Thread.sleep(2);
        }
        return true;
    }

    /**
     * Drops queued work, lets blocks already fetched finish being written (up to
     * {@link FetchScheduler#CLOSE_GRACE}), fails readers still waiting, and releases the cache
     * directory.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (copies != null) {
            copies.close();
        }
        prefetcher.close();
        if (orders != null) {
            orders.close();
        }
        scheduler.close();
        storage.close();
        fetcher.remotes().close();
        if (owned != null) {
            owned.shutdownNow();
        }
    }
}
