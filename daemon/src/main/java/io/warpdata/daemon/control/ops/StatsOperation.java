package io.warpdata.daemon.control.ops;

import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.TypedOperation;
import io.warpdata.daemon.control.protocol.Calls;
import io.warpdata.daemon.control.protocol.Empty;
import io.warpdata.daemon.control.protocol.StatsCall;

/**
 * {@code stats}: the daemon's counters and gauges as written to {@code stats.json} (what
 * {@code warpctl status --watch} turns into rates each second).
 */
public final class StatsOperation extends TypedOperation<Empty, StatsCall.Reply, Empty> {
    private final DaemonInfo daemon;

    public StatsOperation(DaemonInfo daemon) {
        super(Calls.STATS, AccessPolicy.Access.OPEN);
        this.daemon = daemon;
    }

    @Override
    protected StatsCall.Reply run(Empty request, Events<Empty> events) {
        return daemon.stats();
    }
}
