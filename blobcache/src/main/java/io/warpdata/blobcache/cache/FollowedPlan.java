package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlockHashList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntPredicate;

/**
 * One order plan being followed by the {@link OrderPrefetcher}, and what it plans: how far
 * ahead of its reader it may fetch ({@link #horizon}) and which run of blocks around a grain to
 * fetch ({@link #run}). It fetches nothing itself. The walk's fields are touched by the one
 * running walk only.
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
    volatile int next;

    FollowedPlan(String name, OrderPlan plan, long aheadBytes) {
        this.name = name;
        this.plan = plan;
        this.aheadGrains = (int) Math.max(1, Math.min(Integer.MAX_VALUE, aheadBytes / OrderPlan.GRAIN_BYTES));
    }

    PlanStatus status(String state) {
        return new PlanStatus(name, plan.description(), plan.members(), plan.blobCount(), plan.plannedBytes(),
                reached.get(), next, plan.grains(), fetchedBlocks.sum(), plan.heldBytes(), state);
    }

    /** Grains in order the plan may fetch now: those needed up to the reader's position, plus the horizon. */
    int horizon() {
        long h = (long) plan.grainsNeededBy(reached.get()) + aheadGrains;
        return (int) Math.min(plan.grains(), h);
    }

    /**
     * The run to fetch for missing block {@code block} of the plan's blob {@code blob}: forward,
     * then backward, its neighbours that are {@code missing} and needed before grain
     * {@code limit}, at most {@code maxBlocks} in all.
     *
     * @return {@code {start, end}}, blocks [start, end)
     */
    int[] run(int blob, BlockHashList list, int block, int limit, int maxBlocks, IntPredicate missing) {
        int limitNeed = plan.needAt(limit - 1);
        int end = block + 1;
        while (end < list.blockCount() && end - block < maxBlocks && wanted(blob, list, end, limitNeed)
                && missing.test(end)) {
            end++;
        }
        int start = block;
        while (start > 0 && end - start < maxBlocks && wanted(blob, list, start - 1, limitNeed)
                && missing.test(start - 1)) {
            start--;
        }
        return new int[] {start, end};
    }

    /** Whether some grain of {@code block} is needed, by a position up to {@code limitNeed}. */
    private boolean wanted(int blob, BlockHashList list, int block, int limitNeed) {
        long from = (long) block * list.blockSize();
        long to = from + list.blockLength(block);
        for (int g = (int) (from / OrderPlan.GRAIN_BYTES); (long) g * OrderPlan.GRAIN_BYTES < to; g++) {
            int need = plan.need(blob, g);
            if (need >= 0 && need <= limitNeed) {
                return true;
            }
        }
        return false;
    }
}
