package io.warpdata.blobcache.cache;

import io.warpdata.store.StoreException;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;
import io.warpdata.manifest.WarpException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * Plans fetches ahead of a reader in the order it announced ({@link OrderPlan}): the generated
 * loader knows a shuffled epoch's order before its first read, which per-blob read-ahead can
 * never guess. A planner next to {@link ReadAhead}: it only plans runs ({@link #step}); the
 * {@link FetchScheduler} walks the plans ({@link FetchScheduler#followPlans}) and queues their runs
 * like read-ahead's (same queue, same budget, same workers, same single flight), so demand reads
 * go first and a block the plan fetches is a read-ahead block for the hit and waste counters. It
 * knows nothing of the scheduler: it is asked, and answers.
 *
 * <h2>What it fetches, and when</h2>
 * A plan's grains (1 MiB of a blob) are taken in order of need (the position of the first member
 * that reads them). For the next grain that is neither cached nor in flight, one run is queued:
 * its block, then forward and then backward its neighbours in the blob that are missing and
 * needed within the fetch horizon, up to the run size one connection delivers in a quarter of a
 * second ({@link ConnectionRate}: 4-32 MiB). In a shuffled epoch the members a reader needs next
 * are scattered over the shards, but the blocks around each one are needed soon enough, so a
 * shard is still fetched in few large GETs instead of one small GET per member.
 *
 * <h2>By file, when the cache cannot keep the plan's blocks</h2>
 * A block holds several files read at different points of a shuffled epoch: while the cache keeps
 * every block the plan reads, each is fetched once, but in a cache smaller than that a block is
 * often evicted between the reads of its files and fetched again (245 MB of images in a 160 MB
 * cache: 1.62x what was read; Belady's bound for any block policy there is 1.71x). So a plan whose
 * grains, with those of the other plans followed, are more than the cache keeps ({@code keepsBytes}:
 * its limit less what it holds for blocks read ahead), and three quarters or more of whose files
 * can be fetched on their own
 * ({@link OrderPlan.Builder#member}: archive members of up to {@link #MAX_FILE_BYTES}),
 * fetches its files instead, in order, each with one ranged GET of exactly its bytes checked
 * against its own hash and kept under it until read ({@link MemberReads#prefetch}), up to the
 * horizon's bytes past the reader, and no more of its own files past the reader than the cache
 * holds out of eviction for what was fetched ahead (a quarter of it, 256 MiB at most: past that
 * the files fetched first, the next to be read, would compete for their place before their
 * reader came) ({@link #fileStep}, {@link FollowedPlan#leadBytes}). Its other files are read as
 * without a plan. Not in hybrid mode, which fetches whole shards at first touch. A plan whose
 * files are a small part of their blocks ({@link #sparse}: random tensors out of a large file, a
 * subset of a dataset) fetches its files too, whatever the cache keeps: the blocks would fetch
 * mostly what nobody reads.
 *
 * <h2>Bounds</h2>
 * <ul>
 * <li><b>Ahead of the reader:</b> only grains needed by the next {@link #aheadBytes} of grains
 *     past the reader's position are fetched (neighbours included): {@code max(256 MiB,
 *     cache limit / 8)}, at most 4 GiB and half the cache; in remote mode half the memory cache.
 *     What a plan fetched and nobody read yet therefore never exceeds that, and a plan the reader
 *     does not follow costs no more than that once. While the disk keeps nothing (a write
 *     skipped in the last 10 s) what was fetched ahead waits in the 32 MiB memory tier only: a plan
 *     then fetches files if it can ({@link #toFilesWhileUnkept}), no further than
 *     {@link FollowedPlan#UNKEPT_AHEAD_BYTES} ahead, and nothing its reader has passed.</li>
 * <li><b>In flight:</b> runs are queued within the read-ahead budget ({@code maxPrefetchBytes},
 *     128 MiB by default, shared with read-ahead) and fetched by the read-ahead workers (3/4 of
 *     the GETs at most); their buffers are within {@code maxInFlightBytes}.</li>
 * <li><b>Memory of the plans:</b> {@link #MAX_PLAN_BYTES} = 64 MiB for all plans and plans being
 *     received together (a plan costs 8 bytes per member and 12 per MiB it reads: an ImageNet
 *     epoch, 1.28 M members over 140 GB, is about 12 MiB). A plan that would not fit even alone
 *     is refused with {@link PlanTooLargeException}; otherwise the plans least recently followed
 *     are pushed out to make room, as they are beyond {@link #MAX_PLANS}.</li>
 * </ul>
 *
 * <h2>Following the reader</h2>
 * Every read of the cache is offered to {@link #onRead}: a read that starts exactly where a
 * planned member starts moves that plan's position forward (to the furthest such member: the
 * DataLoader's workers read a few batches at once, out of order). Cheap: a map lookup and a binary
 * search per plan that reads the blob. A new plan of the same name (the next epoch) replaces the
 * old one, whose queued runs are dropped unless a reader already waits for them. A plan whose
 * every grain was fetched or found cached is done and let go.
 *
 * <p>The scheduler's walk runs on the fetch executor, one walk at a time, woken by a new plan,
 * by the reader moving on when the plan waited for it ({@link #onRead} says so to the read path,
 * which wakes it) and by returned read-ahead budget when it waited for that. A step may wait for
 * a block hash list (one small GET per blob), or, by file, for its next file's member index part
 * (normally loaded by the listing that named it), never for data.
 */
final class OrderPrefetcher {
    private static final Logger LOG = LoggerFactory.getLogger(OrderPrefetcher.class);
    /** Memory of all plans together (and plans still being received). */
    static final long MAX_PLAN_BYTES = 64L << 20;
    /** Plans held at once: one per rank of a few jobs on one machine. */
    static final int MAX_PLANS = 16;
    /** Smallest horizon: about a second of a fast link, and past the handful of batches DataLoader workers read at once. */
    static final long MIN_AHEAD_BYTES = 256L << 20;
    /** Largest horizon: more only makes blocks wait longer in the cache for their reader. */
    static final long MAX_AHEAD_BYTES = 4L << 30;
    /**
     * Largest file a plan fetches on its own: 1 MiB, the most a member is kept under its hash
     * ({@link MemberReads#MEMBER_BLOCK_SIZE}). A reader's random read fetches a member on its own
     * only up to 256 KiB ({@link MemberReads#MAX_FETCH_BYTES}: a larger one is most of a block,
     * whose other files may be read next); a planned file is read whole, and its block is what a
     * small cache does not keep (audit 53: files of 50-300 KB, 1.45-1.56x with 256 KiB).
     */
    static final int MAX_FILE_BYTES = MemberReads.MEMBER_BLOCK_SIZE;
    /** Finished plans whose status is still shown. */
    static final int FINISHED_SHOWN = 8;
    /** A block hash list that cannot be had is logged at most this often. */
    static final Duration FAILURE_LOG_EVERY = Duration.ofSeconds(10);

    private final HashLists lists;
    private final long listDeadlineNanos;
    private final long aheadBytes;
    private final long keepsBytes;
    private final boolean byFileAllowed;
    /**
     * A plan whose blocks are more than this many times its files' bytes fetches its files
     * ({@link #sparse}): past it, most of what the blocks bring is never read. A shuffled epoch
     * over whole shards is about 1x; 1,000 tensors of 1 KiB out of 20,000 are 21x.
     */
    static final long SPARSE_BLOCKS = 4;
    /** How far ahead a plan by file fetches: the horizon, at most what the cache holds for blocks read ahead. */
    private final long fileAheadBytes;
    private final long maxPlanBytes;
    private final Object lock = new Object();
    /** Guarded by lock. */
    private final Map<String, FollowedPlan> plans = new LinkedHashMap<>();
    /** Guarded by lock. */
    private final ArrayDeque<PlanStatus> finished = new ArrayDeque<>();
    /** Guarded by lock: the cancel flags of plans that are done, by name (their runs may still be queued). */
    private final Map<String, AtomicBoolean> doneFlags = new LinkedHashMap<>();
    /** Guarded by lock: bytes held by plans and by builders. */
    private long held;
    /** The plans, for the read path and the walk (copy on write). */
    private volatile FollowedPlan[] active = new FollowedPlan[0];
    private final AtomicLong lastFailureLog = new AtomicLong(System.nanoTime() - FAILURE_LOG_EVERY.toNanos());
    private volatile boolean closed;
    private final Runnable newPass;
    /** Whether the disk keeps what is fetched now ({@link ReadMetrics#diskKeeps}). */
    private final BooleanSupplier diskKeeps;
    /** Looks whether the disk can keep anything now, before any write, for a plan starting ({@link BlockStorage#keepsNothingNow}). */
    private final Runnable lookAtDisk;

    /**
     * @param listDeadline how long a step may wait for a block hash list
     * @param aheadBytes   how far past the reader a plan is fetched ({@link #aheadBytes(CacheConfig)})
     * @param keepsBytes   what the cache keeps of blocks: a plan reading more fetches its files ({@link #keepsBytes(BlockStorage)})
     * @param heldRoomBytes what the cache holds out of eviction for what was fetched ahead ({@link BlockStorage#heldRoomBytes})
     * @param byFileAllowed whether plans may fetch files on their own (not in hybrid mode, which fetches whole shards)
     * @param maxPlanBytes memory all plans may hold ({@link #MAX_PLAN_BYTES})
     * @param newPass    told when a plan by file starts with no other followed: a new pass over the
     *                   data begins ({@link BlockStorage#newPass})
     * @param diskKeeps  whether the disk keeps what is fetched now ({@link ReadMetrics#diskKeeps}):
     *                   while it does not, plans fetch files, no further than
     *                   {@link FollowedPlan#UNKEPT_AHEAD_BYTES} ahead
     * @param lookAtDisk looks whether the disk can keep anything now, and if not has {@code
     *                   diskKeeps} say so: a plan's first walk queues its whole horizon before any
     *                   fetch lands and a write is skipped
     */
    OrderPrefetcher(HashLists lists, Duration listDeadline, long aheadBytes, long keepsBytes, long heldRoomBytes,
                    boolean byFileAllowed, long maxPlanBytes, Runnable newPass, BooleanSupplier diskKeeps,
                    Runnable lookAtDisk) {
        this.newPass = newPass;
        this.diskKeeps = diskKeeps;
        this.lookAtDisk = lookAtDisk;
        this.byFileAllowed = byFileAllowed;
        this.lists = lists;
        this.listDeadlineNanos = listDeadline.toNanos();
        this.aheadBytes = aheadBytes;
        this.keepsBytes = keepsBytes;
        this.fileAheadBytes = Math.min(aheadBytes, heldRoomBytes);
        this.maxPlanBytes = maxPlanBytes;
    }

    /** What {@code storage} keeps of blocks from one read to the next: its limit less what it holds for blocks read ahead. */
    static long keepsBytes(BlockStorage storage) {
        long limit = storage.limitBytes();
        long room = storage.heldRoomBytes();
        return room >= limit ? limit : limit - room;
    }

    /** The horizon for a cache: see the class documentation. */
    static long aheadBytes(CacheConfig config) {
        if (!config.mode().usesDisk()) {
            return Math.max(OrderPlan.GRAIN_BYTES, config.memoryBytes() / 2);
        }
        long byLimit = Math.max(MIN_AHEAD_BYTES, config.maxBytes() / 8);
        return Math.max(OrderPlan.GRAIN_BYTES, Math.min(Math.min(byLimit, MAX_AHEAD_BYTES), config.maxBytes() / 2));
    }

    long aheadBytes() {
        return aheadBytes;
    }

    // ---------------------------------------------------------------- plans

    /** A builder whose memory counts against {@link #MAX_PLAN_BYTES} as it grows. */
    OrderPlan.Builder builder(String description) {
        return OrderPlan.builder(description, new OrderPlan.Reservation() {
            @Override
            public void reserve(long bytes) {
                OrderPrefetcher.this.reserve(bytes, description);
            }

            @Override
            public void release(long bytes) {
                OrderPrefetcher.this.release(bytes);
            }
        });
    }

    private void reserve(long bytes, String description) {
        List<FollowedPlan> pushedOut = new ArrayList<>();
        synchronized (lock) {
            while (held + bytes > maxPlanBytes) {
                FollowedPlan oldest = leastRecentlyActive(null);
                if (oldest == null) {
                    throw new PlanTooLargeException("The order plan " + description + " would need more than the "
                            + (maxPlanBytes >> 20) + " MiB warpd keeps for order plans (" + mib(held + bytes)
                            + " MiB with the parts received so far)");
                }
                remove(oldest, "pushed out");
                pushedOut.add(oldest);
            }
            held += bytes;
        }
        pushedOut.forEach(p -> LOG.info("order plan '{}' ({}) pushed out to make room for {}", p.name,
                p.plan.description(), description));
    }

    private void release(long bytes) {
        synchronized (lock) {
            held = Math.max(0, held - bytes);
        }
    }

    /**
     * Starts following {@code builder}'s plan as {@code name}, replacing a plan of that name (its
     * queued runs are dropped); pushes out the least recently followed plans beyond
     * {@link #MAX_PLANS}. The caller then has the scheduler follow it ({@link FetchScheduler#followPlans}).
     *
     * @return the new plan's status
     */
    PlanStatus start(String name, OrderPlan.Builder builder) {
        OrderPlan plan = builder.build();
        // The plans read the cache together: a DDP job's ranks each plan a share of the epoch,
        // and each share's blocks may fit where all of them do not (review 58, M2).
        long together = plan.plannedBytes();
        synchronized (lock) {
            for (FollowedPlan o : plans.values()) {
                if (!o.name.equals(name)) {
                    together += o.plan.plannedBytes();
                }
            }
        }
        boolean files = byFileAllowed && plan.memberRefs() > 0 && plan.memberRefs() >= plan.members() * 3L / 4;
        // The reader may ask: for blocks (a fast link, few cores: a GET per file costs more than
        // the blocks' waste) or for files (bytes cost more than requests).
        boolean sparse = files && (plan.fetch() == OrderPlan.Fetch.FILES
                || plan.fetch() == OrderPlan.Fetch.AUTO && sparse(plan));
        lookAtDisk.run();
        boolean unkept = !diskKeeps.getAsBoolean();
        boolean byFile = files && (together > keepsBytes || sparse || unkept);
        FollowedPlan p = new FollowedPlan(name, plan, byFile ? fileAheadBytes : aheadBytes, byFile, diskKeeps);
        FollowedPlan replaced;
        List<FollowedPlan> pushedOut = new ArrayList<>();
        boolean firstByFile = byFile;
        synchronized (lock) {
            FollowedPlan same = plans.get(name);
            for (FollowedPlan o : plans.values()) {
                if (o.byFile && !o.name.equals(name)) {
                    firstByFile = false; // a DDP job's other ranks: the same pass
                }
            }
            if (byFile && same != null && same.byFile) {
                firstByFile = true; // its own next epoch, whatever other plans are followed (the review)
            }
            held = Math.max(0, held - Math.max(0, builder.reservedBytes() - plan.heldBytes()));
            replaced = plans.get(name);
            if (replaced != null) {
                remove(replaced, "replaced");
            }
            AtomicBoolean done = doneFlags.remove(name);
            if (done != null) {
                done.set(true);
                relabel(name, "replaced");
            }
            while (plans.size() >= MAX_PLANS) {
                FollowedPlan oldest = leastRecentlyActive(null);
                remove(oldest, "pushed out");
                pushedOut.add(oldest);
            }
            plans.put(name, p);
            if (byFile && (together > keepsBytes || unkept)) {
                toFiles(name, unkept); // not for a sparse plan: the others' blocks still fit
            }
            active = plans.values().toArray(FollowedPlan[]::new);
        }
        pushedOut.forEach(o -> LOG.info("order plan '{}' ({}) pushed out: more than {} plans", o.name,
                o.plan.description(), MAX_PLANS));
        if (firstByFile) {
            newPass.run();
        }
        LOG.info("order plan '{}' ({}): {} members over {} blobs, {} MiB; fetching {} up to {} MiB ahead of the reader{}",
                name, plan.description(), plan.members(), plan.blobCount(), mib(plan.plannedBytes()),
                fetches(plan, byFile, together, unkept),
                mib(byFile ? fileAheadBytes : aheadBytes),
                replaced == null ? "" : " (replaces the previous one)");
        return p.status("active");
    }

    /** What a plan starting fetches and why, for its log line. */
    private String fetches(OrderPlan plan, boolean byFile, long together, boolean unkept) {
        if (!byFile) {
            return "its blocks";
        }
        if (unkept) {
            return "its files (the disk keeps nothing now: what is fetched ahead waits in memory)";
        }
        if (together > keepsBytes) {
            return "its files (the plans read " + mib(together) + " MiB, more than the cache's " + mib(keepsBytes) + " MiB)";
        }
        if (plan.fetch() == OrderPlan.Fetch.FILES) {
            return "its files, as its reader asked";
        }
        return "its files (they are " + mib(plan.memberRefBytes()) + " MiB of its " + mib(plan.plannedBytes())
                + " MiB of blocks)";
    }

    /**
     * Whether the plan's files are a small part of the blocks they lie in: the blocks would
     * fetch more than {@link #SPARSE_BLOCKS} times what the reader reads (1,000 random tensors of
     * 1 KiB among 20,000: 21 MiB of blocks for 1 MiB of tensors), so its files are fetched on
     * their own whatever the cache keeps, each GET kept in flight ahead of the reader.
     */
    static boolean sparse(OrderPlan plan) {
        return plan.memberRefBytes() > 0 && plan.plannedBytes() > SPARSE_BLOCKS * plan.memberRefBytes();
    }

    /**
     * While the disk keeps nothing (its free-space floor, a read-only or deleted cache directory:
     * {@link ReadMetrics#diskKeeps}): the plans that fetch blocks and could fetch files go on by
     * file from where their readers are. A block fetched ahead waits in the 32 MiB memory tier
     * only, and the other files of a shuffled epoch's block are read long after it was pushed
     * out: each fetched again. For the scheduler's walk, which asks before a plan's next run.
     *
     * @return whether a plan went on by file
     */
    boolean toFilesWhileUnkept() {
        if (diskKeeps.getAsBoolean() || !byFileAllowed) {
            return false;
        }
        synchronized (lock) {
            if (!toFiles(null, true)) {
                return false;
            }
            active = plans.values().toArray(FollowedPlan[]::new);
            return true;
        }
    }

    /**
     * Guarded by lock: the plans other than {@code name} that fetch blocks and could fetch files go
     * on by file from where their readers are, their queued runs dropped. A DDP job's ranks each
     * plan a share of the epoch: the first ranks' shares fit the cache alone, and fetched blocks
     * while the last ranks' fetched files. And every such plan while the disk keeps nothing
     * ({@code unkept}: {@link #toFilesWhileUnkept}).
     *
     * @return whether a plan went on by file
     */
    private boolean toFiles(String name, boolean unkept) {
        boolean any = false;
        for (Map.Entry<String, FollowedPlan> e : plans.entrySet()) {
            FollowedPlan o = e.getValue();
            if (o.byFile || o.name.equals(name) || o.plan.memberRefs() == 0
                    || o.plan.memberRefs() < o.plan.members() * 3L / 4) {
                continue;
            }
            FollowedPlan f = new FollowedPlan(o.name, o.plan, fileAheadBytes, true, diskKeeps);
            int r = o.reached.get();
            f.reached.set(r);
            f.next = r + 1;
            f.passedUpTo = r; // read through its blocks: no member of its own to let go of
            f.fetchedBlocks.add(o.fetchedBlocks.sum());
            o.cancelled.set(true);
            e.setValue(f);
            any = true;
            if (unkept) {
                LOG.info("order plan '{}' ({}): fetching its files from file {} on, the disk keeping nothing now (what"
                        + " is fetched ahead waits in memory)", o.name, o.plan.description(), r + 1);
            } else {
                LOG.info("order plan '{}' ({}): fetching its files from file {} on, with the other plans more than the"
                        + " cache's {} MiB", o.name, o.plan.description(), r + 1, mib(keepsBytes));
            }
        }
        return any;
    }

    /** Stops the plan called {@code name}: nothing more is fetched for it, its queued runs are dropped. */
    boolean stop(String name) {
        synchronized (lock) {
            AtomicBoolean done = doneFlags.remove(name);
            if (done != null) {
                done.set(true);
                relabel(name, "stopped");
            }
            FollowedPlan p = plans.get(name);
            if (p == null) {
                return done != null;
            }
            remove(p, "stopped");
            return true;
        }
    }

    /** The plans being followed, then the last few that finished or were replaced. */
    List<PlanStatus> status() {
        List<PlanStatus> out = new ArrayList<>();
        synchronized (lock) {
            for (FollowedPlan p : plans.values()) {
                out.add(p.status(p.waitingForReader ? "waiting for the reader" : "active"));
            }
            out.addAll(finished);
        }
        return out;
    }

    /** Memory held by plans and builders now. */
    long heldBytes() {
        synchronized (lock) {
            return held;
        }
    }

    /** Guarded by lock. */
    private FollowedPlan leastRecentlyActive(FollowedPlan except) {
        FollowedPlan oldest = null;
        for (FollowedPlan p : plans.values()) {
            if (p != except && (oldest == null || p.lastActiveNanos < oldest.lastActiveNanos)) {
                oldest = p;
            }
        }
        return oldest;
    }

    /** Guarded by lock: a done plan's status, once it is replaced or stopped (its queued runs are dropped). */
    private void relabel(String name, String state) {
        List<PlanStatus> copy = new ArrayList<>(finished);
        for (int i = 0; i < copy.size(); i++) {
            PlanStatus s = copy.get(i);
            if (s.name().equals(name) && s.state().equals("done")) {
                copy.set(i, new PlanStatus(s.name(), s.description(), s.members(), s.blobs(), s.plannedBytes(),
                        s.reached(), s.grainsScheduled(), s.grains(), s.fetchedBlocks(), s.heldBytes(),
                        "done, then " + state, s.byFile(), s.aheadBytes()));
                finished.clear();
                finished.addAll(copy);
                return;
            }
        }
    }

    /** Guarded by lock. */
    private void remove(FollowedPlan p, String state) {
        if (plans.get(p.name) != p) {
            return;
        }
        if (state.equals("done")) {
            doneFlags.put(p.name, p.cancelled);
            if (doneFlags.size() > MAX_PLANS * 4) {
                doneFlags.remove(doneFlags.keySet().iterator().next());
            }
        } else {
            p.cancelled.set(true);
        }
        plans.remove(p.name);
        active = plans.values().toArray(FollowedPlan[]::new);
        held = Math.max(0, held - p.plan.heldBytes());
        finished.addFirst(p.status(state));
        while (finished.size() > FINISHED_SHOWN) {
            finished.removeLast();
        }
    }

    // ---------------------------------------------------------------- the reader

    /**
     * A read of {@code blob} at {@code offset}: moves forward every plan with a member starting
     * exactly there. Called on every read; allocates nothing.
     *
     * @return whether a plan that waited for its reader may go on now: the walk is to be woken
     *         ({@link FetchScheduler#followPlans})
     */
    boolean onRead(BlobRef blob, long offset) {
        FollowedPlan[] a = active;
        if (a.length == 0) {
            return false;
        }
        boolean wake = false;
        for (FollowedPlan p : a) {
            int b = p.plan.indexOf(blob.id());
            if (b < 0) {
                continue;
            }
            int pos = p.plan.positionStartingAt(b, offset);
            if (pos < 0) {
                continue;
            }
            int r = p.reached.get();
            while (pos > r) {
                if (p.reached.compareAndSet(r, pos)) {
                    p.lastActiveNanos = System.nanoTime();
                    // Wake the walk only once the reader has made the room it waits for.
                    if (p.waitingForReader && p.horizon() >= p.resumeAt) {
                        wake = true;
                    }
                    break;
                }
                r = p.reached.get();
            }
        }
        return wake;
    }

    /** Whether a plan that fetches files has one starting at {@code offset} of {@code blob} ({@link ReadPlan.Holdings#plannedFile}). */
    boolean plannedFile(BlobRef blob, long offset) {
        for (FollowedPlan p : active) {
            if (p.byFile) {
                int b = p.plan.indexOf(blob.id());
                if (b >= 0 && p.plan.positionStartingAt(b, offset) >= 0) {
                    return true;
                }
            }
        }
        return false;
    }

    // ---------------------------------------------------------------- planning, for the scheduler's walk

    /**
     * The run one plan wants fetched next: block {@code block} of {@code blob} (its next grain's),
     * and around it, at most {@code maxBlocks} in all, the neighbours it {@link #wants} (needed
     * within the horizon). The scheduler fetches of it what is neither cached nor in flight
     * ({@link FetchScheduler#followPlans}), then {@link #advance}s the plan.
     */
    record PlannedRun(FollowedPlan plan, int blobIndex, BlobRef blob, BlockHashList list, int block, int maxBlocks,
                      int fromNeed, int limitNeed) {
        /** Whether the plan needs block {@code b} of the blob within its horizon (past {@code fromNeed}). */
        boolean wants(int b) {
            return plan.wanted(blobIndex, list, b, fromNeed, limitNeed);
        }
    }

    /** The plans being followed now, for the walk (the array is never changed; do not change it). */
    FollowedPlan[] active() {
        return active;
    }

    /**
     * Plans {@code p}'s next run: the next grain's block and the neighbours needed within the
     * horizon, up to {@code runBytes} ({@link ConnectionRate}). Only the scheduler's one walk calls it.
     *
     * @return the run, or null when the plan must wait (for its reader, or a hash list), or is done
     */
    PlannedRun step(FollowedPlan p, int runBytes) {
        if (closed || p.cancelled.get()) {
            return null;
        }
        OrderPlan plan = p.plan;
        int n = plan.grains();
        int next = p.next;
        // While the disk keeps nothing, not behind its reader: what it passed its reader fetched,
        // and fetched again (a neighbour of a run) it waits in memory only, pushed out unread.
        boolean unkept = !p.diskKeeps();
        int reached = p.reached.get();
        if (unkept) {
            next = Math.max(next, plan.grainsNeededBy(reached));
            p.next = next;
        }
        if (next >= n) {
            done(p);
            return null;
        }
        // Go on only once the reader has made room for a quarter of the horizon: runs then go out
        // in batches, whose neighbours coalesce, not one grain per member read.
        int limit = horizonUnlessWaiting(p, next, n, Math.max(1, p.aheadGrainsNow() / 4));
        if (limit < 0) {
            return null;
        }
        long g = plan.grain(next);
        int bi = (int) (g >>> 32);
        BlobRef blob = plan.blob(bi);
        BlockHashList list;
        try {
            list = lists.get(blob, System.nanoTime() + listDeadlineNanos, true);
        } catch (WarpException e) {
            logFailure(p, blob, e);
            // Try again when the reader moves on.
            p.resumeAt = next + 1;
            p.waitingForReader = true;
            return null;
        }
        int bs = list.blockSize();
        int block = (int) ((g & 0xFFFFFFFFL) * OrderPlan.GRAIN_BYTES / bs);
        // While the disk keeps nothing, a run is no longer than the horizon then (the memory tier holds it).
        long run = unkept ? Math.min(runBytes, FollowedPlan.UNKEPT_AHEAD_BYTES) : runBytes;
        return new PlannedRun(p, bi, blob, list, block, (int) Math.max(1, run / bs), unkept ? reached + 1 : 0,
                plan.needAt(limit - 1));
    }

    /**
     * A plan that fetches its files ({@link FollowedPlan#byFile}): the next file to fetch, within
     * the horizon, skipping those that cannot be fetched on their own (no member, over
     * {@link #MAX_FILE_BYTES}, or a member index that cannot be read now); the plan
     * goes on past it. Only the scheduler's one walk calls it.
     *
     * @return the member, or null when the plan must wait for its reader, or is done
     */
    BlobMember fileStep(FollowedPlan p) {
        while (!closed && !p.cancelled.get()) {
            int n = p.plan.members();
            // Not behind its reader: the files it read are read (review 58, H1).
            int next = Math.max(p.next, p.reached.get() + 1);
            if (next >= n) {
                done(p);
                return null;
            }
            // Go on once the reader has read an eighth of the horizon: not one wake-up per file read.
            if (horizonUnlessWaiting(p, next, n, Math.max(1, p.aheadFilesNow() / 8)) < 0) {
                return null;
            }
            p.next = next + 1;
            BlobMember m;
            try {
                m = p.plan.member(next);
            } catch (RuntimeException e) {
                logFailure(p, e);
                continue;
            }
            if (m != null && m.length() > 0 && m.length() <= MAX_FILE_BYTES) {
                return m;
            }
        }
        return null;
    }

    /** Lets a plan whose every grain or file was fetched, found or skipped go. */
    private void done(FollowedPlan p) {
        synchronized (lock) {
            remove(p, "done");
        }
    }

    /**
     * The plan's horizon, or -1 if, at {@code next} of its {@code n} grains or files, it waits for
     * its reader: at its horizon it goes on only once the horizon has moved {@code step} further.
     * The flag is set first, then the horizon looked at again: a read that moves the plan on
     * meanwhile sees it.
     */
    private static int horizonUnlessWaiting(FollowedPlan p, int next, int n, int step) {
        int limit = p.horizon();
        if (next >= limit || (p.waitingForReader && limit < p.resumeAt)) {
            if (!p.waitingForReader) {
                p.resumeAt = Math.min(n, next + step);
                p.waitingForReader = true;
                limit = p.horizon();
            }
            if (limit < p.resumeAt) {
                return -1;
            }
        }
        p.waitingForReader = false;
        return limit;
    }

    /**
     * A plan by file whose next file the cache may not hold for it now ({@code full}): it waits
     * for its reader's next file, whose read lets one go. Set first, then {@code full} is asked
     * again, so that a read meanwhile sees the flag.
     *
     * @return whether it waits (false: room was made meanwhile, go on)
     */
    boolean waitForRoom(FollowedPlan p, BooleanSupplier full) {
        // The reader's next file (at the end of the plan, where the horizon stops moving, any read).
        p.resumeAt = (int) Math.min(p.plan.members(), p.horizon() + 1L);
        p.waitingForReader = true;
        if (full.getAsBoolean()) {
            return true;
        }
        p.waitingForReader = false;
        return false;
    }

    private void logFailure(FollowedPlan p, RuntimeException e) {
        long now = System.nanoTime();
        long last = lastFailureLog.get();
        if (now - last >= FAILURE_LOG_EVERY.toNanos() && lastFailureLog.compareAndSet(last, now)) {
            LOG.warn("order plan '{}': cannot tell a file's member ({}); it is read as without a plan", p.name,
                    e.toString());
        }
    }

    /** The walk queued {@code run} ({@code queued} blocks of it: 0 for an empty one): the plan goes on to its next grain. */
    void advance(PlannedRun run, int queued) {
        run.plan().fetchedBlocks.add(queued);
        run.plan().next = run.plan().next + 1;
    }

    private void logFailure(FollowedPlan p, BlobRef blob, WarpException e) {
        long now = System.nanoTime();
        long last = lastFailureLog.get();
        if (now - last >= FAILURE_LOG_EVERY.toNanos() && lastFailureLog.compareAndSet(last, now)) {
            LOG.warn("order plan '{}': cannot fetch ahead in blob {} ({}); reads fetch their own blocks meanwhile",
                    p.name, blob.id(), e instanceof StoreException ? e.getMessage() : e.toString());
        }
    }

    void close() {
        closed = true;
        synchronized (lock) {
            for (FollowedPlan p : List.copyOf(plans.values())) {
                remove(p, "stopped");
            }
            doneFlags.values().forEach(f -> f.set(true));
            doneFlags.clear();
        }
    }

    private static long mib(long bytes) {
        return (bytes + (1 << 20) - 1) >> 20;
    }
}
