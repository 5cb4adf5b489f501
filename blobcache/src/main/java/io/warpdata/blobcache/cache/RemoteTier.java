package io.warpdata.blobcache.cache;

/**
 * A remote tier between the local tiers and the store: a mirror (issue 25: a read-through HTTP
 * cache or an S3-compatible bucket, {@link io.warpdata.blobcache.mirror.MirrorTier}) that serves
 * the store's own keys with ranged GETs. It is not trusted: {@link Remotes} checks every byte it
 * returns against the block or member hashes before anyone sees it, skips a failing tier for a
 * backoff and keeps its counters; a failure or a wrong byte sends the same range to the next
 * tier, then to the store, inside the same read.
 *
 * <p>The tiers are handed to {@link BlockCache#open(io.warpdata.store.BlobStore, CacheConfig,
 * java.util.List)} in the order they are tried; the cache closes them.
 */
public interface RemoteTier extends AutoCloseable {
    /** For logs and counters: where this tier is (a URL without credentials). */
    String describe();

    /**
     * The longest one call may wait on this tier before it fails (its silence timeout): a read
     * asks a tier only while that much time and the store's reserve are left before its deadline.
     */
    default java.time.Duration timeout() {
        return java.time.Duration.ZERO;
    }

    /**
     * Reads {@code len} bytes at {@code offset} of the store key {@code key} into
     * {@code dst[dstOff, dstOff + len)}. The range starts on a block boundary and is whole blocks,
     * except that it may end at the end of the blob. The bytes need not be right: they are checked.
     * Nothing is written to {@code dst} after this returns or throws (callers reuse the buffer).
     *
     * @param blockSize the blob's block size (the slice size an HTTP cache should be set to)
     * @return true if {@code dst} holds the range, false if the tier does not hold the key (a miss)
     * @throws RuntimeException if the tier failed ({@link Failure} with {@code timeout} set for a
     *         tier that did not answer in time; any other exception is an error as well)
     */
    boolean read(String key, long offset, byte[] dst, int dstOff, int len, int blockSize);

    /**
     * Reads a whole small object named by its hash (a block hash list, a version manifest). The
     * bytes need not be right: they are checked against the id.
     *
     * @param maxBytes a larger object is a failure, not a read of its first bytes
     * @return the bytes, or empty if the tier does not hold the key (a miss; also the default, for
     *         a tier that serves only ranges)
     * @throws RuntimeException if the tier failed, as for {@link #read}
     */
    default java.util.Optional<byte[]> get(String key, int maxBytes) {
        return java.util.Optional.empty();
    }

    /** Whether warpd writes bytes it verified from the store to this tier (an S3 tier). */
    default boolean fillable() {
        return false;
    }

    /**
     * Offers verified bytes of a block-aligned range, fetched from the store, to be written in the
     * background. Never blocks, never throws; the bytes are copied.
     */
    default void fill(String key, long offset, byte[] verified, int off, int len, int blockSize) {
    }

    /** Offers a whole object verified from the store, like {@link #fill}; the bytes are copied. */
    default void fillObject(String key, byte[] verified) {
    }

    /**
     * Says that this tier's copy of a range of {@code key} (or of the whole object, when
     * {@code offset} is negative) failed verification: a tier warpd fills writes the next
     * verified bytes of it over that copy instead of keeping it. Never blocks or throws.
     */
    default void rejected(String key, long offset, int len, int blockSize) {
    }

    /** Background fill counters: objects written, failed writes, dropped offers (zeros if not fillable). */
    default long[] fillCounts() {
        return new long[] {0, 0, 0};
    }

    /** Releases connections and stops background work. */
    @Override
    default void close() {
    }

    /** A failure of a tier, as its client reports it. */
    final class Failure extends RuntimeException {
        private final boolean timeout;

        public Failure(String message, boolean timeout, Throwable cause) {
            super(message, cause);
            this.timeout = timeout;
        }

        /** Whether the tier did not answer within its timeout. */
        public boolean timeout() {
            return timeout;
        }
    }
}
