package io.warpdata.daemon.publish;

import io.warpdata.manifest.Column;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
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
            this.connection = DriverManager.getConnection("jdbc:duckdb:");
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
     * Row count and schema of {@code file}.
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
            try (ResultSet rs = st.executeQuery("DESCRIBE SELECT * FROM read_parquet(" + literal + ")")) {
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

    private static String firstLine(String s) {
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
