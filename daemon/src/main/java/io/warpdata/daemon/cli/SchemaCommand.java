package io.warpdata.daemon.cli;

import io.warpdata.daemon.inspect.VersionReport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code warpctl schema DATASET [--table T]}: column names and types, from the manifest alone. */
@Command(name = "schema", description = "Table schema (from the manifest; no data is read).")
final class SchemaCommand extends VersionReportCommand {
    @Option(names = "--table", paramLabel = "TABLE", description = "Only this table (default: all).")
    String table;

    @Override
    Object json(VersionReport report) {
        return report.schemaJson(table);
    }

    @Override
    String text(VersionReport report) {
        return report.schemaText(table);
    }
}
