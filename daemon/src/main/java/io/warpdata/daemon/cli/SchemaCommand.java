package io.warpdata.daemon.cli;

import io.warpdata.daemon.inspect.VersionReport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code warpctl schema DATASET [--table T]}: column names and types, from the manifest alone. */
@Command(name = "schema", description = "Table schema (from the manifest; no data is read).")
final class SchemaCommand extends VersionReportCommand {
    @Option(names = "--table", paramLabel = "TABLE", description = "Only this table (default: main when there is one, else all).")
    String table;

    @Option(names = "--all", description = "Every table, also when there is a main table.")
    boolean all;

    /**
     * The named table, else main when the version has one (unless --all), else every table (null).
     *
     * @throws VersionReport.NoTablesException if the version has no tables, as head and stream say
     */
    private String chosen(VersionReport report) {
        if (report.defaultTable().isEmpty()) {
            throw new VersionReport.NoTablesException("Version " + dataset + " has no tables, so it has no schema",
                    "Use 'warpctl inspect " + dataset + "' to see its artifacts.");
        }
        if (table != null || all) {
            return table;
        }
        return report.defaultTable().filter("main"::equals).orElse(null);
    }

    @Override
    Object json(VersionReport report) {
        return report.schemaJson(chosen(report));
    }

    @Override
    String text(VersionReport report) {
        String t = chosen(report);
        String text = report.schemaText(t);
        return t == null || table != null || report.selected(null).size() == 1 ? text
                : "table " + t + " (--all for every table):\n" + text;
    }
}
