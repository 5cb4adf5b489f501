package io.warpdata.daemon.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warpdata.daemon.control.ControlException;
import io.warpdata.daemon.control.ControlProtocol;

import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Base64;
import java.util.List;
import java.util.zip.GZIPOutputStream;

/**
 * The rows file of {@code warpctl init}: a table's rows as gzipped JSON lines, read with DuckDB
 * from the Parquet shards in the mount, for Pythons that have no Parquet reader (Debian's). Values
 * become JSON: numbers, strings, booleans and nulls as they are, BLOBs as base64, anything else
 * (timestamps, lists, structs) as its text form.
 */
public final class RowsFile {
    private RowsFile() {
    }

    /**
     * Writes the rows of {@code shards}, in order, to {@code out} (atomically).
     *
     * @return the number of rows written
     * @throws ControlException naming the shard if it cannot be read
     */
    public static long write(List<Path> shards, Path out) {
        Path tmp = out.resolveSibling(out.getFileName() + ".tmp");
        long rows = 0;
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:");
             OutputStream file = Files.newOutputStream(tmp);
             Writer w = new OutputStreamWriter(new GZIPOutputStream(file), StandardCharsets.UTF_8)) {
            try (Statement st = c.createStatement()) {
                // One thread keeps each file's row order, so these rows match what duckdb/pyarrow read.
                st.execute("SET threads TO 1");
            }
            for (Path shard : shards) {
                try (PreparedStatement ps = c.prepareStatement("SELECT * FROM read_parquet(?)")) {
                    ps.setString(1, shard.toString());
                    try (ResultSet rs = ps.executeQuery()) {
                        ResultSetMetaData md = rs.getMetaData();
                        while (rs.next()) {
                            ObjectNode row = ControlProtocol.object();
                            for (int i = 1; i <= md.getColumnCount(); i++) {
                                put(row, md.getColumnLabel(i), rs.getObject(i));
                            }
                            w.write(ControlProtocol.json().writeValueAsString(row));
                            w.write('\n');
                            rows++;
                        }
                    }
                } catch (SQLException e) {
                    throw new ControlException("ParquetReadError", "cannot read " + shard + " with DuckDB: " + e.getMessage(),
                            "check that the mount is up (ls " + shard.getParent() + ") and warpd is healthy (warpctl status)", e);
                }
            }
        } catch (IOException | SQLException e) {
            throw new ControlException("RowsFileError", "cannot write the rows file " + out + ": " + e.getMessage(),
                    "pass -o to a writable place, or --rows none", e);
        }
        try {
            Files.move(tmp, out, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new ControlException("RowsFileError", "cannot write the rows file " + out + ": " + e.getMessage(),
                    "pass -o to a writable place, or --rows none", e);
        }
        return rows;
    }

    private static void put(ObjectNode row, String name, Object v) {
        if (v == null) {
            row.putNull(name);
        } else if (v instanceof Boolean b) {
            row.put(name, b);
        } else if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte) {
            row.put(name, ((Number) v).longValue());
        } else if (v instanceof Float || v instanceof Double) {
            row.put(name, ((Number) v).doubleValue());
        } else if (v instanceof BigDecimal d) {
            row.put(name, d);
        } else if (v instanceof BigInteger i) {
            row.put(name, i);
        } else if (v instanceof byte[] bytes) {
            row.put(name, Base64.getEncoder().encodeToString(bytes));
        } else if (v instanceof java.sql.Blob blob) {
            try {
                row.put(name, Base64.getEncoder().encodeToString(blob.getBytes(1, (int) blob.length())));
            } catch (SQLException e) {
                row.put(name, blob.toString());
            }
        } else {
            row.put(name, v.toString());
        }
    }
}
