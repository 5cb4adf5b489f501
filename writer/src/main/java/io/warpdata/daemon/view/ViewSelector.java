package io.warpdata.daemon.view;

import io.warpdata.daemon.inspect.DuckDb;
import io.warpdata.daemon.inspect.FilterText;
import io.warpdata.daemon.inspect.RowRendering;
import io.warpdata.daemon.publish.StagingFullException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Runs a {@link ViewQuery} over the Parquet files of one table with DuckDB and writes the
 * selected rows as one Parquet file, deterministically: the same files, query and seed give the
 * same rows in the same order and, with the same DuckDB, the same bytes (one thread, ties broken
 * by the rows' positions in the parent).
 *
 * <p>A row's identity is its position in the parent: (file index in the table, row number in
 * the file). Sampling orders rows by {@code md5(seed:file:row)}, which every machine computes
 * alike, and takes the first N. {@code --stratify-by C} splits N evenly over C's values: a
 * stratum with fewer rows than its share gives all it has and the rest is split evenly over the
 * others, and what does not divide evenly goes one row each to the first strata in seeded order
 * ({@code md5(seed:value)}); a fraction takes {@code round(F * size)} rows of each stratum
 * (half up). Then {@code --order-by} (ties in parent order), then {@code --limit}.
 */
public final class ViewSelector implements AutoCloseable {
    /** Columns the selector adds to carry each row's position; a table may not use these names. */
    static final String FILE = "__warp_file";
    static final String ROW = "__warp_row";
    static final String ORD = "__warp_ord";

    private Connection db;

    public ViewSelector() {
    }

    /**
     * A fresh in-memory DuckDB for one selection, that can touch nothing but the table's files
     * and the output's folder: the query's SQL is the user's ({@code --where}, {@code --order-by}),
     * and a view read from a local file ({@code read_csv('/tmp/ids.csv')}) differed from machine to
     * machine. {@code random()} is seeded from the view's seed, so the same command gives the same
     * version (with one thread, rows meet it in the same order).
     */
    private Connection open(List<Path> files, Path out, long seed) throws SQLException {
        close();
        db = DuckDb.connectInUtc();
        try (Statement st = db.createStatement()) {
            // One thread: row groups and their order in the written file never depend on timing.
            st.execute("SET threads = 1");
            st.execute("SET preserve_insertion_order = true");
            java.util.Set<String> dirs = new java.util.TreeSet<>();
            files.forEach(f -> dirs.add(f.toAbsolutePath().getParent() + "/"));
            dirs.add(out.toAbsolutePath().getParent() + "/");
            // DuckDB allows its spill folder too: by default .tmp in the working directory, so it goes
            // beside the output instead (see TableBatches); then no setting can change.
            st.execute("SET temp_directory = " + RowRendering.literal(out.toAbsolutePath().getParent().resolve(".spill").toString()));
            st.execute("SET allowed_directories = [" + String.join(", ", dirs.stream().map(RowRendering::literal).toList()) + "]");
            st.execute("SET enable_external_access = false");
            st.execute("SET lock_configuration = true");
            st.execute("SELECT setseed(" + (Math.floorMod(seed, 1_000_003L) / 1_000_003.0) + ")");
        }
        return db;
    }

    /** A selected row's value of a bound column, with where the row came from (for messages). */
    public record BoundValue(int file, long row, String value) {
    }

    /**
     * What was selected.
     *
     * @param rows  how many rows the view has
     * @param bound for each column asked for, the values of the selected rows, in view order
     */
    public record Selection(long rows, Map<String, List<BoundValue>> bound) {
    }

    /**
     * Selects rows of the table made of {@code files} (in the table's order) and writes them to
     * {@code out}.
     *
     * @param columns      the table's column names (for messages and checks)
     * @param boundColumns columns whose values the caller needs for each selected row
     * @throws ViewException for a query DuckDB refuses, an unknown column, or no rows selected
     */
    public Selection select(List<Path> files, List<String> columns, ViewQuery q, Path out, Set<String> boundColumns) {
        return select(files, files.stream().map(f -> "").toList(), columns, q, out, boundColumns);
    }

    /**
     * As {@link #select(List, List, ViewQuery, Path, Set)}, each file read with more
     * {@code read_parquet} arguments ({@code readArgs}, each "" or starting with a comma): a file
     * in Hive partition folders gets its partition columns from them.
     */
    public Selection select(List<Path> files, List<String> readArgs, List<String> columns, ViewQuery q, Path out,
                            Set<String> boundColumns) {
        for (String c : columns) {
            if (c.equals(FILE) || c.equals(ROW) || c.equals(ORD) || c.equals("file_row_number")) {
                throw new ViewException("Table " + q.table() + " has a column named '" + c
                        + "', which the view selector needs for itself", "Rename the column in the source table.");
            }
        }
        for (String c : boundColumns) {
            requireColumn(q, columns, c, "bound column");
        }
        q.stratifyBy().ifPresent(c -> requireColumn(q, columns, c, "--stratify-by"));
        try (Statement st = open(files, out, q.seed()).createStatement()) {
            st.execute("DROP TABLE IF EXISTS filtered; DROP TABLE IF EXISTS sampled; DROP TABLE IF EXISTS result;"
                    + " DROP TABLE IF EXISTS strata; DROP TABLE IF EXISTS quota");
            st.execute("CREATE OR REPLACE TEMP VIEW src AS " + source(files, readArgs));
            run(st, "CREATE TEMP TABLE filtered AS SELECT * FROM src" + q.where().map(FilterText::clause).orElse(""),
                    "--where", q, columns, out);
            long matching = count(st, "filtered");
            if (matching == 0) {
                throw new ViewException("The view selects no rows: " + (q.where().isPresent()
                        ? "no row of " + q.table() + " matches --where " + q.where().get() : "table " + q.table() + " is empty"),
                        "Loosen the condition; 'warpctl head' shows rows of the table.");
            }
            sample(st, q, columns, matching);
            String order = q.orderBy().map(o -> o + ", ").orElse("") + FILE + ", " + ROW;
            run(st, "CREATE TEMP TABLE result AS SELECT *, row_number() OVER (ORDER BY " + order + ") AS " + ORD
                    + " FROM sampled" + (q.limit().isPresent() ? " QUALIFY " + ORD + " <= " + q.limit().getAsLong() : ""),
                    "--order-by", q, columns, out);
            long rows = count(st, "result");
            Files.deleteIfExists(out);
            st.execute("COPY (SELECT * EXCLUDE (" + FILE + ", " + ROW + ", " + ORD + ") FROM result ORDER BY " + ORD
                    + ") TO " + RowRendering.literal(out.toString()) + " (FORMAT PARQUET)");
            Map<String, List<BoundValue>> bound = new LinkedHashMap<>();
            for (String c : boundColumns) {
                List<BoundValue> values = new ArrayList<>((int) Math.min(rows, Integer.MAX_VALUE));
                try (ResultSet rs = st.executeQuery("SELECT " + FILE + ", " + ROW + ", CAST(" + RowRendering.ident(c)
                        + " AS VARCHAR) FROM result ORDER BY " + ORD)) {
                    while (rs.next()) {
                        values.add(new BoundValue(rs.getInt(1), rs.getLong(2), rs.getString(3)));
                    }
                }
                bound.put(c, values);
            }
            return new Selection(rows, bound);
        } catch (SQLException e) {
            throw noRoom(out, e).orElseGet(() -> new IllegalStateException("DuckDB failed selecting the view's rows: "
                    + e.getMessage(), e));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every file's rows with their position: (file index, row number in the file). */
    private static String source(List<Path> files, List<String> readArgs) {
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < files.size(); i++) {
            parts.add("SELECT * EXCLUDE (file_row_number), " + i + "::INTEGER AS " + FILE + ", file_row_number AS " + ROW
                    + " FROM read_parquet(" + RowRendering.literal(files.get(i).toString()) + readArgs.get(i) + ", file_row_number = true)");
        }
        return String.join(" UNION ALL BY NAME ", parts);
    }

    private void sample(Statement st, ViewQuery q, List<String> columns, long matching) throws SQLException {
        if (q.sample().isEmpty() && q.fraction().isEmpty()) {
            st.execute("CREATE TEMP TABLE sampled AS SELECT * FROM filtered");
            return;
        }
        String key = "md5(" + q.seed() + "::VARCHAR || ':' || " + FILE + " || ':' || " + ROW + ")";
        if (q.stratifyBy().isEmpty()) {
            long n = q.sample().isPresent() ? q.sample().getAsLong() : roundHalfUp(q, matching);
            if (n == 0) {
                throw noRows(q);
            }
            st.execute("CREATE TEMP TABLE sampled AS SELECT * FROM filtered ORDER BY " + key + ", " + FILE + ", " + ROW
                    + " LIMIT " + n);
            return;
        }
        String col = RowRendering.ident(q.stratifyBy().get());
        String stratumKey = "md5(" + q.seed() + "::VARCHAR || ':' || coalesce(CAST(" + col + " AS VARCHAR), '(null)'))";
        st.execute("CREATE TEMP TABLE strata AS SELECT " + col + " AS s, count(*) AS n, row_number() OVER (ORDER BY "
                + stratumKey + ", CAST(" + col + " AS VARCHAR)) - 1 AS idx FROM filtered GROUP BY " + col);
        List<long[]> sizes = new ArrayList<>();
        try (ResultSet rs = st.executeQuery("SELECT idx, n FROM strata ORDER BY idx")) {
            while (rs.next()) {
                sizes.add(new long[] {rs.getLong(1), rs.getLong(2)});
            }
        }
        long[] quotas = q.sample().isPresent()
                ? quotas(q.sample().getAsLong(), sizes.stream().mapToLong(s -> s[1]).toArray())
                : sizes.stream().mapToLong(s -> roundHalfUp(q, s[1])).toArray();
        if (java.util.Arrays.stream(quotas).sum() == 0) {
            throw noRows(q);
        }
        st.execute("CREATE TEMP TABLE quota (idx BIGINT, q BIGINT)");
        try (PreparedStatement ps = db.prepareStatement("INSERT INTO quota VALUES (?, ?)")) {
            for (int i = 0; i < quotas.length; i++) {
                ps.setLong(1, i);
                ps.setLong(2, quotas[i]);
                ps.addBatch();
            }
            ps.executeBatch();
        }
        st.execute("CREATE TEMP TABLE sampled AS SELECT * EXCLUDE (__warp_idx, __warp_rank) FROM ("
                + " SELECT f.*, st.idx AS __warp_idx, row_number() OVER (PARTITION BY st.idx ORDER BY " + key
                + ", " + FILE + ", " + ROW + ") AS __warp_rank"
                + " FROM filtered f JOIN strata st ON f." + col + " IS NOT DISTINCT FROM st.s) t"
                + " WHERE __warp_rank <= (SELECT q FROM quota WHERE quota.idx = t.__warp_idx)");
    }

    /**
     * Splits {@code total} rows over strata of {@code sizes} (in seeded order): evenly, a stratum
     * smaller than its share giving all it has and the rest split over the others, the remainder
     * one row each to the first strata.
     */
    static long[] quotas(long total, long[] sizes) {
        long[] quota = new long[sizes.length];
        long remaining = Math.min(total, java.util.Arrays.stream(sizes).sum());
        List<Integer> active = new ArrayList<>();
        for (int i = 0; i < sizes.length; i++) {
            active.add(i);
        }
        while (remaining > 0 && !active.isEmpty()) {
            long share = remaining / active.size();
            List<Integer> small = active.stream().filter(i -> sizes[i] <= share).toList();
            if (!small.isEmpty()) {
                for (int i : small) {
                    quota[i] = sizes[i];
                    remaining -= sizes[i];
                }
                active.removeAll(small);
                continue;
            }
            long extra = remaining % active.size();
            active.sort(Comparator.naturalOrder());
            for (int k = 0; k < active.size(); k++) {
                quota[active.get(k)] = share + (k < extra ? 1 : 0);
            }
            remaining = 0;
        }
        return quota;
    }

    private static long roundHalfUp(ViewQuery q, long n) {
        return q.fraction().orElseThrow().multiply(java.math.BigDecimal.valueOf(n))
                .setScale(0, java.math.RoundingMode.HALF_UP).longValueExact();
    }

    private static ViewException noRows(ViewQuery q) {
        return new ViewException("The view selects no rows: the sample of table " + q.table() + " is empty",
                "Give a larger --sample or --fraction.");
    }

    private static void requireColumn(ViewQuery q, List<String> columns, String c, String what) {
        if (!columns.contains(c)) {
            throw new ViewException(what + " '" + c + "' is not a column of table " + q.table(),
                    "Use one of its columns: " + String.join(", ", columns) + ".");
        }
    }

    /**
     * A full staging disk (DuckDB spills beside the output, in a folder of the staging folder) as
     * {@link StagingFullException}, not as the SQL's fault: "Fix the SQL" was the advice for a
     * view whose sort filled the disk.
     */
    private static java.util.Optional<RuntimeException> noRoom(Path out, SQLException e) {
        String msg = String.valueOf(e.getMessage()).lines().findFirst().orElse("");
        return DuckDb.spillDiskFull(msg) ? java.util.Optional.of(new StagingFullException("selecting the view's rows",
                out.toAbsolutePath().getParent().getParent(), new IOException(msg, e))) : java.util.Optional.empty();
    }

    /** Runs user SQL: DuckDB's refusal becomes a ViewException naming the option and the table's columns. */
    private static void run(Statement st, String sql, String option, ViewQuery q, List<String> columns, Path out) {
        try {
            st.execute(sql);
        } catch (SQLException e) {
            noRoom(out, e).ifPresent(r -> {
                throw r;
            });
            String msg = String.valueOf(e.getMessage()).lines().findFirst().orElse("");
            if (option.equals("--where")) {
                // The filter is placed in parentheses: "near ')'" of one that stops short is ours (audit 33).
                msg = io.warpdata.daemon.inspect.TableBatches.BadFilterException.inUsersWords(q.where().orElse(""), msg);
            }
            throw new ViewException("DuckDB refused the view's " + option + ": " + msg,
                    "Fix the SQL; table " + q.table() + " has the columns " + String.join(", ", columns) + ".", e);
        }
    }

    private static long count(Statement st, String table) throws SQLException {
        try (ResultSet rs = st.executeQuery("SELECT count(*) FROM " + table)) {
            rs.next();
            return rs.getLong(1);
        }
    }


    @Override
    public void close() {
        if (db == null) {
            return;
        }
        try {
            db.close();
        } catch (SQLException e) {
            // Closing an in-memory database frees memory only.
        }
    }
}
