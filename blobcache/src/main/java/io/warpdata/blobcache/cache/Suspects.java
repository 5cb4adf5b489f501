package io.warpdata.blobcache.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.warpdata.manifest.BlobId;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Blobs whose fetched bytes failed verification: read-ahead of a suspect blob is held back
 * until one GET of it verifies without a single mismatch. Written by the fetchers
 * ({@link RunFetcher}, {@link MemberReads}), read by the planners ({@link ReadAhead}) and the
 * scheduler; nobody calls anybody back. Bounded like {@link ReadAhead}'s tracked blobs.
 *
 * <p>It also remembers the blocks that failed twice (the store serves them wrong), for
 * {@link #BAD_BLOCK_NANOS}: a small member in one of them is then fetched on its own straight
 * away ({@link ReadPlan#member}) instead of fetching the bad block twice more, and logging it,
 * before its own GET (session 30's review, M6: each intact tensor beside a damaged one did);
 * and a read that needs the bad block itself fails at once, without a GET, for a while after
 * each failure ({@link #retryAfterNanos}: none after the first, so a store that served wrong bytes
 * once is read again at once, then 5 s more each time, up to 30 s; audit 38: a reader retrying
 * one damaged file fetched its block twice a try, 1.55 GB in 20 s, and logged each). A member
 * fetched on its own ({@link MemberReads}) that fails its hash twice waits the same way.
 */
final class Suspects {
    /** How long a block that failed verification twice sends members around it: 10 minutes. */
    static final long BAD_BLOCK_NANOS = 600_000_000_000L;
    /** The most a block that failed twice again and again waits before a read fetches it again: 30 s. */
    static final long RETRY_BAD_BLOCK_NANOS = 30_000_000_000L;
    /** What each failure of a block beyond its first adds to that wait: 5 s. */
    static final long RETRY_STEP_NANOS = 5_000_000_000L;
    /** Bad blocks remembered per blob: a blob with more is damaged all over, and its members fail anyway. */
    static final int BAD_BLOCKS_PER_BLOB = 64;

    private static final class State {
        volatile boolean suspect;
        /** Failures so far: a planner that saw fewer closes its windows. */
        volatile int failures;
        /** Block index -> when it last failed twice and how often it has. */
        final ConcurrentHashMap<Integer, Bad> badBlocks = new ConcurrentHashMap<>();
    }

    /** A bad block or member: when it last failed twice (System.nanoTime), and how many times it has. */
    record Bad(long failedAt, int times) {
        /** Another failure, {@code now}: one after the last was forgotten starts over (a one-off is read again at once). */
        Bad again(long now) {
            return now - failedAt >= BAD_BLOCK_NANOS ? new Bad(now, 1) : new Bad(now, times + 1);
        }

        /** Whether a read that needs it is to fail at once, {@code now}: within {@link #retryAfterNanos} of its last failure. */
        boolean waiting(long now) {
            return now - failedAt < retryAfterNanos(times);
        }
    }

    /** How long after its {@code times}-th failure a block waits before a read fetches it again. */
    static long retryAfterNanos(int times) {
        return Math.min(RETRY_BAD_BLOCK_NANOS, (times - 1) * RETRY_STEP_NANOS);
    }

    private final Cache<BlobId, State> blobs = Caffeine.newBuilder()
            .maximumSize(ReadAhead.TRACKED_BLOBS)
            .executor(Runnable::run)
            .build();
    /**
     * Members fetched on their own whose GETs failed their hash twice, by the member's hash: they
     * wait as bad blocks do (audit 39: a reader retrying one damaged 100 KB member made 754 GETs
     * in 10 s).
     */
    private final Cache<BlobId, Bad> badMembers = Caffeine.newBuilder()
            .maximumSize(4096)
            .expireAfterWrite(java.time.Duration.ofNanos(BAD_BLOCK_NANOS))
            .executor(Runnable::run)
            .build();

    /** A block (or member) of {@code blob} failed verification. */
    void failed(BlobId blob) {
        State s = blobs.get(blob, k -> new State());
        synchronized (s) {
            s.failures++;
            s.suspect = true;
        }
    }

    /** One GET of {@code blob} verified without a single mismatch. */
    void verified(BlobId blob) {
        State s = blobs.getIfPresent(blob);
        if (s != null && s.suspect) {
            s.suspect = false;
        }
    }

    /** Whether read-ahead of {@code blob} is held back. */
    boolean suspect(BlobId blob) {
        State s = blobs.getIfPresent(blob);
        return s != null && s.suspect;
    }

    /** Block {@code block} of {@code blob} failed verification twice: the store serves it wrong. */
    void failedTwice(BlobId blob, int block) {
        ConcurrentHashMap<Integer, Bad> bad = blobs.get(blob, k -> new State()).badBlocks;
        long now = System.nanoTime();
        if (bad.size() < BAD_BLOCKS_PER_BLOB || bad.containsKey(block)) {
            bad.merge(block, new Bad(now, 1), (old, one) -> old.again(now));
        }
    }

    /** The member whose SHA-256 is {@code member}, fetched on its own, failed it twice. */
    void memberFailedTwice(BlobId member) {
        long now = System.nanoTime();
        badMembers.asMap().merge(member, new Bad(now, 1), (old, one) -> old.again(now));
    }

    /** Whether a read of the bad member {@code member} is to fail at once, without a GET. */
    boolean memberWaiting(BlobId member) {
        Bad bad = badMembers.getIfPresent(member);
        return bad != null && bad.waiting(System.nanoTime());
    }

    /** Whether a block of {@code [first, last]} of {@code blob} failed verification twice lately. */
    boolean badBlock(BlobId blob, int first, int last) {
        State s = blobs.getIfPresent(blob);
        ConcurrentHashMap<Integer, Bad> bad = s == null ? null : s.badBlocks;
        if (bad == null || bad.isEmpty()) {
            return false;
        }
        long now = System.nanoTime();
        for (int b = first; b <= last; b++) {
            Bad failed = bad.get(b);
            if (failed != null) {
                if (now - failed.failedAt() < BAD_BLOCK_NANOS) {
                    return true;
                }
                bad.remove(b, failed);
            }
        }
        return false;
    }

    /**
     * The bad block {@code block} of {@code blob} while a read that needs it is to fail at once
     * (within {@link #retryAfterNanos} of its last failure), else null.
     */
    Bad waiting(BlobId blob, int block) {
        State s = blobs.getIfPresent(blob);
        Bad failed = s == null ? null : s.badBlocks.get(block);
        if (failed == null) {
            return null;
        }
        long now = System.nanoTime();
        if (now - failed.failedAt() >= BAD_BLOCK_NANOS) {
            s.badBlocks.remove(block, failed);
            return null;
        }
        return failed.waiting(now) ? failed : null;
    }

    /** Forgets every bad block and member, as if their time had passed (tests). */
    void forgetBadBlocks() {
        blobs.asMap().values().forEach(s -> s.badBlocks.clear());
        badMembers.invalidateAll();
    }

    /** How many verification failures {@code blob} has had (as far as remembered). */
    int failures(BlobId blob) {
        State s = blobs.getIfPresent(blob);
        return s == null ? 0 : s.failures;
    }
}
