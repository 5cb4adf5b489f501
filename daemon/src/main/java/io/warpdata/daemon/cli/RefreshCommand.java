package io.warpdata.daemon.cli;

import io.warpdata.daemon.control.protocol.Calls;
import io.warpdata.daemon.control.protocol.RefreshCall;
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
        RefreshCall.Reply r = DaemonCalls.call(spec, Calls.REFRESH, new RefreshCall.Request(dataset));
        return DaemonCalls.print(spec, r, "refreshed " + r.refreshed() + System.lineSeparator());
    }
}
