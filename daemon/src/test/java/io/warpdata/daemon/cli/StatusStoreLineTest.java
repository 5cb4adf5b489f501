package io.warpdata.daemon.cli;

import io.warpdata.daemon.control.protocol.StoreStatus;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code warpctl status}'s "store:" line. */
class StatusStoreLineTest {
    private static StoreStatus store(String state, boolean notAnswering) {
        return new StoreStatus(false, false, state, notAnswering, "2026-11-30T10:00:00Z",
                "GET blobs/x: 500 InternalError", 12, 0, 1, 0, 30);
    }

    /**
     * Audit 38: a store answering 500 was shown as "unreachable ... serving from cache" while each
     * read of uncached data waited out its 60 s deadline.
     */
    @Test
    void aStoreAnsweringWithErrorsIsFailingAndItsReadsWaitTheirDeadline() {
        String failing = StatusCommand.storeLine(store("failing", false));
        assertThat(failing).startsWith("failing since 2026-11-30T10:00:00Z (GET blobs/x: 500 InternalError)")
                .contains("retry until their read deadline (60 s)").doesNotContain("unreachable");
        assertThat(StatusCommand.storeLine(store("unreachable", false))).startsWith("unreachable since")
                .contains("serving from cache");
        assertThat(StatusCommand.storeLine(store("unreachable (not answering)", true)))
                .startsWith("unreachable (not answering) since");
    }

    /** Audit 38: status exited 0 whatever warpd's state; --check fails on a store down or a cache warning. */
    @Test
    void checkFailsOnAStoreDownOrACacheWarningAndNotOnAStoreOfflineByChoice() {
        Doctor.Check fine = new Doctor.Check("warpd's cache", Doctor.Status.PASS, "ok", "");
        Doctor.Check full = new Doctor.Check("warpd's cache", Doctor.Status.WARN, "under the free-space floor: its own"
                + " 1 MB of blocks cannot make up the 2 GB missing, so warpd caches nothing new", "free space");
        Doctor.Check sizing = new Doctor.Check("warpd's cache", Doctor.Status.WARN, "the disk reaches the free-space floor"
                + " before the cache limit", "lower the limit");
        StoreStatus up = new StoreStatus(true, false, "reachable", false, null, null, 0, 0, 0, 0, 30);
        StoreStatus offline = new StoreStatus(false, true, "offline", false, null, null, 0, 0, 0, 0, 30);
        assertThat(StatusCommand.degraded(up, fine)).isFalse();
        assertThat(StatusCommand.degraded(offline, fine)).as("--mode local: a choice").isFalse();
        assertThat(StatusCommand.degraded(store("failing", false), fine)).isTrue();
        assertThat(StatusCommand.degraded(store("unreachable", false), null)).isTrue();
        assertThat(StatusCommand.degraded(up, full)).isTrue();
        assertThat(StatusCommand.degraded(up, sizing)).as("a forecast, not an outage (the review)").isFalse();
    }
}
