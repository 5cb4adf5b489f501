import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * DuckDB helper for scripts/bench: writes the benchmark's Parquet data and times queries.
 *
 * <pre>
 * BenchSql big OUT.parquet BYTES              incompressible Parquet file of about BYTES bytes
 * BenchSql table DIR SHARDS ROWS_PER_SHARD    typed table as DIR/part-NNNNN.parquet
 * BenchSql serve                              reads "QUERY_NAME GLOB" lines on stdin, answers
 *                                             one JSON line each: seconds and the result
 * </pre>
 *
 * Data is a pure function of the row number (hash(i)), so every run writes the same bytes.
 * Each query runs on a fresh in-memory connection so DuckDB carries nothing between runs;
 * the one JVM is kept for the whole bench so JVM start-up is never part of a timing.
 */
public final class BenchSql {
  private BenchSql() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 0) {
      throw new IllegalArgumentException("usage: BenchSql big|table|serve ...");
    }
    switch (args[0]) {
      case "big" -> writeBig(args[1], Long.parseLong(args[2]));
      case "table" -> writeTable(args[1], Integer.parseInt(args[2]), Long.parseLong(args[3]));
      case "serve" -> serve();
      default -> throw new IllegalArgumentException("unknown command " + args[0]);
    }
  }

  private static Connection open() throws SQLException {
    Connection c = DriverManager.getConnection("jdbc:duckdb:");
    try (Statement s = c.createStatement()) {
      s.execute("SET threads = 2");
    }
    return c;
  }

  private static String quote(String s) {
    return "'" + s.replace("'", "''") + "'";
  }

  private static void writeBig(String out, long bytes) throws SQLException {
    // 4 random 64-bit columns, uncompressed: 32 bytes a row, dictionary encoding cannot help.
    long rows = bytes / 32;
    try (Connection c = open(); Statement s = c.createStatement()) {
      s.execute("COPY (SELECT hash(i) AS a, hash(i + 1099511627776) AS b, hash(i + 2199023255552) AS c,"
          + " hash(i + 3298534883328) AS d FROM range(" + rows + ") t(i)) TO " + quote(out)
          + " (FORMAT parquet, COMPRESSION uncompressed, ROW_GROUP_SIZE 1048576)");
    }
  }

  private static void writeTable(String dir, int shards, long rowsPerShard) throws SQLException {
    try (Connection c = open(); Statement s = c.createStatement()) {
      for (int k = 0; k < shards; k++) {
        long start = k * rowsPerShard;
        long end = start + rowsPerShard;
        String file = String.format("%s/part-%05d.parquet", dir, k);
        s.execute("COPY (SELECT i AS id,"
            + " TIMESTAMP '2024-01-01 00:00:00' + to_seconds(i::BIGINT) AS ts,"
            + " 'cat_' || (hash(i) % 50)::VARCHAR AS category,"
            + " (hash(i * 7 + 1) % 1000000)::DOUBLE / 10000.0 AS value,"
            + " (hash(i * 13 + 2) % 100)::INTEGER AS qty,"
            + " hash(i * 17 + 3) % 2 = 0 AS flag,"
            + " md5(i::VARCHAR) AS note"
            + " FROM range(" + start + ", " + end + ") t(i)) TO " + quote(file)
            + " (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE 122880)");
      }
    }
  }

  private static String sql(String name, String glob) {
    String src = "read_parquet(" + quote(glob) + ")";
    return switch (name) {
      case "count" -> "SELECT count(*) FROM " + src;
      case "filter" -> "SELECT round(sum(value), 3), round(avg(qty), 6), count(*) FROM " + src
          + " WHERE category = 'cat_7' AND flag";
      case "groupby" -> "SELECT category, count(*), round(avg(value), 6), max(ts) FROM " + src
          + " GROUP BY category ORDER BY category";
      default -> throw new IllegalArgumentException("unknown query " + name);
    };
  }

  private static void serve() throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    System.out.println("{\"ready\":true}");
    System.out.flush();
    String line;
    while ((line = in.readLine()) != null) {
      line = line.strip();
      if (line.isEmpty()) {
        continue;
      }
      int sp = line.indexOf(' ');
      String name = line.substring(0, sp);
      String glob = line.substring(sp + 1);
      try {
        long t0 = System.nanoTime();
        StringBuilder result = new StringBuilder();
        try (Connection c = open(); Statement s = c.createStatement();
            ResultSet rs = s.executeQuery(sql(name, glob))) {
          ResultSetMetaData md = rs.getMetaData();
          while (rs.next()) {
            for (int i = 1; i <= md.getColumnCount(); i++) {
              result.append(rs.getString(i)).append(i < md.getColumnCount() ? "," : ";");
            }
          }
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        // The result goes back as a short digest: enough to compare systems, small to print.
        System.out.println("{\"seconds\":" + secs + ",\"result\":\"" + digest(result.toString()) + "\"}");
      } catch (Exception e) {
        String msg = String.valueOf(e.getMessage()).replace("\\", "/").replace("\"", "'").replace('\n', ' ');
        System.out.println("{\"error\":\"" + msg + "\"}");
      }
      System.out.flush();
    }
  }

  private static String digest(String s) throws Exception {
    byte[] h = java.security.MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
    return java.util.HexFormat.of().formatHex(h, 0, 8);
  }
}
