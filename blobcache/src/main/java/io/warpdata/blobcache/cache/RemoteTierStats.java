package io.warpdata.blobcache.cache;

/**
 * One remote tier's counters at a moment, for {@code warpctl cache stats}, {@code status} and
 * Prometheus. An operator reads a poisoned cache in {@code verificationFailures} and a dead or
 * hanging one in {@code errors}, {@code timeouts} and {@code state}.
 *
 * @param name the tier as configured, without secrets
 * @param state {@code up}, or {@code down} while it is skipped after a failure
 * @param hits reads it served with bytes that verified
 * @param misses reads it did not serve (not held, failed, or wrong bytes): they went on
 * @param bytesServed verified bytes it served
 * @param verificationFailures answers whose bytes did not match the publisher's SHA-256
 * @param errors failed reads: error status, reset, wrong-sized answer, timeout
 * @param timeouts of {@code errors}, those that ran into the mirror timeout
 * @param skipped reads that did not ask it because it was down (backoff)
 * @param fillsWritten objects warpd wrote to it in the background (an S3 tier)
 * @param fillsFailed background writes that failed
 * @param fillsDropped offers refused because the fill queue was full
 */
public record RemoteTierStats(String name, String state, long hits, long misses, long bytesServed,
                              long verificationFailures, long errors, long timeouts, long skipped,
                              long fillsWritten, long fillsFailed, long fillsDropped) {

    /** Hits over hits and misses, or 0 before any read. */
    /**
     * "Not there" answers, and not one hit, after which a mirror looks misconfigured (a wrong BASE):
     * warpd logs it once, and {@code warpctl doctor} warns.
     */
    public static final long NEVER_HELD = 200;

    public double hitRatio() {
        long asked = hits + misses;
        return asked == 0 ? 0 : (double) hits / asked;
    }
}
