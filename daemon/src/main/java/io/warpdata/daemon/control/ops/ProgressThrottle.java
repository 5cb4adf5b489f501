package io.warpdata.daemon.control.ops;

import java.time.Clock;

/**
 * Limits progress events to a few per second: enough for a smooth progress bar, and a client
 * that went away is noticed within one interval (the write fails and cancels the operation).
 */
final class ProgressThrottle {
    static final long INTERVAL_MILLIS = 200;

    private final Clock clock;
    private long last = Long.MIN_VALUE;

    ProgressThrottle(Clock clock) {
        this.clock = clock;
    }

    synchronized boolean due() {
        long now = clock.millis();
        if (last != Long.MIN_VALUE && now - last < INTERVAL_MILLIS) {
            return false;
        }
        last = now;
        return true;
    }
}
