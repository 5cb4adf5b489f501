package io.warpdata.blobcache.mirror;

/**
 * One mirror's counters at a moment, for {@code warpctl cache stats}, {@code status} and
 * Prometheus. An operator reads a poisoned cache in {@code verificationFailures} and a dead or
 * hanging one in {@code errors}, {@code timeouts} and {@code state}.
 *
 * @param name the mirror as configured, without secrets
 * @param state {@code up}, or {@code down} while it is skipped after a failure
 * @param hits reads it answered (bytes not yet verified)
 * @param misses reads it did not hold (404): they went on to the next source
 * @param bytesServed bytes of those hits
 * @param verificationFailures answers the caller found wrong (a poisoned or corrupt cache)
 * @param errors failed reads: error status, reset, wrong-sized answer, timeout
 * @param timeouts of {@code errors}, those that ran into the mirror timeout
 * @param skipped reads that did not ask it because it was down
 * @param fills what warpd wrote to it in the background (an S3 tier), else zeros
 */
public record MirrorStats(String name, String state, long hits, long misses, long bytesServed, long verificationFailures,
                          long errors, long timeouts, long skipped, Mirror.FillCounts fills) {

    /** Hits over hits and misses, or 0 before any read. */
    public double hitRatio() {
        long asked = hits + misses;
        return asked == 0 ? 0 : (double) hits / asked;
    }
}
