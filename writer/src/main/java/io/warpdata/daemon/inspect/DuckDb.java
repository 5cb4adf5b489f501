package io.warpdata.daemon.inspect;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where warpd and warpctl open DuckDB: an in-memory connection, with the driver's native library
 * copy deleted as soon as it is loaded.
 *
 * <p>The JDBC driver copies its 72 MB native library to {@code java.io.tmpdir}
 * ({@code libduckdb_java<random>.so}) and loads it from there, deleting the copy only when the
 * JVM exits normally. A warpd killed ({@code SIGKILL}, the OOM killer, a crash) left one copy in
 * {@code /tmp} per start, often a tmpfs: memory. Once loaded, the library lives in the process's
 * mapping, so the file can go at once; this removes the copy the process itself has mapped and
 * nothing else (another JVM's copy may be between written and loaded).
 */
public final class DuckDb {
    private static final Logger LOG = LoggerFactory.getLogger(DuckDb.class);
    private static final String COPY_PREFIX = "libduckdb_java";

    private DuckDb() {
    }

    /** A new in-memory DuckDB connection. */
    public static Connection connect() throws SQLException {
        Connection c = DriverManager.getConnection("jdbc:duckdb:");
        Loaded.once();
        return c;
    }

    /**
     * As {@link #connect}, its session's time zone UTC, not the zone of whoever runs the query:
     * what Warp selects or renders from a TIMESTAMPTZ (a view's {@code ts::DATE} filter, the rows
     * stream, head and warpd's batches write) is then the same on every machine (audit 28:
     * {@code TZ=Pacific/Kiritimati} made another version of the same view).
     */
    public static Connection connectInUtc() throws SQLException {
        Connection c = connect();
        try (java.sql.Statement st = c.createStatement()) {
            st.execute("SET TimeZone = 'UTC'");
        } catch (SQLException e) {
            c.close();
            throw e;
        }
        return c;
    }

    /**
     * Whether DuckDB's message says its spill folder's disk is full: the OS's words, or, once its
     * spill reaches {@code max_temp_directory_size} (by default 90% of the disk's free space),
     * "Out of Memory Error: failed to offload data block" (audit 44; a test on a 1 MiB tmpfs).
     */
    public static boolean spillDiskFull(String message) {
        String m = String.valueOf(message);
        // DuckDB's own classes only: a Conversion Error can quote the user's text, 'failed to
        // offload' included (the review); an appender's failure starts "Failed to append".
        boolean ours = m.startsWith("IO Error") || m.startsWith("Out of Memory Error") || m.startsWith("Failed to append")
                || m.startsWith("java.io.IOException");
        return ours && (m.contains("No space left") || m.contains("Disk quota") || m.contains("failed to offload")
                || m.contains("max_temp_directory_size"));
    }

    /**
     * Makes {@code c}'s results streamed and returns it: rows are computed as the reader takes
     * them, at most about 1 MiB ahead. The driver's default for an in-memory URL computes a whole
     * result before its first row, in native memory outside the heap and DuckDB's memory limit: a
     * 20M-row shard read by one table stream took 160 MB, and 72 slow DataLoader workers streaming
     * 2M-row shards made warpd 1.2 GB larger. The allocator's background threads give back within
     * seconds what finished queries held (it was kept after the streams ended). One query at a
     * time: a new query on the connection closes a streamed result still open.
     */
    public static Connection streamResults(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("SET jdbc_stream_results = true");
            st.execute("SET streaming_buffer_size = '1MB'");
            st.execute("SET allocator_background_threads = true");
        }
        return c;
    }

    /** Runs once, after the first connection has loaded the library (the JVM's lazy class init). */
    private static final class Loaded {
        static {
            if (!deleteMappedCopies(Path.of("/proc/self/maps"), Path.of(System.getProperty("java.io.tmpdir")))) {
                LOG.debug("DuckDB's native library copy was not found in this process's mappings");
            }
        }

        static void once() {
            // Loading this class did the work.
        }
    }

    /**
     * Deletes the DuckDB library copies in {@code tmpDir} that {@code maps} (a
     * {@code /proc/PID/maps}) shows mapped.
     *
     * @return whether one was found (and deleted, or already gone)
     */
    static boolean deleteMappedCopies(Path maps, Path tmpDir) {
        List<String> lines;
        try {
            lines = Files.readAllLines(maps);
        } catch (IOException e) {
            return false; // not Linux: the driver's deleteOnExit is all there is
        }
        Path dir = tmpDir.toAbsolutePath().normalize();
        boolean found = false;
        for (String line : lines) {
            int slash = line.indexOf('/');
            if (slash < 0 || line.endsWith(" (deleted)")) {
                continue;
            }
            Path file = Path.of(line.substring(slash));
            String name = file.getFileName().toString();
            if (!name.startsWith(COPY_PREFIX) || !name.endsWith(".so") || !dir.equals(file.getParent())) {
                continue;
            }
            found = true;
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                LOG.info("could not delete DuckDB's native library copy {} ({}); it goes when warpd exits normally",
                        file, e.toString());
            }
        }
        return found;
    }
}
