package io.warpdata.manifest;

/** Totals over a version, derived from its tables and artifacts. */
public record Stats(long totalRows, long totalBytes, long totalMembers) {
    public Stats {
        Names.requireNonNegative("stats.total_rows", totalRows);
        Names.requireNonNegative("stats.total_bytes", totalBytes);
        Names.requireNonNegative("stats.total_members", totalMembers);
    }
}
