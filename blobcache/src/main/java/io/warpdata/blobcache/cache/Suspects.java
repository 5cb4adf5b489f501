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
 * and a read that needs the bad block itself fails at once, without a GET, for
 * {@link #RETRY_BAD_BLOCK_NANOS} after each failure (audit 38: a reader retrying one damaged
 * file fetched its block twice a try, 1.55 GB in 20 s, and logged each).
 */
final class Suspects {
    /** How long a block that failed verification twice sends members around it: 10 minutes. */
    static final long BAD_BLOCK_NANOS = 600_000_000_000L;
    /** How long after a block failed twice reads that need it fail at once: 30 s (then one read fetches it again). */
    static final long RETRY_BAD_BLOCK_NANOS = 30_000_000_000L;
    /** Bad blocks remembered per blob: a blob with more is damaged all over, and its members fail anyway. */
    static final int BAD_BLOCKS_PER_BLOB = 64;

    private static final class State {
        volatile boolean suspect;
        /** Failures so far: a planner that saw fewer closes its windows. */
        volatile int failures;
        /** Block index -> System.nanoTime() when it last failed twice; null until one has. */
        volatile ConcurrentHashMap<Integer, Long> badBlocks;
    }

    private final Cache<BlobId, State> blobs = Caffeine.newBuilder()
            .maximumSize(ReadAhead.TRACKED_BLOBS)
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
        State s = blobs.get(blob, k -> new State());
        ConcurrentHashMap<Integer, Long> bad;
        synchronized (s) {
            bad = s.badBlocks;
            if (bad == null) {
                bad = s.badBlocks = new ConcurrentHashMap<>();
            }
        }
        long now = System.nanoTime();
        if (bad.size() < BAD_BLOCKS_PER_BLOB || bad.containsKey(block)) {
            bad.put(block, now);
        }
    }

    /** Whether a block of {@code [first, last]} of {@code blob} failed verification twice lately. */
    boolean badBlock(BlobId blob, int first, int last) {
        State s = blobs.getIfPresent(blob);
        ConcurrentHashMap<Integer, Long> bad = s == null ? null : s.badBlocks;
        if (bad == null) {
            return false;
        }
        long now = System.nanoTime();
        for (int b = first; b <= last; b++) {
            Long failed = bad.get(b);
            if (failed != null) {
                if (now - failed < BAD_BLOCK_NANOS) {
                    return true;
                }
                bad.remove(b, failed);
            }
        }
        return false;
    }

    /**
     * How many seconds ago block {@code block} of {@code blob} failed twice, if within
     * {@link #RETRY_BAD_BLOCK_NANOS}: a read that needs it then fails at once; else -1.
     */
    long failedMomentsAgo(BlobId blob, int block) {
        State s = blobs.getIfPresent(blob);
        ConcurrentHashMap<Integer, Long> bad = s == null ? null : s.badBlocks;
        Long failed = bad == null ? null : bad.get(block);
        if (failed == null) {
            return -1;
        }
        long ago = System.nanoTime() - failed;
        return ago < RETRY_BAD_BLOCK_NANOS ? ago / 1_000_000_000L : -1;
    }

    /** Forgets every bad block, as if their time had passed (tests). */
    void forgetBadBlocks() {
        blobs.asMap().values().forEach(s -> s.badBlocks = null);
    }

    /** How many verification failures {@code blob} has had (as far as remembered). */
    int failures(BlobId blob) {
        State s = blobs.getIfPresent(blob);
        return s == null ? 0 : s.failures;
    }
}
