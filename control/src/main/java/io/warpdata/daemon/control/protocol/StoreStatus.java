package io.warpdata.daemon.control.protocol;

/**
 * Whether the store answers (in {@code status}, {@code stats} and stats.json).
 *
 * @param state            reachable, offline, or the outage's state
 * @param unreachableSince when the current outage began (ISO-8601), null when reachable
 * @param lastError        the outage's error, null when reachable
 * @param staleAnswers     answers served from the last known state during outages
 */
public record StoreStatus(boolean reachable,
                          boolean offline,
                          String state,
                          boolean notAnswering,
                          String unreachableSince,
                          String lastError,
                          long failures,
                          long fastFailures,
                          long outages,
                          long staleAnswers,
                          long pointerTtlSeconds) {
}
