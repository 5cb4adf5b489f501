package io.warpdata.daemon.cli;

import io.warpdata.catalog.RefNames;
import io.warpdata.catalog.Catalog;
import io.warpdata.daemon.inspect.VersionReport;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.util.concurrent.Callable;

/**
 * A command that shows one view of a dataset version's manifest (info, inspect, schema): resolve
 * the version, then print the view as text or, with {@code --json}, as JSON. Reads no data.
 */
abstract class VersionReportCommand implements Callable<Integer> {
    @ParentCommand
    WarpctlCommand root;

    @Parameters(index = "0", paramLabel = "DATASET", description = "workspace/name[@version]")
    String dataset;

    /** The view as a JSON-serialisable value. */
    abstract Object json(VersionReport report);

    /** The view as text, ending with a newline. */
    abstract String text(VersionReport report);

    /** Whether the view shows the names the version goes by (a few more store reads). */
    boolean showsNames() {
        return false;
    }

    @Override
    public final Integer call() {
        try (Remote remote = root.openRemote()) {
            Catalog.Resolved r = remote.catalog().resolve(WarpctlCommand.datasetRef(dataset));
            VersionReport report = new VersionReport(r.manifest(), r.version(),
                    showsNames() ? RefNames.of(remote.catalog(), r.id()).of(r.version()) : java.util.List.of());
            if (root.json) {
                root.printJson(json(report));
            } else {
                root.context.out().print(text(report));
            }
        }
        return 0;
    }
}
