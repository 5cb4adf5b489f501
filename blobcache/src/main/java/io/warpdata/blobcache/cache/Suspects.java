package io.warpdata.blobcache.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.warpdata.manifest.BlobId;

/**
 * Blobs whose fetched bytes failed verification: read-ahead of a suspect blob is held back
 * until one GET of it verifies without a single mismatch. Written by the fetchers
 * ({@link RunFetcher}, {@link MemberReads}), read by the planners ({@link ReadAhead}) and the
 * scheduler; nobody calls anybody back. Bounded like {@link ReadAhead}'s tracked blobs.
 */
final class Suspects {
    private static final class State {
        volatile boolean suspect;
        /** Failures so far: a planner that saw fewer closes its windows. */
        volatile int failures;
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

    /** How many verification failures {@code blob} has had (as far as remembered). */
    int failures(BlobId blob) {
        State s = blobs.getIfPresent(blob);
        return s == null ? 0 : s.failures;
    }
}
