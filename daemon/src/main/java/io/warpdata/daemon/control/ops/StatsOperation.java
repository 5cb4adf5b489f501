package io.warpdata.daemon.control.ops;

import com.fasterxml.jackson.databind.JsonNode;
import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.ControlProtocol;
import io.warpdata.daemon.control.Operation;
import io.warpdata.daemon.control.OperationContext;

/**
 * {@code stats}: the daemon's counters and gauges as written to {@code stats.json} (what
 * {@code warpctl status --watch} turns into rates each second).
 */
public final class StatsOperation implements Operation {
    private final DaemonInfo daemon;

    public StatsOperation(DaemonInfo daemon) {
        this.daemon = daemon;
    }

    @Override
    public String name() {
        return "stats";
    }

    @Override
    public AccessPolicy.Access access() {
        return AccessPolicy.Access.OPEN;
    }

    @Override
    public JsonNode run(OperationContext ctx) {
        return ControlProtocol.json().valueToTree(daemon.stats());
    }
}
