package io.warpdata.blobcache.cache;

import java.time.Duration;
import java.util.Objects;

/**
 * How long the read path keeps trying a store that is unavailable (5xx, throttling, resets,
 * timeouts, all arriving as {@link io.warpdata.store.StoreUnavailableException}).
 *
 * <p>Retries back off exponentially from {@code initialBackoff} up to {@code maxBackoff}, each
 * sleep drawn uniformly from [0, backoff] ("full jitter", so that many readers hitting the same
 * throttled prefix do not retry in lock step). A read never takes longer than
 * {@code readDeadline} in total: it then fails with a typed error instead of hanging. The S3
 * store already retries a few times itself, so these retries sit on top and mainly ride out
 * outages of seconds.
 *
 * @param initialBackoff first backoff bound
 * @param maxBackoff     cap of a single backoff
 * @param readDeadline   bound on the total time of one read (fetch, retries and waiting)
 */
public record RetryPolicy(Duration initialBackoff, Duration maxBackoff, Duration readDeadline) {
    /**
     * 50 ms first backoff (a throttled S3 prefix typically recovers within a few hundred ms),
     * 2 s cap (longer sleeps mostly waste the deadline), 60 s deadline (long enough to ride out
     * a brief outage, short enough that a training job sees EIO rather than a hung worker).
     */
    public static final RetryPolicy DEFAULT =
            new RetryPolicy(Duration.ofMillis(50), Duration.ofSeconds(2), Duration.ofSeconds(60));

    public RetryPolicy {
        Objects.requireNonNull(initialBackoff, "initialBackoff");
        Objects.requireNonNull(maxBackoff, "maxBackoff");
        Objects.requireNonNull(readDeadline, "readDeadline");
        if (initialBackoff.isNegative() || maxBackoff.compareTo(initialBackoff) < 0) {
            throw new IllegalArgumentException("backoff must satisfy 0 <= initial <= max, was "
                    + initialBackoff + ", " + maxBackoff);
        }
        if (readDeadline.isNegative() || readDeadline.isZero()) {
            throw new IllegalArgumentException("readDeadline must be positive, was " + readDeadline);
        }
    }

    /** The same policy with another read deadline. */
    public RetryPolicy withReadDeadline(Duration deadline) {
        return new RetryPolicy(initialBackoff, maxBackoff, deadline);
    }
}
