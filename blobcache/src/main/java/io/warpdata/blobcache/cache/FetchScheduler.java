package io.warpdata.blobcache.cache;

import io.warpdata.store.StoreUnavailableException;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * Decides what is fetched from the store, when, and by whom: every block being fetched has one
 * {@link Fetch} in the in-flight map, however many readers want it (single flight); demand
 * fetches (a reader waits) are queued ahead of read-ahead, warm and hybrid fetches, which may
 * occupy only 3/4 of the workers; consecutive missing blocks of one blob go out as one ranged
 * GET of up to {@link #MAX_RUN_BYTES}, each block verified against its SHA-256 and handed to its
 * waiters as soon as its bytes have streamed in, then all written to the cache. Bounded: bytes
 * in flight ({@code maxInFlightBytes}), queued read-ahead ({@code maxPrefetchBytes}) and whole
 * shards being fetched whole ({@link WholeBlobFetches#HYBRID_RUNS_IN_FLIGHT}).
 *
 * <p>New fetch strategies (member-level fetch, order hints) are a choice of which runs to
 * register and at what priority: planners only plan, and the scheduler asks them, as
 * {@link #followPlans} walks the {@link OrderPrefetcher}'s plans. What is missing (neither cached
 * nor in flight) and the single flight are {@link InFlightBlocks}'; how a run is then fetched,
 * verified, handed over and stored is the {@link RunFetcher}'s.
 */
final class FetchScheduler {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(FetchScheduler.class);
    /**
     * Longest coalesced GET: 32 MiB. Every GET costs the SDK's request pipeline (signing,
     * interceptors, metrics) and, for the first thousands of requests of a daemon's life, the
     * JIT compiling it: a cold 1 GiB read made 128 GETs of 8 MiB and measured 335-375 MB/s at
     * 3.7-4.4 s of warpd CPU per GiB; with 32 GETs of 32 MiB, 380-467 MB/s at 3.1-3.7 s/GiB.
     * A reader that needs a block inside a run in flight waits only until that block has
     * streamed in and been verified, not for the whole run.
     */
    static final int MAX_RUN_BYTES = 32 << 20;
    /** How long close() lets fetched blocks finish being written: a restart then refetches nothing. */
    static final Duration CLOSE_GRACE = Duration.ofSeconds(2);
    /**
     * Idle fetch buffers kept for reuse ({@link RunBuffers}): 64 MiB (capped at
     * maxInFlightBytes). A sequential reader at the full window keeps up to the read-ahead
     * budget of runs fetched or waiting for their disk writes; with 128 MiB pooled none of a
     * loopback read's 32 MiB runs allocated (with 64 MiB a quarter did, measured with a 1 GiB
     * heap). Pooled and in-flight buffers are both heap: with the default 128 MiB in flight and
     * warpd's 384 MiB heap, 64 MiB is what leaves room for the member indexes and the tree.
     */
    static final long POOLED_BUFFER_BYTES = 64L << 20;

    /**
     * Consecutive fetches of one blob; {@code budgetKiB} of read-ahead budget is returned after.
     * When {@code dropped} says so by the time a worker takes the task (an order plan that was
     * replaced), its fetches that no reader has asked for yet are dropped, like read-ahead of a
     * suspect blob.
     */
    private record Task(List<Fetch> fetches, int budgetKiB, BooleanSupplier dropped) {
        Task(List<Fetch> fetches, int budgetKiB) {
            this(fetches, budgetKiB, null);
        }
    }

    private final CacheConfig config;
    private final ReadMetrics metrics;
    private final BlockStorage storage;
    private final BlockFetcher fetcher;
    private final Executor executor;
    private final InFlightBlocks inflight;
    private final Queue<Task> demandQueue = new ConcurrentLinkedQueue<>();
    private final Queue<Task> prefetchQueue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger workers = new AtomicInteger();
    private final AtomicInteger runningPrefetch = new AtomicInteger();
    private final int maxPrefetchWorkers;
    private final RunFetcher runs;
    private final int prefetchPermits;
    private final Semaphore prefetchBudget;
    private final WholeBlobFetches wholeBlobs;
    private final ConnectionRate rate = new ConnectionRate(MAX_RUN_BYTES);
    private final Suspects suspects;
    /** The order plans the walk follows ({@link #followPlans}); null when there are none (local mode, read-ahead off). */
    private final OrderPrefetcher orders;
    /** Walks due: one walk runs at a time, again if woken meanwhile. */
    private final AtomicInteger walks = new AtomicInteger();
    /** Fetches files on their own for plans ({@link OrderPrefetcher#fileStep}). */
    private final MemberReads members;
    /**
     * Files being fetched for plans, and their bytes: at most {@link #maxPrefetchWorkers} files (as
     * plans' and read-ahead's runs) and {@link #PLAN_FILE_BYTES} (each is a buffer of its size until cached).
     */
    private final AtomicInteger planFiles = new AtomicInteger();
    private final AtomicLong planFileBytes = new AtomicLong();
    private volatile boolean plansWaitForFiles;
    /** Bytes of the files plans fetch at once: 8 MiB (a file may pass it by its own size, 1 MiB at most). */
    static final long PLAN_FILE_BYTES = 8L << 20;
    /**
     * How far behind its reader's position (the furthest file read) a plan's files count as
     * passed ({@link #passFiles}): 4,096 files, what a DataLoader's workers may hold at once (8
     * workers, 2 batches of 256 ahead each), or an eighth of a smaller plan, 256 at least. A
     * file read later than that is read from the spare members passed, or fetched again if they
     * were let go.
     */
    static final int PASS_LAG = 4096;
    /** The least lag, for plans of under 2,048 files. */
    static final int PASS_LAG_MIN = 256;
    /** Files a walk tells passed at most each time round (the rest the next time): resolving each costs about what fetching it does. */
    static final int PASS_BATCH = 65_536;
    /** A plan's run found no read-ahead budget: returned budget wakes the walk. */
    private volatile boolean plansWaitForBudget;
    private volatile boolean closed;

    /**
     * @param suspects blobs whose read-ahead is held back after a verification failure (queued read-ahead of them is dropped)
     * @param orders   the order plans to follow, or null
     */
    FetchScheduler(CacheConfig config, ReadMetrics metrics, BlockStorage storage, BlockFetcher fetcher, Executor executor,
                   Suspects suspects, OrderPrefetcher orders, MemberReads members) {
        this.suspects = suspects;
        this.orders = orders;
        this.members = members;
        this.config = config;
        this.metrics = metrics;
        this.storage = storage;
        this.fetcher = fetcher;
        this.executor = executor;
        this.inflight = new InFlightBlocks(storage);
        this.maxPrefetchWorkers = Math.max(1, config.maxConcurrentFetches() * 3 / 4);
        this.runs = new RunFetcher(fetcher, storage, config.maxInFlightBytes(),
                Math.min(POOLED_BUFFER_BYTES, config.maxInFlightBytes()), rate, suspects, () -> closed,
                inflight::retire);
        this.prefetchPermits = kib(config.maxPrefetchBytes());
        this.prefetchBudget = new Semaphore(prefetchPermits);
        this.wholeBlobs = new WholeBlobFetches(this, metrics, rate, maxPrefetchWorkers);
    }

    // ---------------------------------------------------------------- runs of missing blocks

    /** The cache's size limit (what a warm may fill). */
    long limitBytes() {
        return storage.limitBytes();
    }

    /** A read deadline from now (System.nanoTime based). */
    long deadlineFromNow() {
        return fetcher.deadlineFromNow();
    }

    /** The blocks being fetched (single flight), and which are missing. */
    InFlightBlocks inFlight() {
        return inflight;
    }

    /** Most blocks one GET fetches. */
    static int maxRunBlocks(int blockSize) {
        return Math.max(1, MAX_RUN_BYTES / blockSize);
    }

    // ---------------------------------------------------------------- demand

    /** The fetch that will deliver {@code key}, queued at high priority if not yet running. */
    Fetch demand(BlobRef blob, BlockHashList list, BlockKey key) {
        Fetch f = inflight.get(key);
        if (f != null && f.done.isCompletedExceptionally()) {
            // A failed fetch on its way out of the map: this read gets its own attempt.
            inflight.retire(f);
            f = null;
        }
        if (f == null) {
            Fetch mine = new Fetch(key, blob, list, false, Fetch.QUEUED_DEMANDED);
            f = inflight.putIfAbsent(mine);
            if (f == null) {
                if (storage.contains(key)) {
                    // A fetch finished between our cache lookup and now.
                    inflight.retire(mine);
                    mine.retry();
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

    /**
     * Most bytes of one GET of blocks a read needs at once ({@link #demandRuns}): 1 MiB, what one
     * GET of a default block brings, so a run waits no longer than such a GET, and a larger read
     * gets several runs side by side rather than one long GET it must wait through.
     */
    static final int DEMAND_RUN_BYTES = BlockHashList.DEFAULT_BLOCK_SIZE;

    /**
     * Queues the blocks {@code first + i} for each {@code i} set in {@code missing}, which one
     * read needs and found in no tier, at high priority, consecutive ones as one GET of up to
     * {@link #DEMAND_RUN_BYTES}: a read across many smaller blocks (a tensor hash blob's 4 KiB
     * blocks, where listing a file of 60,000 tensors read 470 of them) made a GET of each (audit
     * 50: 481 GETs and 5.8 s against 9 GETs and 1.2 s for the same folder without the hashes).
     * Each fetch registered here is added to {@code out} and its bit cleared; the blocks left set
     * (in flight already, or cached meanwhile) are the caller's to {@link #demand}.
     */
    void demandRuns(BlobRef blob, BlockHashList list, int first, java.util.BitSet missing, List<Fetch> out) {
        int maxRun = Math.max(1, DEMAND_RUN_BYTES / list.blockSize());
        int i = missing.nextSetBit(0);
        while (i >= 0) {
            int runEnd = Math.min(missing.nextClearBit(i), i + maxRun);
            List<Fetch> run = inflight.register(blob, list, first + i, first + runEnd, false);
            if (run.isEmpty()) {
                i = missing.nextSetBit(i + 1);
                continue;
            }
            for (Fetch f : run) {
                f.promote();
                missing.clear(f.key.index() - first);
            }
            out.addAll(run);
            enqueue(demandQueue, new Task(run, 0));
            i = missing.nextSetBit(i + run.size());
        }
    }

    /**
     * Waits for a fetch until {@code deadline}; a fetch that hangs is dropped from the map so the
     * next read starts a fresh one.
     */
    Fetch.BlockBytes await(Fetch f, long deadline) {
        try {
            return Deadlines.await(f.done, deadline, () -> "reading " + f.key + " from " + fetcher.store().describe()
                    + " within " + config.retry().readDeadline().toMillis() + " ms");
        } catch (StoreUnavailableException e) {
            if (!f.done.isDone()) {
                inflight.retire(f);
            }
            throw e;
        }
    }

    // ---------------------------------------------------------------- read-ahead, warm, hybrid

    /** Blocks of one read-ahead GET at this block size (sized to the connection). */
    int runBlocks(int blockSize) {
        return Math.max(1, rate.runBytes() / blockSize);
    }

    /**
     * Queues runs of the missing blocks in [from, to) at read-ahead priority, within the budget.
     *
     * @return the first block not scheduled because the read-ahead budget is used up, or {@code to}
     */
    int schedulePrefetch(BlobRef blob, BlockHashList list, int from, int to) {
        if (closed || prefetchPermits == 0) {
            return to; // read-ahead is off: nothing to schedule, now or later
        }
        int bs = list.blockSize();
        // Runs sized to the connection (ConnectionRate); a run never needs more budget than there is in all.
        int maxRun = (int) Math.max(1, Math.min(rate.runBytes() / bs, (long) prefetchPermits * 1024 / bs));
        int b = inflight.nextMissing(blob, bs, from, to);
        while (b < to) {
            int runEnd = inflight.missingRunEnd(blob, list, b, to, maxRun, Long.MAX_VALUE);
            int kib = kib(BlockFetcher.runLength(list, b, runEnd - b));
            if (!prefetchBudget.tryAcquire(kib)) {
                return b;
            }
            List<Fetch> run = inflight.register(blob, list, b, runEnd, true);
            int used = run.isEmpty() ? 0 : kib(BlockFetcher.runLength(list, b, run.size()));
            if (kib > used) {
                prefetchBudget.release(kib - used);
            }
            if (run.isEmpty()) {
                b = inflight.nextMissing(blob, bs, b + 1, to);
                continue;
            }
            metrics.prefetchedBlocks.add(run.size());
            enqueue(prefetchQueue, new Task(run, used));
            b = inflight.nextMissing(blob, bs, b + run.size(), to);
        }
        return to;
    }

    // ---------------------------------------------------------------- order plans

    /**
     * Makes sure a walk over the order plans runs (now on the fetch executor, or again after the
     * one running): for each plan in turn it asks for the next run ({@link OrderPrefetcher#step})
     * and queues what of it is missing, until every plan waits for its reader, the budget or a
     * hash list. Woken by a new plan and by a reader that moved a waiting plan on (the read path
     * calls this), and by returned read-ahead budget when a run waited for it.
     */
    void followPlans() {
        if (orders == null || closed || walks.getAndIncrement() != 0) {
            return;
        }
        try {
            executor.execute(this::walkPlans);
        } catch (RejectedExecutionException e) {
            walks.set(0);
        }
    }

    /** One run per plan in turn, until each waits; again while woken meanwhile. */
    private void walkPlans() {
        for (int due = walks.get(); due != 0; due = walks.addAndGet(-due)) {
            try {
                boolean progress = true;
                while (progress && !closed) {
                    progress = false;
                    for (FollowedPlan p : orders.active()) {
                        progress |= !p.cancelled.get() && followPlan(p);
                    }
                }
            } catch (RuntimeException e) {
                LOG.warn("order prefetch failed: {}", e.toString());
            }
        }
    }

    /**
     * Queues the blocks of the plan's next run that are neither cached nor in flight: its grain's
     * block and the neighbours it wants around it ({@link InFlightBlocks#missingAround}).
     *
     * @return false when the plan has to wait (reader, hash list, budget)
     */
    private boolean followPlan(FollowedPlan p) {
        if (p.byFile) {
            return followFiles(p);
        }
        if (!p.diskKeeps() && orders.toFilesWhileUnkept()) {
            return true; // it goes on by file: the walk takes the new plan next
        }
        OrderPrefetcher.PlannedRun r = orders.step(p, rate.runBytes());
        if (r == null) {
            return false;
        }
        BlobRef blob = r.blob();
        BlockKey key = new BlockKey(blob.id(), r.list().blockSize(), r.block());
        if (inflight.cachedOrInFlight(key)) {
            // Cached: have its file read into the page cache ahead of the reader (PageCacheHints).
            storage.willNeed(key);
            orders.advance(r, 0);
            return true;
        }
        long range = inflight.missingAround(blob, r.list(), r.block(), r.maxBlocks(), r::wants);
        int start = (int) (range >>> 32);
        int end = (int) range;
        List<Fetch> run = planRun(blob, r.list(), start, end, p.cancelled::get);
        if (run == null) {
            // Set first, then try again: budget returned meanwhile sees the flag.
            plansWaitForBudget = true;
            run = planRun(blob, r.list(), start, end, p.cancelled::get);
            if (run == null) {
                return false;
            }
            plansWaitForBudget = false;
        }
        orders.advance(r, run.size());
        return true;
    }

    /**
     * Starts the fetch of the plan's next file that is neither cached nor in flight
     * ({@link MemberReads#prefetch}), if fewer than {@link #maxPrefetchWorkers} of the plans' files
     * are being fetched; each that ends wakes the walk if it waited for one.
     *
     * @return false when the plan has to wait (reader, fetches in flight)
     */
    private boolean followFiles(FollowedPlan p) {
        passFiles(p);
        if (p.next >= p.plan.members()) {
            orders.fileStep(p); // done: let go
            return false;
        }
        if (planFilesFull()) {
            // Set first, then look again: a fetch that ends meanwhile sees the flag.
            plansWaitForFiles = true;
            if (planFilesFull()) {
                return false;
            }
            plansWaitForFiles = false;
        }
        // The plan's own files past its reader are the bound (files vary in size; the horizon
        // counts them at their mean): past what the cache holds for them, the first fetched would
        // compete for their place unread.
        // While the disk keeps nothing, the memory tier bounds it (FollowedPlan.UNKEPT_AHEAD_BYTES).
        if (p.leadBytes() + p.meanWeight > p.leadLimitNow()
                && orders.waitForRoom(p, () -> p.leadBytes() + p.meanWeight > p.leadLimitNow())) {
            return false;
        }
        BlobMember m = orders.fileStep(p);
        if (m == null) {
            return false;
        }
        int position = p.next - 1;
        long length = m.length();
        planFiles.incrementAndGet();
        planFileBytes.addAndGet(length);
        if (members.prefetch(m, fetcher.deadlineFromNow(), () -> planFileDone(length))) {
            p.fetching(position, FollowedPlan.weight(length));
            metrics.prefetchedBlocks.increment();
            metrics.plannedFiles.increment();
            p.fetchedBlocks.increment();
        } else {
            planFiles.decrementAndGet();
            planFileBytes.addAndGet(-length);
        }
        return true;
    }

    /**
     * Tells the cache which of a plan's files its reader has passed, {@link #PASS_LAG} positions
     * behind it (DataLoader workers read many files at once, and the reader's position is the
     * furthest read): each is let go before any file the plan has not reached yet
     * ({@link BlockStorage#passed}). Resolving a file's member is what {@link OrderPrefetcher#fileStep}
     * does for each file too.
     */
    private void passFiles(FollowedPlan p) {
        int lag = Math.max(PASS_LAG_MIN, Math.min(PASS_LAG, p.plan.members() / 8));
        int upTo = Math.min(p.reached.get() - lag, p.passedUpTo + PASS_BATCH);
        for (int pos = p.passedUpTo + 1; pos <= upTo; pos++) {
            BlobMember m;
            try {
                m = p.plan.member(pos);
            } catch (RuntimeException e) {
                continue; // its member cannot be told now: left as it is
            }
            if (m != null && m.length() > 0 && m.length() <= OrderPrefetcher.MAX_FILE_BYTES) {
                storage.passed(MemberReads.key(m.hash()));
            }
        }
        if (upTo > p.passedUpTo) {
            p.passedUpTo = upTo;
        }
    }

    private boolean planFilesFull() {
        return planFiles.get() >= maxPrefetchWorkers || planFileBytes.get() >= PLAN_FILE_BYTES;
    }

    private void planFileDone(long length) {
        planFiles.decrementAndGet();
        planFileBytes.addAndGet(-length);
        if (plansWaitForFiles) {
            plansWaitForFiles = false;
            followPlans();
        }
    }

    /**
     * An order plan's run: registers blocks [from, to) (up to the first one cached or in flight)
     * and queues them at read-ahead priority within the read-ahead budget, like
     * {@link #schedulePrefetch}.
     *
     * @param dropped polled when a worker takes the run: if true, what no reader asked for yet is dropped
     * @return the fetches registered (empty if the first block is cached or in flight), or null
     *         if the read-ahead budget has no room for the run now (returned budget wakes the walk)
     */
    private List<Fetch> planRun(BlobRef blob, BlockHashList list, int from, int to, BooleanSupplier dropped) {
        if (closed) {
            return List.of();
        }
        int kib = kib(BlockFetcher.runLength(list, from, to - from));
        if (!prefetchBudget.tryAcquire(Math.min(kib, prefetchPermits))) {
            return null;
        }
        kib = Math.min(kib, prefetchPermits);
        List<Fetch> run = inflight.register(blob, list, from, to, true);
        int used = run.isEmpty() ? 0 : Math.min(kib, kib(BlockFetcher.runLength(list, from, run.size())));
        if (kib > used) {
            prefetchBudget.release(kib - used);
        }
        if (!run.isEmpty()) {
            metrics.prefetchedBlocks.add(run.size());
            metrics.plannedBlocks.add(run.size());
            enqueue(prefetchQueue, new Task(run, used, dropped));
        }
        return run;
    }

    /** Queues a run registered by {@link InFlightBlocks#register} at read-ahead priority, outside the read-ahead budget (warm). */
    void enqueueBackground(List<Fetch> run) {
        enqueue(prefetchQueue, new Task(run, 0));
    }

    /** Fetches all of {@code blob} in the background ({@link WholeBlobFetches}: hybrid mode's first touch, auto mode's dense blobs). */
    void fetchWhole(BlobRef blob, BlockHashList list) {
        wholeBlobs.fetch(blob, list);
    }

    // ---------------------------------------------------------------- workers

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
            // Read-ahead queued before a block of its blob failed verification, or for an order
            // plan replaced since: drop what no reader has asked for yet (a reader that comes
            // later fetches its block on demand).
            boolean dropReadAhead = head.prefetch && (suspects.suspect(head.blob.id())
                    || (t.dropped() != null && t.dropped().getAsBoolean()));
            List<Fetch> group = new ArrayList<>(t.fetches().size());
            for (Fetch f : t.fetches()) {
                if (dropReadAhead && f.state.compareAndSet(Fetch.QUEUED, Fetch.RUNNING)) {
                    inflight.retire(f);
                    f.retry();
                    if (!group.isEmpty()) {
                        runs.fetch(group);
                        group = new ArrayList<>();
                    }
                } else if (f.claim()) {
                    group.add(f);
                } else if (!group.isEmpty()) {
                    runs.fetch(group);
                    group = new ArrayList<>();
                }
            }
            if (!group.isEmpty()) {
                runs.fetch(group);
            }
        } finally {
            if (t.budgetKiB() > 0) {
                prefetchBudget.release(t.budgetKiB());
                if (plansWaitForBudget) {
                    plansWaitForBudget = false;
                    followPlans();
                }
            }
        }
    }

    private void failQueued(RuntimeException e) {
        for (Queue<Task> q : List.of(demandQueue, prefetchQueue)) {
            Task t;
            while ((t = q.poll()) != null) {
                for (Fetch f : t.fetches()) {
                    if (f.claim()) {
                        runs.fail(f, e);
                    }
                }
                if (t.budgetKiB() > 0) {
                    prefetchBudget.release(t.budgetKiB());
                }
            }
        }
    }

    // ---------------------------------------------------------------- lifecycle

    /** Whether nothing is queued or in flight, and no walk over the order plans runs or is due. */
    boolean idle() {
        return inflight.isEmpty() && demandQueue.isEmpty() && prefetchQueue.isEmpty() && wholeBlobs.idle()
                && walks.get() == 0;
    }

    /**
     * Drops queued work, lets blocks already fetched finish being written (up to
     * {@link #CLOSE_GRACE}) and fails readers still waiting.
     */
    void close() {
        closed = true;
        failQueued(new StoreUnavailableException("The block cache was closed", null));
        long until = System.nanoTime() + CLOSE_GRACE.toNanos();
        for (Fetch f : inflight.snapshot()) {
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
                runs.fail(f, new StoreUnavailableException("The block cache was closed", null));
            }
        }
    }

    boolean closed() {
        return closed;
    }

    static int kib(long bytes) {
        return (int) Math.min(Integer.MAX_VALUE, (bytes + 1023) / 1024);
    }
}
