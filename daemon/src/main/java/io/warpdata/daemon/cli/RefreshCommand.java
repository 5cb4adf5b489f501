package io.warpdata.daemon.cli;

import io.warpdata.daemon.control.protocol.Calls;
import io.warpdata.daemon.control.protocol.RefreshCall;
import io.warpdata.daemon.control.ControlClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.util.concurrent.Callable;

/** {@code warpctl refresh [DATASET]}: re-read latest pointers now. */
@Command(name = "refresh", mixinStandardHelpOptions = true, description = "Make warpd re-read latest pointers now (of one dataset, or all) instead of after its short TTL.")
public final class RefreshCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", arity = "0..1", paramLabel = "DATASET", description = "workspace/name (default: all)")
    String dataset;


    @Override
    public Integer call() {
        RefreshCall.Reply r;
        try (ControlClient c = DaemonCalls.connect(spec)) {
            r = c.call(Calls.REFRESH, new RefreshCall.Request(dataset));
        }
        if (DaemonCalls.json(spec)) {
            DaemonCalls.printJson(spec.commandLine().getOut(), r);
        } else {
            spec.commandLine().getOut().println("refreshed " + r.refreshed());
            spec.commandLine().getOut().flush();
        }
        return 0;
    }
}
