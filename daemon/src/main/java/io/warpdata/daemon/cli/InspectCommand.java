package io.warpdata.daemon.cli;

import io.warpdata.blobcache.Catalog;
import io.warpdata.daemon.inspect.VersionReport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.util.concurrent.Callable;

/** {@code warpctl inspect DATASET}: every table shard, column, artifact shard and binding. */
@Command(name = "inspect", description = "Tables, artifacts and bindings of a dataset version in detail.")
final class InspectCommand implements Callable<Integer> {
    @ParentCommand
    WarpctlCommand root;

    @Parameters(index = "0", paramLabel = "DATASET", description = "workspace/name[@version]")
    String dataset;

    @Override
    public Integer call() {
        try (Remote remote = root.openRemote()) {
            Catalog.Resolved r = remote.catalog().resolve(WarpctlCommand.datasetRef(dataset));
            VersionReport report = new VersionReport(r.manifest(), r.version());
            if (root.json) {
                root.printJson(report.infoJson(true));
            } else {
                root.context.out().print(report.inspectText());
            }
        }
        return 0;
    }
}
