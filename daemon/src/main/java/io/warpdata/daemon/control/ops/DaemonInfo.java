package io.warpdata.daemon.control.ops;

import io.warpdata.daemon.control.protocol.MirrorStatus;
import io.warpdata.daemon.control.protocol.PassthroughStatus;
import io.warpdata.daemon.control.protocol.StatsCall;
import io.warpdata.daemon.control.protocol.StoreStatus;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/** What {@code status} reports about the running daemon; warpd implements it over WarpDaemon. */
public interface DaemonInfo {

    /** Warp's version, e.g. {@code 0.1.0}. */
    String version();

    /** The mount point, e.g. {@code /warp}. */
    String mountPoint();

    /** The remote store, e.g. {@code s3://bucket/prefix}. */
    String remote();

    /** The S3-compatible endpoint the store is reached at ({@code --endpoint}); empty for AWS's own. */
    default Optional<String> endpoint() {
        return Optional.empty();
    }

    /** auto, remote, hybrid or local. */
    String mode();

    Instant startedAt();

    /** Files (not directories) open in the mount right now, if the daemon can count them. */
    OptionalLong openFiles();

    /** Directories open in the mount right now, if the daemon counts them. */
    default OptionalLong openDirectories() {
        return OptionalLong.empty();
    }

    /** The last few errors the daemon logged (newest last), one line each. */
    List<String> recentErrors();

    /**
     * Whether the store answers: {@code reachable}, {@code offline}, {@code unreachable_since},
     * {@code last_error} and counters (see WarpDaemon's stats); empty if not known.
     */
    default java.util.Optional<StoreStatus> storeStatus() {
        return java.util.Optional.empty();
    }

    /** FUSE passthrough's state and counters ({@code --passthrough}); empty if not known. */
    default java.util.Optional<PassthroughStatus> passthrough() {
        return java.util.Optional.empty();
    }

    /** Each mirror's state and counters ({@code --mirror}, in the order tried); empty without any. */
    default List<MirrorStatus> mirrors() {
        return List.of();
    }

    /**
     * The daemon's counters and gauges as in {@code stats.json}: {@code read} (the read path's
     * counters), {@code read_bytes_by_dataset}, {@code gauges} ({@code gets_in_flight}, ...) and
     * the rest; empty if the daemon keeps none.
     */
    default StatsCall.Reply stats() {
        return StatsCall.Reply.NONE;
    }

    /** Every metric in the Prometheus text format, as {@code /metrics} serves it; empty if the daemon keeps none. */
    default java.util.Optional<String> metricsText() {
        return java.util.Optional.empty();
    }
}
