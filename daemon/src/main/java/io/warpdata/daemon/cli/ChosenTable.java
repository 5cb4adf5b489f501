package io.warpdata.daemon.cli;

import io.warpdata.catalog.Catalog;
import io.warpdata.daemon.inspect.VersionReport;
import io.warpdata.manifest.Table;

/**
 * The table a row-reading command ({@code head}, {@code stream}) works on: the one asked for,
 * else {@code main}, else the first by name, of the version a dataset reference resolves to.
 *
 * @param version the resolved version
 * @param name    the table's name
 * @param table   the table
 */
record ChosenTable(Catalog.Resolved version, String name, Table table) {
    /**
     * @param asked        {@code --table}, or null for the default
     * @param noTablesHint what to do when the version has no table at all
     * @throws VersionReport.NoTablesException if the version has no tables
     * @throws io.warpdata.daemon.inspect.VersionReport.NoSuchTableException if {@code asked} is not one of them
     */
    static ChosenTable of(Remote remote, String dataset, String asked, String noTablesHint) {
        Catalog.Resolved r = remote.catalog().resolve(WarpctlCommand.datasetRef(dataset));
        VersionReport report = new VersionReport(r.manifest(), r.version());
        String name = asked != null ? asked : report.defaultTable().orElse(null);
        if (name == null) {
            throw new VersionReport.NoTablesException("Version " + r.id() + "@" + r.version().shortHex(12)
                    + " has no tables", noTablesHint);
        }
        return new ChosenTable(r, name, report.selected(name).get(name));
    }
}
