package io.warpdata.daemon.cli;

import io.warpdata.blobcache.Catalog;
import io.warpdata.daemon.inspect.VersionReport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.util.concurrent.Callable;

/** {@code warpctl schema DATASET [--table T]}: column names and types, from the manifest alone. */
@Command(name = "schema", description = "Table schema (from the manifest; no data is read).")
final class SchemaCommand implements Callable<Integer> {
    @ParentCommand
    WarpctlCommand root;

    @Parameters(index = "0", paramLabel = "DATASET", description = "workspace/name[@version]")
    String dataset;

    @Option(names = "--table", paramLabel = "TABLE", description = "Only this table (default: all).")
    String table;

    @Override
    public Integer call() {
        try (Remote remote = root.openRemote()) {
            Catalog.Resolved r = remote.catalog().resolve(WarpctlCommand.datasetRef(dataset));
            VersionReport report = new VersionReport(r.manifest(), r.version());
            if (root.json) {
                root.printJson(report.schemaJson(table));
            } else {
                root.context.out().print(report.schemaText(table));
            }
        }
        return 0;
    }
}
