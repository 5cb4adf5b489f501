package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlockHashList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;

/**
 * One order plan being followed by the {@link OrderPrefetcher}, and what it plans: how far
 * ahead of its reader it may fetch ({@link #horizon}) and which blocks around a grain it needs
 * within that ({@link #wanted}). It fetches nothing itself. The walk's fields are touched by the
 * one running walk only.
 */
final class FollowedPlan {
    final String name;
    final OrderPlan plan;
    final int aheadGrains;
    final AtomicInteger reached = new AtomicInteger(-1);
    final LongAdder fetchedBlocks = new LongAdder();
    /**
     * Replaced, stopped or pushed out: walk no more, drop queued runs. Its own small object,
     * kept by name once the plan is done, so that the next epoch's plan still drops the
     * runs this one queued without keeping the plan's arrays.
     */
    final AtomicBoolean cancelled = new AtomicBoolean();
    volatile boolean waitingForReader;
    /** While waiting for the reader: how far the horizon must have moved before the walk goes on. */
    volatile int resumeAt;
    volatile long lastActiveNanos = System.nanoTime();
    /**
     * By file: the last position whose member the cache was told its reader passed
     * ({@link BlockStorage#passed}); only the walk touches it.
     */
    int passedUpTo = -1;
    /** The next grain in order of need (by block), or the next position (by file). */
    volatile int next;
    /**
     * Whether the plan fetches its files, each on its own, rather than its blocks: a plan over
     * more than the cache keeps ({@link OrderPrefetcher#start}).
     */
    final boolean byFile;
    /**
     * By file: the files fetched (or being fetched) past the reader's position, as position and
     * weight in the cache, in the order fetched (= position order); only the walk touches it.
     */
    private long[] leadPositions = new long[64];
    private int leadHead;
    private int leadSize;
    private long leadBytes;
    /** By file: how many positions past its reader's the plan fetches (its bytes ahead at the files' mean weight in the cache). */
    final int aheadFiles;
    /** How far past its reader the plan fetches (by file: bytes of files at their weight in the cache). */
    final long aheadBytes;
    /** By file: a file's mean weight in the cache. */
    final long meanWeight;
    /**
     * By file: the most its files past the reader may weigh, a few files under {@link #aheadBytes}:
     * DataLoader workers read several files at once, each held until its read ends.
     */
    final long leadLimit;
    /** Files of margin in {@link #leadLimit}. */
    static final int LEAD_MARGIN_FILES = 4;
    /**
     * How far past its reader a plan fetches while the disk keeps nothing ({@link #diskKeeps}):
     * 8 MiB, a quarter of the 32 MiB memory tier that is then all that holds what was fetched
     * ahead, as read-ahead's ({@link ReadExecutor#UNKEPT_READ_AHEAD_BLOCKS}). Further ahead, what
     * was fetched first was pushed out before its reader came, and fetched again.
     */
    static final long UNKEPT_AHEAD_BYTES = (long) ReadExecutor.UNKEPT_READ_AHEAD_BLOCKS * OrderPlan.GRAIN_BYTES;
    /** Whether the disk keeps what is fetched now ({@link ReadMetrics#diskKeeps}). */
    private final BooleanSupplier diskKeeps;
    /** By file: {@link #aheadFiles} while the disk keeps nothing. */
    private final int unkeptFiles;
    /** {@link #aheadGrains} while the disk keeps nothing. */
    private final int unkeptGrains;
    /** By file: {@link #leadLimit} while the disk keeps nothing. */
    private final long unkeptLeadLimit;

    /**
     * @param aheadBytes how far past its reader the plan fetches
     * @param diskKeeps  whether the disk keeps what is fetched now: while it does not, the plan
     *                   fetches no further than {@link #UNKEPT_AHEAD_BYTES} past its reader
     */
    FollowedPlan(String name, OrderPlan plan, long aheadBytes, boolean byFile, BooleanSupplier diskKeeps) {
        this.name = name;
        this.plan = plan;
        this.diskKeeps = diskKeeps;
        this.aheadGrains = (int) Math.max(1, Math.min(Integer.MAX_VALUE, aheadBytes / OrderPlan.GRAIN_BYTES));
        this.byFile = byFile;
        // By file: at their weight in the cache (a block file's header each), less the one being read.
        long mean = byFile ? Math.max(1, plan.memberRefBytes() / plan.memberRefs()) : 1;
        long weight = byFile ? weight(Math.min(OrderPrefetcher.MAX_FILE_BYTES, mean)) : 1;
        this.aheadFiles = (int) Math.max(1, Math.min(Integer.MAX_VALUE, aheadBytes / weight - 1));
        this.aheadBytes = aheadBytes;
        this.meanWeight = weight;
        this.leadLimit = Math.max(weight, aheadBytes - LEAD_MARGIN_FILES * weight);
        long unkept = Math.min(aheadBytes, UNKEPT_AHEAD_BYTES);
        this.unkeptFiles = (int) Math.max(1, Math.min(aheadFiles, unkept / weight - 1));
        this.unkeptGrains = (int) Math.max(1, Math.min(aheadGrains, unkept / OrderPlan.GRAIN_BYTES));
        this.unkeptLeadLimit = Math.max(weight, Math.min(leadLimit, unkept - LEAD_MARGIN_FILES * weight));
    }

    /** Whether the disk keeps what the plan fetches now: if not, it fetches no further than {@link #UNKEPT_AHEAD_BYTES} ahead. */
    boolean diskKeeps() {
        return diskKeeps.getAsBoolean();
    }

    /** By file: how many positions past its reader's the plan fetches now ({@link #aheadFiles}, less while the disk keeps nothing). */
    int aheadFilesNow() {
        return diskKeeps() ? aheadFiles : unkeptFiles;
    }

    /** How many grains past its reader's the plan fetches now ({@link #aheadGrains}, less while the disk keeps nothing). */
    int aheadGrainsNow() {
        return diskKeeps() ? aheadGrains : unkeptGrains;
    }

    /** By file: the most its files past the reader may weigh now ({@link #leadLimit}, less while the disk keeps nothing). */
    long leadLimitNow() {
        return diskKeeps() ? leadLimit : unkeptLeadLimit;
    }

    PlanStatus status(String state) {
        return new PlanStatus(name, plan.description(), plan.members(), plan.blobCount(), plan.plannedBytes(),
                reached.get(), next, byFile ? plan.members() : plan.grains(), fetchedBlocks.sum(), plan.heldBytes(),
                state, byFile, diskKeeps() ? aheadBytes : Math.min(aheadBytes, UNKEPT_AHEAD_BYTES));
    }

    /**
     * How far the plan may fetch now: by block, the grains in order needed up to the reader's
     * position, plus the horizon; by file, the positions up to the reader's plus the horizon.
     * Less while the disk keeps nothing ({@link #UNKEPT_AHEAD_BYTES}).
     */
    int horizon() {
        if (byFile) {
            return (int) Math.min(plan.members(), reached.get() + 1L + aheadFilesNow());
        }
        long h = (long) plan.grainsNeededBy(reached.get()) + aheadGrainsNow();
        return (int) Math.min(plan.grains(), h);
    }

    /**
     * By file, for the walk: the bytes of the files fetched past the reader's position, once those
     * it has read (up to {@link #reached}) are let go. Its own fetches bound a plan, not all that
     * the cache holds for what was fetched ahead: a file served by the kernel's page cache, never
     * read from warpd's, would hold that room for good (review 58, H1).
     */
    long leadBytes() {
        int r = reached.get();
        // The file at the reader's position may still be read (held until its read ends).
        while (leadSize > 0 && (int) (leadPositions[leadHead] >>> 32) < r) {
            leadBytes -= leadPositions[leadHead] & 0xFFFFFFFFL;
            leadHead = (leadHead + 1) % leadPositions.length;
            leadSize--;
        }
        return leadBytes;
    }

    /** A file's weight in the disk cache: its bytes and its block file's header. */
    static long weight(long length) {
        return length + BlockFile.headerLength((int) Math.min(Integer.MAX_VALUE, length));
    }

    /** By file, for the walk: the file at {@code position} is being fetched, weighing {@code weight} in the cache. */
    void fetching(int position, long weight) {
        if (leadSize == leadPositions.length) {
            long[] grown = new long[leadPositions.length * 2];
            for (int i = 0; i < leadSize; i++) {
                grown[i] = leadPositions[(leadHead + i) % leadPositions.length];
            }
            leadPositions = grown;
            leadHead = 0;
        }
        leadPositions[(leadHead + leadSize) % leadPositions.length] = (long) position << 32 | weight;
        leadSize++;
        leadBytes += weight;
    }

    /**
     * Whether some grain of {@code block} of the plan's blob {@code blob} is needed first by a
     * position from {@code fromNeed} up to {@code limitNeed}.
     */
    boolean wanted(int blob, BlockHashList list, int block, int fromNeed, int limitNeed) {
        long from = (long) block * list.blockSize();
        long to = from + list.blockLength(block);
        for (int g = (int) (from / OrderPlan.GRAIN_BYTES); (long) g * OrderPlan.GRAIN_BYTES < to; g++) {
            int need = plan.need(blob, g);
            if (need >= fromNeed && need <= limitNeed) {
                return true;
            }
        }
        return false;
    }
}
