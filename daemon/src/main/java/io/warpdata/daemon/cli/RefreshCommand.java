package io.warpdata.daemon.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warpdata.daemon.control.ControlClient;
import io.warpdata.daemon.control.ControlProtocol;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.util.Map;
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
        ObjectNode args = ControlProtocol.object();
        if (dataset != null) {
            args.put("dataset", dataset);
        }
        JsonNode r;
        try (ControlClient c = DaemonCalls.connect(spec)) {
            r = c.call("refresh", args);
        }
        if (DaemonCalls.json(spec)) {
            DaemonCalls.printJson(spec.commandLine().getOut(), r);
        } else {
            spec.commandLine().getOut().println("refreshed " + r.path("refreshed").asText());
            spec.commandLine().getOut().flush();
        }
        return 0;
    }
}
