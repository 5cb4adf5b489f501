package io.warpdata.daemon.control.ops;

import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.ControlException;
import io.warpdata.daemon.control.TypedOperation;
import io.warpdata.daemon.control.protocol.Calls;
import io.warpdata.daemon.control.protocol.Empty;
import io.warpdata.daemon.control.protocol.MetricsCall;

/**
 * {@code metrics}: every metric of the daemon in the Prometheus text format, the same text
 * {@code warpd --metrics-listen} serves at {@code /metrics}, as {@code {"text": "..."}}.
 */
public final class MetricsOperation extends TypedOperation<Empty, MetricsCall.Reply, Empty> {
    private final DaemonInfo daemon;

    public MetricsOperation(DaemonInfo daemon) {
        super(Calls.METRICS, AccessPolicy.Access.OPEN);
        this.daemon = daemon;
    }

    @Override
    protected MetricsCall.Reply run(Empty request, Events<Empty> events) {
        return new MetricsCall.Reply(daemon.metricsText().orElseThrow(() -> new ControlException(ControlException.UNSUPPORTED,
                "This daemon keeps no metrics", "Ask a warpd that mounts a store (scripts/warpd) for its metrics.")));
    }
}
