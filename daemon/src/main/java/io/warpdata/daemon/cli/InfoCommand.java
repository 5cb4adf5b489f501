package io.warpdata.daemon.cli;

import io.warpdata.daemon.inspect.VersionReport;
import picocli.CommandLine.Command;

/** {@code warpctl info DATASET}: the manifest summary. */
@Command(name = "info", description = "Summary of a dataset version: names (latest, tags, branches), where a view came from,"
        + " tables, artifacts, bindings.")
final class InfoCommand extends VersionReportCommand {
    @Override
    Object json(VersionReport report) {
        return report.infoJson(false);
    }

    @Override
    boolean showsNames() {
        return true;
    }

    @Override
    String text(VersionReport report) {
        return report.infoText();
    }
}
