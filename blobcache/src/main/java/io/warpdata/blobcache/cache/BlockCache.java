package io.warpdata.blobcache.cache;

import io.warpdata.blobcache.BlobReader;
import io.warpdata.blobcache.BlobStore;
import io.warpdata.blobcache.BlockVerificationException;
import io.warpdata.blobcache.ReadMetrics;
import io.warpdata.blobcache.StoreException;
import io.warpdata.blobcache.StoreLayout;
import io.warpdata.blobcache.StoreUnavailableException;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
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
 * checking the CRC32C of the 64 KiB chunks touched. Misses get a {@link Fetch} in the in-flight
 * map (one per block however many readers want it) and are queued at high priority; the reader
 * then records the access for read-ahead and waits only for its own blocks, at most until its
 * deadline. Fetch workers (at most {@code maxConcurrentFetches}, on the injected executor) take
 * demand work before read-ahead, fetch runs of consecutive blocks with one ranged GET, verify
 * every block against its SHA-256 as soon as its bytes have streamed in and hand it to its
 * waiters at once, then, once the GET is done, write the run's blocks to the cache.
 * No lock is held across a store call; the hit path allocates nothing but a small key and logs
 * nothing.
 */
public final class BlockCache implements BlobReader {
    private static final Logger LOG = LoggerFactory.getLogger(BlockCache.class);
    /**
     * Longest coalesced GET: 32 MiB. Every GET costs the SDK's request pipeline (signing,
     * interceptors, metrics) and, for the first thousands of requests of a daemon's life, the
     * JIT compiling it: a cold 1 GiB read made 128 GETs of 8 MiB and measured 335-375 MB/s at
     * 3.7-4.4 s of warpd CPU per GiB; with 32 GETs of 32 MiB, 380-467 MB/s at 3.1-3.7 s/GiB.
     * A reader that needs a block inside a run in flight waits only until that block has
     * streamed in and been verified, not for the whole run.
     */
    static final int MAX_RUN_BYTES = 32 << 20;
    /** Memory for block hash lists (32 B per block: 64 MiB covers 2 TiB of blobs). */
    static final long HASH_LIST_MEMORY = 64L << 20;
    /** Runs one warm() keeps in flight: enough to fill the pipe, few enough to leave room for reads. */
    static final int WARM_RUNS_IN_FLIGHT = 4;
    /** Runs all hybrid whole-blob fetches together keep in flight (same reasoning as warm). */
    static final int HYBRID_RUNS_IN_FLIGHT = 4;
    /** How long close() lets fetched blocks finish being written: a restart then refetches nothing. */
    static final Duration CLOSE_GRACE = Duration.ofSeconds(2);
    /** Local-mode misses are logged at most this often: one line tells the user what to do. */
    static final Duration NOT_CACHED_LOG_EVERY = Duration.ofSeconds(10);

    /**
     * Idle fetch buffers kept for reuse ({@link RunBuffers}): 128 MiB (capped at
     * maxInFlightBytes). A sequential reader at the full window keeps up to the default read-ahead
     * budget, 128 MiB, of runs fetched or waiting for their disk writes (measured: with 64 MiB, a
     * quarter of the runs still allocated a fresh 8 MiB buffer). G1 keeps the heap that held
     * them committed after a burst anyway, so keeping them costs no extra memory in practice.
     */
    static final long POOLED_BUFFER_BYTES = 128L << 20;

    /** A fetch completed with this means "it was cached meanwhile: read it from the cache". */
    private static final BlockBytes RETRY = new BlockBytes(null, 0, 0);

    /**
     * Verified bytes of one block inside a fetch buffer. A reader must {@link RunBuffers.Run#retain}
     * the run before copying (and release it after): the buffer is reused once the run is cached.
     */
    record BlockBytes(RunBuffers.Run run, int offset, int length) {
    }

    /** One block's fetch: created once, shared by every reader of the block until it is cached. */
    static final class Fetch {
        static final int QUEUED = 0;
        static final int QUEUED_DEMANDED = 1;
        static final int RUNNING = 2;

        final BlockKey key;
        final BlobRef blob;
        final BlockHashList list;
        final boolean prefetch;
        final CompletableFuture<BlockBytes> done = new CompletableFuture<>();
        /** Completes once the outcome is final: bytes written to the cache (or not), map entry gone. */
        final CompletableFuture<Void> settled = new CompletableFuture<>();
        final AtomicInteger state;
        /**
         * Taken exactly once: by the first reader that waits on this read-ahead fetch (a prefetch
         * hit), or else through the cache entry it becomes, which shares this flag (a hit when
         * first read there, waste if evicted unread). Sharing it closes the window in which the
         * entry had taken the credit but a reader still got the block from the fetch: then
         * neither counted a hit.
         */
        final AtomicBoolean prefetchCredit = new AtomicBoolean();

        Fetch(BlockKey key, BlobRef blob, BlockHashList list, boolean prefetch, int state) {
            this.key = key;
            this.blob = blob;
            this.list = list;
            this.prefetch = prefetch;
            this.state = new AtomicInteger(state);
        }

        /** Whether the caller may run this fetch (exactly one caller ever gets true). */
        boolean claim() {
            return state.compareAndSet(QUEUED, RUNNING) || state.compareAndSet(QUEUED_DEMANDED, RUNNING);
        }

        /** Whether the caller should queue this (not yet started) fetch at high priority. */
        boolean promote() {
            return state.compareAndSet(QUEUED, QUEUED_DEMANDED);
        }
    }

    /** Consecutive fetches of one blob; {@code budgetKiB} of read-ahead budget is returned after. */
    private record Task(List<Fetch> fetches, int budgetKiB) {
    }

    /** Progress of a hybrid-mode whole-blob fetch. */
    private static final class HybridCursor {
        final BlobRef blob;
        final BlockHashList list;
        int next;

        HybridCursor(BlobRef blob, BlockHashList list) {
            this.blob = blob;
            this.list = list;
        }
    }

    private final CacheConfig config;
    private final BlobStore store;
    private final ReadMetrics metrics = new ReadMetrics();
    private final RunBuffers buffers;
    private final BlockFetcher fetcher;
    private final HashLists lists;
    private final BlockStorage storage;
    private final ReadAhead readAhead;
    private final Executor executor;
    private final ExecutorService owned;
    private final long deadlineNanos;
    private final ConcurrentHashMap<BlockKey, Fetch> inflight = new ConcurrentHashMap<>();
    private final Queue<Task> demandQueue = new ConcurrentLinkedQueue<>();
    private final Queue<Task> prefetchQueue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger workers = new AtomicInteger();
    private final AtomicInteger runningPrefetch = new AtomicInteger();
    private final int maxPrefetchWorkers;
    private final int memoryPermits;
    private final Semaphore memory;
    private final int prefetchPermits;
    private final Semaphore prefetchBudget;
    private final Queue<HybridCursor> hybridQueue = new ConcurrentLinkedQueue<>();
    private final Semaphore hybridRuns = new Semaphore(HYBRID_RUNS_IN_FLIGHT);
    private final AtomicLong lastNotCachedLog = new AtomicLong(System.nanoTime() - NOT_CACHED_LOG_EVERY.toNanos());
    private final ThreadLocal<ArrayList<Fetch>> pendingScratch = ThreadLocal.withInitial(ArrayList::new);
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
        AtomicInteger n = new AtomicInteger();
        ExecutorService pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "warp-fetch-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        try {
            return new BlockCache(store, config, pool, pool, null);
        } catch (RuntimeException e) {
            pool.shutdownNow();
            throw e;
        }
    }

    BlockCache(BlobStore store, CacheConfig config, Executor executor, ExecutorService owned, DiskSpace space) {
        this.config = Objects.requireNonNull(config, "config");
        this.store = Objects.requireNonNull(store, "store");
        this.executor = Objects.requireNonNull(executor, "executor");
        this.owned = owned;
        this.deadlineNanos = config.retry().readDeadline().toNanos();
        this.fetcher = new BlockFetcher(store, metrics, config.retry());
        if (config.mode().usesDisk()) {
            DiskBlocks disk = new DiskBlocks(config.dir(), config.maxBytes(), config.minFreeBytes(),
                    config.maxOpenFiles(), metrics, space);
            this.storage = disk;
            this.lists = new HashLists(fetcher, disk.listsDir(), disk.tmpDir(), HASH_LIST_MEMORY, executor);
        } else {
            this.storage = new MemoryBlocks(config.memoryBytes(), metrics);
            this.lists = new HashLists(fetcher, null, null, HASH_LIST_MEMORY, executor);
        }
        this.maxPrefetchWorkers = Math.max(1, config.maxConcurrentFetches() * 3 / 4);
        this.memoryPermits = kib(config.maxInFlightBytes());
        this.memory = new Semaphore(memoryPermits);
        this.buffers = new RunBuffers(MAX_RUN_BYTES, Math.min(POOLED_BUFFER_BYTES, config.maxInFlightBytes()));
        this.prefetchPermits = kib(config.maxPrefetchBytes());
        this.prefetchBudget = new Semaphore(prefetchPermits);
        this.readAhead = config.mode().fetches() ? new ReadAhead(this::schedulePrefetch) : null;
    }

    // ---------------------------------------------------------------- reads

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
        long end = offset + n;
        long deadline = System.nanoTime() + deadlineNanos;
        ArrayList<Fetch> pending = pendingScratch.get();
        try {
            BlockHashList list = lists.get(blob, deadline, config.mode().fetches());
            int bs = list.blockSize();
            int first = (int) (offset / bs);
            int last = (int) ((end - 1) / bs);
            for (int b = first; b <= last; b++) {
                long blockStart = (long) b * bs;
                long from = Math.max(offset, blockStart);
                int take = (int) (Math.min(end, blockStart + list.blockLength(b)) - from);
                BlockKey key = new BlockKey(blob.id(), bs, b);
                if (storage.read(key, (int) (from - blockStart), dst, dstOff + (int) (from - offset), take)) {
                    metrics.hitBlocks.increment();
                    metrics.hitBytes.add(take);
                } else if (!config.mode().fetches()) {
                    throw notCached(blob, b);
                } else {
                    pending.add(demand(blob, list, key));
                }
            }
            if (readAhead != null && readAhead.onRead(blob, list, offset, n) && config.mode() == CacheMode.HYBRID) {
                hybridQueue.add(new HybridCursor(blob, list));
                pumpHybrid();
            }
            for (Fetch f : pending) {
                long blockStart = (long) f.key.index() * bs;
                long from = Math.max(offset, blockStart);
                int take = (int) (Math.min(end, blockStart + list.blockLength(f.key.index())) - from);
                copyFromFetch(f, (int) (from - blockStart), dst, dstOff + (int) (from - offset), take, deadline);
            }
            return n;
        } catch (RuntimeException e) {
            metrics.readErrors.increment();
            throw e;
        } finally {
            pending.clear();
        }
    }

    @Override
    public byte[] readAll(BlobRef blob) {
        if (blob.size() > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException("blob " + blob.id() + " of " + blob.size() + " bytes is too large to read whole");
        }
        if (blob.size() == 0) {
            return DirectBlobReader.emptyBlob(blob);
        }
        byte[] out = new byte[(int) blob.size()];
        read(blob, 0, out, 0, out.length);
        return out;
    }

    /** The local-mode miss, logged at most every {@link #NOT_CACHED_LOG_EVERY} (never per read). */
    private BlockNotCachedException notCached(BlobRef blob, int block) {
        BlockNotCachedException e = new BlockNotCachedException("Block " + block + " of blob " + blob.id());
        long now = System.nanoTime();
        long last = lastNotCachedLog.get();
        if (now - last >= NOT_CACHED_LOG_EVERY.toNanos() && lastNotCachedLog.compareAndSet(last, now)) {
            LOG.warn("{}. {}", e.getMessage(), e.nextStep());
        }
        return e;
    }

    /** Waits for a block's fetch and copies the wanted part out; retries via the cache if told to. */
    private void copyFromFetch(Fetch f, int inBlock, ByteBuffer dst, int out, int take, long deadline) {
        while (true) {
            BlockBytes bb = awaitFetch(f, deadline);
            boolean fetched = bb != RETRY;
            if (fetched && bb.run().retain()) {
                try {
                    dst.put(out, bb.run().array, bb.offset() + inBlock, take);
                } finally {
                    bb.run().release();
                }
                metrics.missBlocks.increment();
                metrics.missBytes.add(take);
                return;
            }
            // Cached meanwhile, or fetched for us and cached, its buffer already reused: read it
            // from the cache (or, if it could not be cached, fetch it again).
            if (storage.read(f.key, inBlock, dst, out, take)) {
                if (fetched) {
                    metrics.missBlocks.increment();
                    metrics.missBytes.add(take);
                } else {
                    metrics.hitBlocks.increment();
                    metrics.hitBytes.add(take);
                }
                return;
            }
            f = demand(f.blob, f.list, f.key);
        }
    }

    private BlockBytes awaitFetch(Fetch f, long deadline) {
        try {
            return Deadlines.await(f.done, deadline, () -> "reading " + f.key + " from " + store.describe()
                    + " within " + config.retry().readDeadline().toMillis() + " ms");
        } catch (StoreUnavailableException e) {
            if (!f.done.isDone()) {
                // Hung or very slow: let the next read start a fresh fetch instead of waiting on this one.
                inflight.remove(f.key, f);
            }
            throw e;
        }
    }

    /** The fetch that will deliver {@code key}, queued at high priority if not yet running. */
    private Fetch demand(BlobRef blob, BlockHashList list, BlockKey key) {
        Fetch f = inflight.get(key);
        if (f != null && f.done.isCompletedExceptionally()) {
            // A failed fetch on its way out of the map: this read gets its own attempt.
            inflight.remove(key, f);
            f = null;
        }
        if (f == null) {
            Fetch mine = new Fetch(key, blob, list, false, Fetch.QUEUED_DEMANDED);
            f = inflight.putIfAbsent(key, mine);
            if (f == null) {
                if (storage.contains(key)) {
                    // A fetch finished between our cache lookup and now.
                    inflight.remove(key, mine);
                    mine.done.complete(RETRY);
                    mine.settled.complete(null);
                } else {
                    enqueue(demandQueue, new Task(List.of(mine), 0));
                }
                return mine;
            }
        }
        if (f.prefetch && f.prefetchCredit.compareAndSet(false, true)) {
            metrics.prefetchHitBlocks.increment();
        }
        if (f.promote()) {
            enqueue(demandQueue, new Task(List.of(f), 0));
        }
        return f;
    }

    // ---------------------------------------------------------------- read-ahead

    /** {@link ReadAhead.Scheduler}: queue runs of missing blocks in [from, to) within the budget. */
    private int schedulePrefetch(BlobRef blob, BlockHashList list, int from, int to) {
        if (closed || prefetchPermits == 0) {
            return to; // read-ahead is off: nothing to schedule, now or later
        }
        int bs = list.blockSize();
        int maxRun = (int) Math.max(1, Math.min(MAX_RUN_BYTES / bs, (long) prefetchPermits * 1024 / bs));
        int b = from;
        while (b < to) {
            if (cachedOrInFlight(new BlockKey(blob.id(), bs, b))) {
                b++;
                continue;
            }
            int runEnd = b + 1;
            while (runEnd < to && runEnd - b < maxRun && !cachedOrInFlight(new BlockKey(blob.id(), bs, runEnd))) {
                runEnd++;
            }
            int kib = kib(BlockFetcher.runLength(list, b, runEnd - b));
            if (!prefetchBudget.tryAcquire(kib)) {
                return b;
            }
            List<Fetch> run = register(blob, list, b, runEnd, true);
            int used = run.isEmpty() ? 0 : kib(BlockFetcher.runLength(list, b, run.size()));
            if (kib > used) {
                prefetchBudget.release(kib - used);
            }
            if (run.isEmpty()) {
                b++;
                continue;
            }
            metrics.prefetchedBlocks.add(run.size());
            enqueue(prefetchQueue, new Task(run, used));
            b += run.size();
        }
        return to;
    }

    private boolean cachedOrInFlight(BlockKey key) {
        return inflight.containsKey(key) || storage.contains(key);
    }

    /** Registers fetches for blocks [from, to), stopping at the first one cached or in flight. */
    private List<Fetch> register(BlobRef blob, BlockHashList list, int from, int to, boolean prefetch) {
        List<Fetch> run = new ArrayList<>(to - from);
        for (int i = from; i < to; i++) {
            Fetch f = new Fetch(new BlockKey(blob.id(), list.blockSize(), i), blob, list, prefetch, Fetch.QUEUED);
            if (inflight.putIfAbsent(f.key, f) != null) {
                break;
            }
            if (storage.contains(f.key)) {
                inflight.remove(f.key, f);
                f.done.complete(RETRY);
                f.settled.complete(null);
                break;
            }
            run.add(f);
        }
        return run;
    }

    /** Hybrid mode: keeps up to {@link #HYBRID_RUNS_IN_FLIGHT} runs of first-touched blobs in flight. */
    private void pumpHybrid() {
        while (!closed) {
            HybridCursor c = hybridQueue.peek();
            if (c == null || !hybridRuns.tryAcquire()) {
                return;
            }
            List<Fetch> run = null;
            synchronized (c) {
                int bs = c.list.blockSize();
                int maxRun = Math.max(1, MAX_RUN_BYTES / bs);
                int count = c.list.blockCount();
                while (c.next < count && cachedOrInFlight(new BlockKey(c.blob.id(), bs, c.next))) {
                    c.next++;
                }
                if (c.next < count) {
                    int end = c.next + 1;
                    while (end < count && end - c.next < maxRun
                            && !cachedOrInFlight(new BlockKey(c.blob.id(), bs, end))) {
                        end++;
                    }
                    run = register(c.blob, c.list, c.next, end, true);
                    c.next += Math.max(1, run.size());
                }
            }
            if (run == null) {
                hybridQueue.remove(c);
                hybridRuns.release();
                continue;
            }
            if (run.isEmpty()) {
                hybridRuns.release();
                continue;
            }
            metrics.prefetchedBlocks.add(run.size());
            CompletableFuture.allOf(run.stream().map(f -> f.done).toArray(CompletableFuture[]::new))
                    .whenComplete((v, e) -> {
                        hybridRuns.release();
                        pumpHybrid();
                    });
            enqueue(prefetchQueue, new Task(run, 0));
        }
    }

    // ---------------------------------------------------------------- fetch workers

    private void enqueue(Queue<Task> queue, Task task) {
        queue.add(task);
        maybeStartWorker();
    }

    private void maybeStartWorker() {
        while (true) {
            int w = workers.get();
            boolean prefetchRunnable = !prefetchQueue.isEmpty() && runningPrefetch.get() < maxPrefetchWorkers;
            if (w >= config.maxConcurrentFetches() || (demandQueue.isEmpty() && !prefetchRunnable)) {
                return;
            }
            if (workers.compareAndSet(w, w + 1)) {
                try {
                    executor.execute(this::work);
                } catch (RejectedExecutionException e) {
                    workers.decrementAndGet();
                    failQueued(new StoreUnavailableException("The fetch executor refused work (shutting down?)", e));
                    return;
                }
            }
        }
    }

    private void work() {
        try {
            while (true) {
                Task t = demandQueue.poll();
                if (t != null) {
                    run(t);
                    continue;
                }
                // Read-ahead, warm and hybrid work may occupy only some of the workers, so that a
                // read's own fetch never queues behind a wall of slow read-ahead GETs.
                if (runningPrefetch.incrementAndGet() > maxPrefetchWorkers) {
                    runningPrefetch.decrementAndGet();
                    return;
                }
                try {
                    t = prefetchQueue.poll();
                    if (t == null) {
                        return;
                    }
                    run(t);
                } finally {
                    runningPrefetch.decrementAndGet();
                }
            }
        } finally {
            workers.decrementAndGet();
            // Work queued while we were leaving must not be stranded.
            maybeStartWorker();
        }
    }

    private void run(Task t) {
        try {
            Fetch head = t.fetches().get(0);
            // Read-ahead queued before a block of its blob failed verification: drop what no
            // reader has asked for yet (a reader that comes later fetches its block on demand).
            boolean dropReadAhead = head.prefetch && readAhead != null && readAhead.suspect(head.blob.id());
            List<Fetch> group = new ArrayList<>(t.fetches().size());
            for (Fetch f : t.fetches()) {
                if (dropReadAhead && f.state.compareAndSet(Fetch.QUEUED, Fetch.RUNNING)) {
                    inflight.remove(f.key, f);
                    f.done.complete(RETRY);
                    f.settled.complete(null);
                    if (!group.isEmpty()) {
                        fetchGroup(group);
                        group = new ArrayList<>();
                    }
                } else if (f.claim()) {
                    group.add(f);
                } else if (!group.isEmpty()) {
                    fetchGroup(group);
                    group = new ArrayList<>();
                }
            }
            if (!group.isEmpty()) {
                fetchGroup(group);
            }
        } finally {
            if (t.budgetKiB() > 0) {
                prefetchBudget.release(t.budgetKiB());
            }
        }
    }

    /** One ranged GET for consecutive blocks, verification of each, then hand-over and caching. */
    private void fetchGroup(List<Fetch> group) {
        Fetch first = group.get(0);
        BlobRef blob = first.blob;
        BlockHashList list = first.list;
        int b0 = first.key.index();
        int len = BlockFetcher.runLength(list, b0, group.size());
        int kib = Math.min(kib(buffers.capacityFor(len)), memoryPermits);
        long deadline = fetcher.deadlineFromNow();
        boolean acquired = false;
        RunBuffers.Run run = null;
        try {
            if (closed) {
                throw new StoreUnavailableException("The block cache is closed", null);
            }
            acquired = memory.tryAcquire(kib, Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (!acquired) {
                throw new StoreUnavailableException("No memory for in-flight fetches of blob " + blob.id()
                        + " within the read deadline", null);
            }
            run = buffers.acquire(len);
            byte[] buf = run.array;
            // Each block goes to its readers as soon as its bytes are in and verified, while the
            // rest of the run still streams in: a reader never waits for a whole run.
            HandOff handOff = new HandOff(group, run, deadline);
            fetcher.readStreaming(StoreLayout.blob(blob.id()), (long) b0 * list.blockSize(), buf, len,
                    handOff::arrived, handOff::handedBytes, deadline);
            handOff.arrived(len);
            if (handOff.clean && readAhead != null) {
                readAhead.onVerifiedRun(blob.id());
            }
            // Only then write them to the cache, so that the GET's stream is never held up by disk
            // writes and a reader of the run's last block does not wait for the others' writes.
            int pos = 0;
            for (Fetch f : group) {
                int bl = list.blockLength(f.key.index());
                if (!f.settled.isDone()) {
                    store(f, buf, pos, bl);
                }
                pos += bl;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failAll(group, new StoreUnavailableException("Interrupted fetching blob " + blob.id(), e));
        } catch (RuntimeException | Error e) {
            failAll(group, e);
        } finally {
            if (run != null) {
                // Every block is cached or failed by now; readers still copying hold the run.
                run.release();
            }
            if (acquired) {
                memory.release(kib);
            }
        }
    }

    /** Verifies and hands over the blocks of one run in order, as the run's bytes arrive. */
    private final class HandOff {
        private final List<Fetch> group;
        private final RunBuffers.Run run;
        private final byte[] buf;
        private final long deadline;
        private int next;
        private int nextStart;
        /** No block of the run has failed verification, not even once. */
        boolean clean = true;

        HandOff(List<Fetch> group, RunBuffers.Run run, long deadline) {
            this.group = group;
            this.run = run;
            this.buf = run.array;
            this.deadline = deadline;
        }

        /** Bytes [0, upTo) of the run are in place. */
        void arrived(int upTo) {
            while (next < group.size()) {
                Fetch f = group.get(next);
                int bl = f.list.blockLength(f.key.index());
                if (nextStart + bl > upTo) {
                    return;
                }
                try {
                    if (!fetcher.verifyOrRefetch(f.blob, f.list, f.key.index(), buf, nextStart, deadline)) {
                        suspect(f.blob);
                    }
                    f.done.complete(new BlockBytes(run, nextStart, bl));
                } catch (BlockVerificationException e) {
                    // Before the readers hear of it, so that a reader going on sequentially
                    // finds read-ahead already held back.
                    suspect(f.blob);
                    fail(f, e);
                } catch (RuntimeException e) {
                    fail(f, e);
                }
                next++;
                nextStart += bl;
            }
        }

        private void suspect(BlobRef blob) {
            clean = false;
            if (readAhead != null) {
                readAhead.onVerificationFailure(blob.id());
            }
        }

        /** Bytes of the run already handed over (a retried GET starts there). */
        int handedBytes() {
            return nextStart;
        }
    }

    /** Writes a fetched block to the cache, then retires its fetch. */
    private void store(Fetch f, byte[] buf, int pos, int len) {
        try {
            storage.put(f.key, f.blob.blocks(), buf, pos, len, f.prefetch ? f.prefetchCredit : null);
        } catch (RuntimeException e) {
            LOG.warn("Could not cache {}: {}", f.key, e.toString());
        } finally {
            inflight.remove(f.key, f);
            f.settled.complete(null);
        }
    }

    private void fail(Fetch f, Throwable e) {
        // Out of the map first, so a reader that sees this failure and retries starts afresh.
        inflight.remove(f.key, f);
        f.done.completeExceptionally(e);
        f.settled.complete(null);
    }

    private void failAll(List<Fetch> group, Throwable e) {
        for (Fetch f : group) {
            if (!f.done.isDone()) {
                fail(f, e);
            } else if (!f.settled.isDone()) {
                inflight.remove(f.key, f);
                f.settled.complete(null);
            }
        }
    }

    private void failQueued(RuntimeException e) {
        for (Queue<Task> q : List.of(demandQueue, prefetchQueue)) {
            Task t;
            while ((t = q.poll()) != null) {
                for (Fetch f : t.fetches()) {
                    if (f.claim()) {
                        fail(f, e);
                    }
                }
                if (t.budgetKiB() > 0) {
                    prefetchBudget.release(t.budgetKiB());
                }
            }
        }
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
        int maxRun = Math.max(1, MAX_RUN_BYTES / bs);
        long fetchedBlocks = 0;
        long fetchedBytes = 0;
        long cachedBlocks = 0;
        long cachedBytes = 0;
        long scheduledBytes = 0;
        boolean stopped = false;
        boolean wasCancelled = false;
        RuntimeException failure = null;
        ArrayDeque<List<Fetch>> window = new ArrayDeque<>();
        int b = 0;
        while (true) {
            while (!stopped && window.size() < WARM_RUNS_IN_FLIGHT && b < count) {
                if (cancelled.getAsBoolean() || closed) {
                    wasCancelled = true;
                    stopped = true;
                    break;
                }
                if (cachedOrInFlight(new BlockKey(blob.id(), bs, b))) {
                    cachedBlocks++;
                    cachedBytes += list.blockLength(b);
                    b++;
                    continue;
                }
                long room = storage.limitBytes() - cachedBytes - scheduledBytes;
                if (list.blockLength(b) > room) {
                    stopped = true;
                    break;
                }
                int end = b + 1;
                long runBytes = list.blockLength(b);
                while (end < count && end - b < maxRun && runBytes + list.blockLength(end) <= room
                        && !cachedOrInFlight(new BlockKey(blob.id(), bs, end))) {
                    runBytes += list.blockLength(end);
                    end++;
                }
                List<Fetch> run = register(blob, list, b, end, false);
                if (run.isEmpty()) {
                    continue;
                }
                scheduledBytes += BlockFetcher.runLength(list, b, run.size());
                enqueue(prefetchQueue, new Task(run, 0));
                window.add(run);
                b += run.size();
            }
            List<Fetch> run = window.poll();
            if (run == null) {
                break;
            }
            long deadline = fetcher.deadlineFromNow();
            for (Fetch f : run) {
                try {
                    awaitFetch(f, deadline);
                    // Return only once the block is on disk: warm's promise is "cached".
                    Deadlines.await(f.settled, deadline, () -> "writing " + f.key + " to the cache");
                    fetchedBlocks++;
                    fetchedBytes += f.list.blockLength(f.key.index());
                } catch (RuntimeException e) {
                    if (failure == null) {
                        failure = e;
                    }
                    stopped = true;
                }
            }
            listener.progress(cachedBytes + fetchedBytes, blob.size());
        }
        if (failure != null) {
            throw failure;
        }
        return new WarmResult(fetchedBlocks, fetchedBytes, cachedBlocks, cachedBytes,
                !stopped && b >= list.blockCount(), wasCancelled);
    }

    /** Size, limit, hit rate and counters. */
    public CacheStats stats() {
        long hit = metrics.hitBytes.sum();
        long miss = metrics.missBytes.sum();
        return new CacheStats(config.mode(), config.mode().usesDisk() ? config.dir().toString() : null,
                storage.sizeBytes(), storage.limitBytes(), storage.freeFloorBytes(), storage.blockCount(),
                hit + miss == 0 ? 0 : (double) hit / (hit + miss), metrics.snapshot());
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
        return storage.verify(lists, progress, cancelled);
    }

    /**
     * Evicts until at most {@code limitBytes} are cached; the configured limit is unchanged.
     *
     * @return bytes freed
     */
    public long gc(long limitBytes) {
        ensureOpen();
        return storage.gc(limitBytes);
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
     * Waits until no fetch is queued or in flight and every fetched block is written, for tests
     * and benchmarks that count what a read sequence left behind.
     *
     * @return whether it became idle within {@code timeout}
     */
    boolean awaitIdle(Duration timeout) throws InterruptedException {
        long until = System.nanoTime() + timeout.toNanos();
        while (!inflight.isEmpty() || !demandQueue.isEmpty() || !prefetchQueue.isEmpty() || !hybridQueue.isEmpty()) {
            if (System.nanoTime() > until) {
                return false;
            }
            Thread.sleep(2);
        }
        return true;
    }

    /**
     * Drops queued work, lets blocks already fetched finish being written (up to
     * {@link #CLOSE_GRACE}), fails readers still waiting, and releases the cache directory.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        failQueued(new StoreUnavailableException("The block cache was closed", null));
        long until = System.nanoTime() + CLOSE_GRACE.toNanos();
        for (Fetch f : List.copyOf(inflight.values())) {
            if (f.done.isDone()) {
                try {
                    f.settled.get(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                } catch (ExecutionException | TimeoutException e) {
                    // Not written in time: it is simply not cached.
                }
            } else {
                fail(f, new StoreUnavailableException("The block cache was closed", null));
            }
        }
        storage.close();
        if (owned != null) {
            owned.shutdownNow();
        }
    }

    private static int kib(long bytes) {
        return (int) Math.min(Integer.MAX_VALUE, (bytes + 1023) / 1024);
    }
}
