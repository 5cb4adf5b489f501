package io.warpdata.daemon.publish;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Random;

/** Test inputs: Parquet files written by DuckDB, directory trees of seeded random files. */
public final class TestData {
    private TestData() {
    }

    /** A DuckDB-written Parquet file: id BIGINT, path VARCHAR ('img/NNNNN.png'), label INTEGER, note VARCHAR. */
    public static Path parquet(Path file, int rows, int rowGroupSize) throws IOException {
        Files.createDirectories(file.getParent());
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:");
             Statement st = c.createStatement()) {
            st.execute("COPY (SELECT i::BIGINT AS id, 'img/' || lpad(i::VARCHAR, 5, '0') || '.png' AS path,"
                    + " (i % 10)::INTEGER AS label, md5(i::VARCHAR) || md5((i * 7)::VARCHAR) AS note"
                    + " FROM range(" + rows + ") t(i) ORDER BY i) TO '" + file.toAbsolutePath()
                    + "' (FORMAT PARQUET, ROW_GROUP_SIZE " + rowGroupSize + ")");
        } catch (SQLException e) {
            throw new IOException(e);
        }
        return file;
    }

    /** {@code count} files of seeded random bytes (sizes in [min, max)), spread over sub-directories. */
    public static Path tree(Path dir, int count, int minSize, int maxSize, long seed) throws IOException {
        Random r = new Random(seed);
        for (int i = 0; i < count; i++) {
            Path f = dir.resolve(String.format("d%02d/f%05d.bin", i % 37, i));
            Files.createDirectories(f.getParent());
            byte[] b = new byte[minSize + r.nextInt(maxSize - minSize)];
            r.nextBytes(b);
            Files.write(f, b);
        }
        return dir;
    }

    /**
     * {@code count} files of seeded random bytes named as {@link #parquet}'s {@code path} column
     * names rows 0 to count - 1 ({@code img/00000.png} ...), so that a binding of that column holds.
     */
    public static Path boundFiles(Path dir, int count, int minSize, int maxSize, long seed) throws IOException {
        Random r = new Random(seed);
        for (int i = 0; i < count; i++) {
            Path f = dir.resolve(String.format("img/%05d.png", i));
            Files.createDirectories(f.getParent());
            byte[] b = new byte[minSize + r.nextInt(maxSize - minSize)];
            r.nextBytes(b);
            Files.write(f, b);
        }
        return dir;
    }
}
