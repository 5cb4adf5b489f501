package io.warpdata.daemon.cli;

import io.warpdata.blobcache.Catalog;
import io.warpdata.daemon.inspect.VersionReport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.util.concurrent.Callable;

/** {@code warpctl info DATASET}: the manifest summary. */
@Command(name = "info", description = "Summary of a dataset version: tables, artifacts, bindings.")
final class InfoCommand implements Callable<Integer> {
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
                root.printJson(report.infoJson(false));
            } else {
                root.context.out().print(report.infoText());
            }
        }
        return 0;
    }
}
