package io.warpdata.daemon.demo;

import io.warpdata.daemon.inspect.DuckDb;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * A tiny DuckDB runner for the demo (the DuckDB CLI is not installed, its JDBC driver is in the
 * jar): runs each argument as a query in an in-memory database and prints the rows as a table.
 *
 * <p>Usage: {@code java -cp warp.jar io.warpdata.daemon.demo.Sql "SELECT ... FROM read_parquet('...')"}
 */
public final class Sql {
    /** Rows printed at most per query: the demo shows results, not dumps. */
    public static final int MAX_ROWS = 100;

    private Sql() {
    }

    /**
     * Runs {@code query} and prints its result to {@code out} as an aligned text table.
     *
     * @throws SQLException when DuckDB rejects or fails the query
     */
    public static void run(String query, PrintStream out) throws SQLException {
        try (Connection db = DuckDb.connect();
             Statement st = db.createStatement()) {
            if (!st.execute(query)) {
                out.println("ok (" + st.getUpdateCount() + " rows changed)");
                return;
            }
            try (ResultSet rs = st.getResultSet()) {
                ResultSetMetaData meta = rs.getMetaData();
                List<String> header = new ArrayList<>();
                for (int c = 1; c <= meta.getColumnCount(); c++) {
                    header.add(meta.getColumnLabel(c));
                }
                List<List<String>> rows = new ArrayList<>();
                int total = 0;
                while (rs.next()) {
                    total++;
                    if (rows.size() < MAX_ROWS) {
                        List<String> row = new ArrayList<>();
                        for (int c = 1; c <= header.size(); c++) {
                            Object value = rs.getObject(c);
                            row.add(value == null ? "NULL" : value.toString());
                        }
                        rows.add(row);
                    }
                }
                out.print(render(header, rows));
                out.println(total == 1 ? "(1 row)" : total > rows.size()
                        ? "(" + total + " rows, first " + rows.size() + " shown)" : "(" + total + " rows)");
            }
        }
    }

    /** Renders rows under a header, columns padded to their widest cell. */
    public static String render(List<String> header, List<List<String>> rows) {
        int[] width = new int[header.size()];
        for (int c = 0; c < width.length; c++) {
            width[c] = header.get(c).length();
            for (List<String> row : rows) {
                width[c] = Math.max(width[c], row.get(c).length());
            }
        }
        StringBuilder sb = new StringBuilder();
        appendRow(sb, header, width);
        for (int c = 0; c < width.length; c++) {
            sb.append(c == 0 ? "" : "-+-").append("-".repeat(width[c]));
        }
        sb.append('\n');
        rows.forEach(row -> appendRow(sb, row, width));
        return sb.toString();
    }

    private static void appendRow(StringBuilder sb, List<String> cells, int[] width) {
        StringBuilder line = new StringBuilder();
        for (int c = 0; c < width.length; c++) {
            line.append(c == 0 ? "" : " | ").append(cells.get(c));
            line.append(" ".repeat(width[c] - cells.get(c).length()));
        }
        sb.append(line.toString().stripTrailing()).append('\n');
    }

    public static void main(String[] args) {
        if (args.length == 0) {
            System.err.println("usage: java -cp warp.jar " + Sql.class.getName() + " \"<query>\" [\"<query>\" ...]");
            System.exit(2);
        }
        for (String query : args) {
            try {
                run(query, System.out);
            } catch (SQLException e) {
                System.err.println("error: DuckDB could not run the query: " + e.getMessage());
                System.exit(1);
            }
        }
    }
}
