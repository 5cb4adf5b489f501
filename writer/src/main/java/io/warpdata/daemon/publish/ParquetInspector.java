package io.warpdata.daemon.publish;

import io.warpdata.daemon.inspect.DuckDb;
import io.warpdata.manifest.Column;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a Parquet file's footer with DuckDB (an in-memory connection): row count and schema. No
 * row data is read.
 */
public final class ParquetInspector implements AutoCloseable {
    private final Connection connection;

    public ParquetInspector() {
        try {
            this.connection = DuckDb.connect();
        } catch (SQLException e) {
            throw new IllegalStateException("cannot start an in-memory DuckDB: " + e.getMessage(), e);
        }
    }

    /** What the footer says. */
    public record ParquetInfo(long rowCount, List<Column> schema) {
        public ParquetInfo {
            schema = List.copyOf(schema);
        }
    }

    /**
     * Row count and schema of {@code file}: its own columns, without any a Hive partition folder
     * in its path would add ({@link #partitionedSchema} types those over a whole table).
     *
     * @throws InvalidInputException if the file is missing or is not a Parquet file
     */
    public ParquetInfo inspect(Path file) {
        if (!Files.isRegularFile(file)) {
            throw new InvalidInputException("Table file " + file + " does not exist or is not a regular file",
                    "Check the path given to --table; globs are expanded by warpctl, quote them.");
        }
        String literal = sqlString(file.toAbsolutePath().toString());
        try (Statement st = connection.createStatement()) {
            long rows;
            try (ResultSet rs = st.executeQuery("SELECT num_rows FROM parquet_file_metadata(" + literal + ")")) {
                rs.next();
                rows = rs.getLong(1);
            }
            List<Column> schema = new ArrayList<>();
            try (ResultSet rs = st.executeQuery("DESCRIBE SELECT * FROM read_parquet(" + literal
                    + ", hive_partitioning = false)")) {
                while (rs.next()) {
                    schema.add(new Column(rs.getString("column_name"), rs.getString("column_type")));
                }
            }
            return new ParquetInfo(rows, schema);
        } catch (SQLException e) {
            throw new InvalidInputException("Table file " + file + " is not a readable Parquet file ("
                    + firstLine(e.getMessage()) + ")",
                    "Pass only Parquet files to --table; convert other formats first, e.g. with DuckDB:"
                            + " COPY (SELECT * FROM read_csv('data.csv')) TO 'data.parquet' (FORMAT PARQUET).", e);
        }
    }

    /**
     * The schema of a table whose files lie in Hive partition folders ({@code hour=07/}): the
     * files' own columns, then one per partition key, typed as DuckDB types it reading the whole
     * table ({@code hour=00} and {@code hour=10} make VARCHAR, as would {@code k=abc} beside
     * {@code k=1}; {@code __HIVE_DEFAULT_PARTITION__} is NULL and types nothing), not per folder.
     * The files are linked into a temp folder under their partition folders only, so folders above
     * the table's own (e.g. {@code /data/run=3/table/}) add no column, as in the mount.
     *
     * @param files each file, and the partition folder it lies in (relative, maybe "")
     * @throws InvalidInputException if DuckDB cannot read them together
     */
    public List<Column> partitionedSchema(List<Path> files, List<String> dirs) {
        Path root;
        try {
            root = Files.createTempDirectory("warp-partitions-");
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("cannot create a temp folder to type the partition columns", e);
        }
        try {
            List<String> literals = new ArrayList<>();
            for (int i = 0; i < files.size(); i++) {
                // Numbered: two of a table's files may be links to files of one name (blobs).
                Path link = root.resolve(dirs.get(i)).resolve("part-" + i + ".parquet");
                Files.createDirectories(link.getParent());
                Files.createSymbolicLink(link, files.get(i).toAbsolutePath());
                literals.add(sqlString(link.toString()));
            }
            List<Column> schema = new ArrayList<>();
            try (Statement st = connection.createStatement();
                 ResultSet rs = st.executeQuery("DESCRIBE SELECT * FROM read_parquet([" + String.join(", ", literals)
                         + "], hive_partitioning = true)")) {
                while (rs.next()) {
                    schema.add(new Column(rs.getString("column_name"), rs.getString("column_type")));
                }
            }
            return schema;
        } catch (SQLException e) {
            throw new InvalidInputException("The table's partition folders cannot be read together ("
                    + firstLine(e.getMessage()) + ")", "Check that every folder is named KEY=VALUE.", e);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("cannot link the table's files to type its partition columns", e);
        } finally {
            deleteTree(root);
        }
    }

    private static void deleteTree(Path root) {
        try (java.util.stream.Stream<Path> s = Files.walk(root)) {
            for (Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (java.io.IOException e) {
            // A temp folder of links left behind holds no data.
        }
    }

    /** Receives a column's values, row by row. */
    @FunctionalInterface
    public interface ValueSink {
        /**
         * @param row   the row's number in its file, from 0
         * @param value the value as text, or null
         */
        void accept(long row, String value);
    }

    /**
     * Every value of {@code column} in {@code file}, as text, in row order.
     *
     * @throws InvalidInputException if the file cannot be read
     */
    public void forEachValue(Path file, String column, ValueSink sink) {
        String literal = sqlString(file.toAbsolutePath().toString());
        String sql = "SELECT file_row_number, CAST(\"" + column.replace("\"", "\"\"") + "\" AS VARCHAR) FROM read_parquet("
                + literal + ", file_row_number = true) ORDER BY file_row_number";
        try (Statement st = connection.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            while (rs.next()) {
                sink.accept(rs.getLong(1), rs.getString(2));
            }
        } catch (SQLException e) {
            throw new InvalidInputException("Column " + column + " of table file " + file + " cannot be read ("
                    + firstLine(e.getMessage()) + ")", "Check that the file is a readable Parquet file.", e);
        }
    }

    static String sqlString(String s) {
        return "'" + s.replace("'", "''") + "'";
    }

    static String firstLine(String s) {
        if (s == null) {
            return "unknown error";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    @Override
    public void close() {
        try {
            connection.close();
        } catch (SQLException e) {
            // Closing an in-memory database cannot lose anything.
        }
    }
}
