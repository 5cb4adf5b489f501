package io.warpdata.blobcache.mirror;

import java.time.Duration;
import java.util.Optional;

/**
 * One mirror of the store: a cache that serves the store's own keys. Its answers are
 * <b>unverified</b>: the caller checks them against the publisher's hashes. Implementations never
 * send a credential of the store. Every call is bounded by a short timeout of silence
 * ({@code --mirror-timeout}: nothing heard from the mirror for that long is a failure) and by
 * {@link #ANSWER_CEILING} in all.
 */
public interface Mirror extends AutoCloseable {
    /**
     * The longest one answer may take however steadily its bytes come (60 s): the mirror timeout
     * bounds silence, and this stops a mirror that drips bytes for ever. A healthy cache that is
     * fetching a run of 1 MiB slices from a slow store, other nodes waiting on its lock, answers
     * well inside it.
     */
    Duration ANSWER_CEILING = Duration.ofSeconds(60);

    /**
     * The slowest answer worth waiting for, counted from the end of its grace: 1 MiB/s. A mirror slower than
     * that is slower than the store it stands in for (S3 gives one connection 25-90 MB/s), and a
     * read must not wait the ceiling for it: the ceiling is as long as a read may wait at all, so
     * the store would get no time left to answer (a mirror dripping a byte a second failed reads
     * with EIO). Past {@link #ANSWER_GRACE} an answer must keep up with it: a 1 MiB block may
     * take 6 s, a 32 MiB run 37 s, and one that drips is given up 5 s after it was asked for.
     */
    long SLOWEST_BYTES_PER_SECOND = 1L << 20;

    /**
     * What an answer may take beyond its bytes at {@link #SLOWEST_BYTES_PER_SECOND}: a cache
     * waiting for another node's fetch of the same slice (nginx's {@code proxy_cache_lock_timeout}
     * is 5 s), a connection being made. Never less than the mirror's timeout of silence.
     */
    Duration ANSWER_GRACE = Duration.ofSeconds(5);

    /**
     * How many bytes an answer that has sent {@code written} bytes in {@code elapsedNanos} is
     * behind the slowest rate waited for, counted from the end of its grace ({@code <= 0}: it
     * keeps up). An answer of {@code n} bytes therefore takes at most the grace plus {@code n}
     * bytes at {@link #SLOWEST_BYTES_PER_SECOND}.
     */
    static long behindSlowest(long written, long elapsedNanos, long graceNanos) {
        long due = (long) ((elapsedNanos - graceNanos) * (SLOWEST_BYTES_PER_SECOND / 1e9));
        return due - written;
    }

    /** The mirror as the user configured it, without secrets: for logs, counters and metrics. */
    String name();

    /**
     * Reads a range of a store key.
     *
     * @param dst receives exactly {@code range.length()} bytes at {@code dstOff} when this answers true
     * @return true if {@code dst} holds the range, false if the mirror does not hold the key (a
     *         404: a miss, not a failure)
     * @throws MirrorException if the mirror failed (status, connection, timeout, a wrong-sized answer)
     */
    boolean read(MirrorRange range, byte[] dst, int dstOff) throws MirrorException;

    /**
     * Reads a whole small object (a version manifest, a hash list, a member index).
     *
     * @param maxBytes a larger object is a failure, not a read of its first bytes
     * @return the bytes, or empty if the mirror does not hold the key
     * @throws MirrorException if the mirror failed or the object is larger than {@code maxBytes}
     */
    Optional<byte[]> get(String key, int maxBytes) throws MirrorException;

    /** Whether this mirror takes {@link #fill} calls (an S3 tier does; an HTTP cache fills itself). */
    default boolean fillable() {
        return false;
    }

    /**
     * Offers verified bytes of a range to be written to the mirror in the background. Never blocks,
     * never throws: a full queue drops the offer and a failed write is counted.
     *
     * @param verified the range's bytes, already checked against the publisher's hashes (copied)
     */
    default void fill(MirrorRange range, byte[] verified, int off) {
    }

    /** Offers a verified whole object (a manifest, a hash list, a member index), like {@link #fill}. */
    default void fillObject(String key, byte[] verified) {
    }

    /**
     * This mirror's copy of a range of {@code key} (or of the whole object, {@code offset}
     * negative) failed verification: a mirror warpd fills writes the next verified bytes of it
     * over that copy. Never blocks or throws.
     */
    default void rejected(String key, long offset, int len, int blockSize) {
    }

    /** Fill counters: written, failed, dropped (zeros for a mirror that is not fillable). */
    default FillCounts fillCounts() {
        return FillCounts.NONE;
    }

    /** Stops background work and releases connections. */
    @Override
    void close();

    /**
     * What the background filling of a mirror did.
     *
     * @param written objects written (or found already there: fills are idempotent)
     * @param failed writes that failed (counted, never thrown)
     * @param dropped offers refused because the queue was full (a read is never delayed by a fill)
     * @param queuedBytes bytes waiting in the queue now
     */
    record FillCounts(long written, long failed, long dropped, long queuedBytes) {
        public static final FillCounts NONE = new FillCounts(0, 0, 0, 0);
    }
}
