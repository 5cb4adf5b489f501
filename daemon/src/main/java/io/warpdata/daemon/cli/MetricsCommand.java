package io.warpdata.daemon.cli;

import io.warpdata.daemon.control.protocol.Calls;
import io.warpdata.daemon.control.protocol.Empty;
import io.warpdata.daemon.control.protocol.MetricsCall;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.util.concurrent.Callable;

/**
 * {@code warpctl metrics}: warpd's Prometheus metrics over the control socket, the same text
 * {@code warpd --metrics-listen} serves at {@code /metrics} (for a node without the HTTP
 * endpoint, or a textfile collector: {@code warpctl metrics > /var/lib/node_exporter/warp.prom}).
 */
@Command(name = "metrics", mixinStandardHelpOptions = true,
        description = "Print warpd's metrics in the Prometheus text format (as its /metrics endpoint serves them).")
public final class MetricsCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        MetricsCall.Reply r = DaemonCalls.call(spec, Calls.METRICS, Empty.INSTANCE);
        return DaemonCalls.print(spec, r, r.text());
    }
}
