package io.warpdata.daemon.cli;

import io.warpdata.daemon.inspect.VersionReport;
import picocli.CommandLine.Command;

/** {@code warpctl inspect DATASET}: every table shard, column, artifact shard and binding. */
@Command(name = "inspect", description = "Tables, artifacts and bindings of a dataset version in detail.")
final class InspectCommand extends VersionReportCommand {
    @Override
    Object json(VersionReport report) {
        return report.infoJson(true);
    }

    @Override
    String text(VersionReport report) {
        return report.inspectText();
    }
}
