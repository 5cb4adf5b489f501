package io.warpdata.daemon.control.protocol;

/**
 * One mirror (a remote tier of the cache: an HTTP cache or an S3 tier) as {@code status},
 * {@code cache stats} and stats.json show it. An operator reads a poisoned cache in
 * {@code verificationFailures} and a dead or hanging one in {@code errors}, {@code timeouts} and
 * {@code state}.
 *
 * @param mirror the mirror as configured, without secrets
 * @param state {@code up}, or {@code down} while it is skipped after a failure
 * @param servedBytes verified bytes it served
 * @param hitRate hits over hits and misses (0 before any read)
 * @param hits reads it served with bytes that verified
 * @param misses reads it did not serve (not held, failed, or wrong bytes): they went on
 * @param verificationFailures answers whose bytes did not match the publisher's SHA-256
 * @param errors failed reads: error status, reset, wrong-sized answer, timeout
 * @param timeouts of {@code errors}, those that ran into the mirror timeout
 * @param skipped reads that did not ask it because it was down (backoff)
 * @param fillsWritten objects warpd wrote to it in the background (an S3 tier)
 * @param fillsFailed background writes that failed
 * @param fillsDropped offers refused because the fill queue was full
 */
public record MirrorStatus(String mirror, String state, long servedBytes, double hitRate, long hits, long misses,
                           long verificationFailures, long errors, long timeouts, long skipped, long fillsWritten,
                           long fillsFailed, long fillsDropped) {
}
