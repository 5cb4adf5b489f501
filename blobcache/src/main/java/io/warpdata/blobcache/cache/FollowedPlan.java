package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlockHashList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

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

    /** Whether some grain of {@code block} of the plan's blob {@code blob} is needed, by a position up to {@code limitNeed}. */
    boolean wanted(int blob, BlockHashList list, int block, int limitNeed) {
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
