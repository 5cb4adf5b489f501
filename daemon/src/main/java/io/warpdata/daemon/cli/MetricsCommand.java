package io.warpdata.daemon.cli;

import io.warpdata.daemon.control.protocol.Calls;
import io.warpdata.daemon.control.protocol.MetricsCall;
import io.warpdata.daemon.control.ControlClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
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
        MetricsCall.Reply r;
        try (ControlClient c = DaemonCalls.connect(spec)) {
            r = c.call(Calls.METRICS);
        }
        PrintWriter out = spec.commandLine().getOut();
        if (DaemonCalls.json(spec)) {
            DaemonCalls.printJson(out, r);
        } else {
            out.print(r.text());
            out.flush();
        }
        return 0;
    }
}
