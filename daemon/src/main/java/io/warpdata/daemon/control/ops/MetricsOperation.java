package io.warpdata.daemon.control.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.ControlException;
import io.warpdata.daemon.control.ControlProtocol;
import io.warpdata.daemon.control.Operation;
import io.warpdata.daemon.control.OperationContext;

/**
 * {@code metrics}: every metric of the daemon in the Prometheus text format, the same text
 * {@code warpd --metrics-listen} serves at {@code /metrics}, as {@code {"text": "..."}}.
 */
public final class MetricsOperation implements Operation {
    private final DaemonInfo daemon;

    public MetricsOperation(DaemonInfo daemon) {
        this.daemon = daemon;
    }

    @Override
    public String name() {
        return "metrics";
    }

    @Override
    public AccessPolicy.Access access() {
        return AccessPolicy.Access.OPEN;
    }

    @Override
    public JsonNode run(OperationContext ctx) {
        String text = daemon.metricsText().orElseThrow(() -> new ControlException(ControlException.UNSUPPORTED,
                "This daemon keeps no metrics", "Ask a warpd that mounts a store (scripts/warpd) for its metrics."));
        ObjectNode r = ControlProtocol.object();
        r.put("text", text);
        return r;
    }
}
