package io.warpdata.daemon.publish;

import io.warpdata.daemon.inspect.DuckDb;
import io.warpdata.daemon.inspect.RowRendering;
import io.warpdata.manifest.Printable;
import io.warpdata.manifest.formats.SafetensorsHeader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.duckdb.DuckDBAppender;
import org.duckdb.DuckDBConnection;

/**
 * Checks a safetensors dataset's {@code _tensor_index.parquet} (seed 001, section 3.6: one row a
 * tensor, {@code tensor_key}, {@code file_name}, {@code shape}, {@code dtype}) against the files'
 * headers, before it is published as the table {@code NAME_tensor_index}.
 *
 * <p>A reader finds a key's file through this index (seed 001's predicate pushdown passes only
 * the file it names), so a row that names a tensor its file does not hold, or another dtype or
 * shape than the header's, sends a query to the wrong file or to none: those are refused. A
 * tensor the index leaves out is only noted: a reader of the index will not find it, but the files
 * hold it and the mount shows it.
 *
 * <p>The headers' tensors are appended to an in-memory DuckDB table, one file at a time, and
 * compared with the index in SQL: the heap holds no more than one header, and DuckDB spills past
 * {@link #MEMORY_LIMIT} to a folder of its own in the publish's staging folder (not a tmpfs
 * {@code /tmp}; a killed publish's goes with its staging folder), removed on {@link #close}.
 *
 * <p>The index may be a file or, as Spark writes a Parquet "file", a folder of them.
 */
final class TensorIndexCheck implements AutoCloseable {
    static final String FILE = "_tensor_index.parquet";
    private static final String MEMORY_LIMIT = "256MB";
    private static final List<String> COLUMNS = List.of("tensor_key", "file_name", "shape", "dtype");
    static final String FIX = "Write _tensor_index.parquet again from the files (seed 001's writer:"
            + " generate_index=true), or remove it: the files publish and read without it.";

    private final String where;
    private final String memoryLimit;
    private final Path index;
    private final Path spill;
    private final Connection connection;
    private final DuckDBAppender headers;
    /** The index's Parquet files ({@link #source}), listed once. */
    private List<String> parts;
    /** Whether they lie in partition folders ({@code dtype=F32/}). */
    private boolean partitioned;

    private TensorIndexCheck(String artifact, Path index, Path spillParent, String memoryLimit) throws SQLException, IOException {
        this.where = "Artifact '" + artifact + "': " + index;
        this.memoryLimit = memoryLimit;
        this.index = index;
        this.spill = Files.createTempDirectory(Files.createDirectories(spillParent), "warp-tensor-index");
        Connection c = null;
        try {
            c = DuckDb.connect();
            try (Statement st = c.createStatement()) {
                st.execute("SET memory_limit = '" + memoryLimit + "'");
                st.execute("SET temp_directory = " + RowRendering.literal(spill.resolve("spill").toString()));
                st.execute("CREATE TABLE h (file VARCHAR, tensor_key VARCHAR, dtype VARCHAR, shape VARCHAR)");
            }
            this.headers = c.unwrap(DuckDBConnection.class).createAppender(DuckDBConnection.DEFAULT_SCHEMA, "h");
            this.connection = c;
        } catch (SQLException | RuntimeException e) {
            if (c != null) {
                c.close();
            }
            Staging.delete(spill);
            throw e;
        }
    }

    /** Whether {@code dir} has an index: a file, or a folder (Spark's). */
    static boolean has(Path dir) {
        Path index = dir.resolve(FILE);
        return Files.isRegularFile(index) || Files.isDirectory(index);
    }

    /** A check of {@code dir}'s index, spilling below {@code spillParent}, or null when it has none. */
    static TensorIndexCheck of(String artifact, Path dir, Path spillParent) {
        return of(artifact, dir, spillParent, MEMORY_LIMIT);
    }

    /** As {@link #of(String, Path, Path)}, DuckDB given {@code memoryLimit} (a test's, to make it spill). */
    static TensorIndexCheck of(String artifact, Path dir, Path spillParent, String memoryLimit) {
        if (!has(dir)) {
            return null;
        }
        Path index = dir.resolve(FILE);
        try {
            return new TensorIndexCheck(artifact, index, spillParent, memoryLimit);
        } catch (IOException e) {
            throw StagingFullException.of("checking " + index, spillParent, e);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot start an in-memory DuckDB to check " + index + ": " + e.getMessage(), e);
        }
    }

    /** Adds the tensors of {@code file} (the folder's spelling of it) as its header has them. */
    void add(String file, SafetensorsHeader header) {
        try {
            for (SafetensorsHeader.Tensor t : header.tensors()) {
                headers.beginRow().append(file).append(t.name()).append(t.dtype().name()).append(shape(t.shape())).endRow();
            }
        } catch (SQLException e) {
            RuntimeException room = noRoom(e);
            throw room != null ? room
                    : new IllegalStateException("cannot keep the tensors of " + file + " to check " + index + ": " + e.getMessage(), e);
        }
    }

    /**
     * Compares the index with every header added.
     *
     * @param files the dataset's files, as {@link #add} spelled them
     * @return notes for the publish's output (tensors the index leaves out)
     * @throws InvalidInputException for an index that is not Parquet, lacks a column, names a
     *         file that is not the dataset's, or has a row that disagrees with a header
     */
    List<String> finish(Set<String> files) {
        try {
            // close() would drop a failed flush's error, and with it the last rows (the review).
            headers.flush();
            headers.close();
            try (Statement st = connection.createStatement()) {
                columns(st);
                st.execute("CREATE TABLE names (file_name VARCHAR, file VARCHAR)");
                // Every spelling, to the first that is not the dataset's: a limit let one past it
                // drop out of the comparison unchecked (the review).
                List<String[]> spellings = new ArrayList<>();
                try (ResultSet rs = st.executeQuery("SELECT DISTINCT file_name FROM " + source()
                        + " WHERE file_name IS NOT NULL ORDER BY 1")) {
                    while (rs.next()) {
                        String name = rs.getString(1);
                        String file = normalized(name);
                        if (!files.contains(file)) {
                            throw refused("has a row whose file_name is " + SafetensorsDataset.quoted(name)
                                    + ", which is not a file of the dataset's manifest (" + listed(files) + ")");
                        }
                        spellings.add(new String[] {name, file});
                    }
                }
                // Appended, not inserted one statement each: 200,000 spellings took 85 s (audit 44).
                try (DuckDBAppender names = connection.unwrap(DuckDBConnection.class)
                        .createAppender(DuckDBConnection.DEFAULT_SCHEMA, "names")) {
                    for (String[] n : spellings) {
                        names.beginRow().append(n[0]).append(n[1]).endRow();
                    }
                    names.flush();
                }
                long nulls = count(st, "SELECT count(*) FROM " + source() + " WHERE file_name IS NULL OR tensor_key IS NULL");
                if (nulls > 0) {
                    throw refused("has " + rows(nulls) + " without a file_name or tensor_key");
                }
                st.execute("CREATE TEMP TABLE i AS SELECT n.file, x.tensor_key, upper(x.dtype) AS dtype,"
                        + " array_to_string(x.shape, 'x') AS shape, (x.shape IS NULL OR list_count(x.shape) <> len(x.shape)) AS no_shape"
                        + " FROM " + source() + " x JOIN names n USING (file_name)");
                String[] twice = row(st, "SELECT file, tensor_key, count(*) FROM i GROUP BY file, tensor_key"
                        + " HAVING count(*) > 1 ORDER BY file, tensor_key LIMIT 1");
                if (twice != null) {
                    throw refused("lists a tensor more than once: " + example(twice) + " (" + twice[2] + " rows)");
                }
                long unknown = count(st, "SELECT count(*) FROM i ANTI JOIN h USING (file, tensor_key)");
                if (unknown > 0) {
                    throw refused("has " + rows(unknown) + " naming a tensor its file does not hold, e.g. "
                            + example(row(st, "SELECT file, tensor_key FROM i ANTI JOIN h USING (file, tensor_key)"
                            + " ORDER BY file, tensor_key LIMIT 1")));
                }
                String differ = " FROM i JOIN h USING (file, tensor_key)"
                        + " WHERE i.dtype IS DISTINCT FROM h.dtype OR i.no_shape OR i.shape <> h.shape";
                String[] odd = row(st, "SELECT i.file, i.tensor_key, i.dtype,"
                        + " CASE WHEN i.no_shape THEN 'NULL' ELSE i.shape END, h.dtype, h.shape, count(*) OVER ()" + differ
                        + " ORDER BY i.file, i.tensor_key LIMIT 1");
                if (odd != null) {
                    throw refused("has " + rows(Long.parseLong(odd[6])) + " whose dtype or shape is not the header's, e.g. "
                            + example(odd) + ": the index says "
                            // NULL, not "NULL": a row without a dtype is not one spelled NULL (audit 45).
                            + (odd[2] == null ? "NULL" : SafetensorsDataset.quoted(odd[2])) + " [" + odd[3] + "], the header "
                            + odd[4] + " [" + odd[5] + "]");
                }
                long missing = count(st, "SELECT count(*) FROM h ANTI JOIN i USING (file, tensor_key)");
                if (missing == 0) {
                    return List.of();
                }
                String e = example(row(st, "SELECT file, tensor_key FROM h ANTI JOIN i USING (file, tensor_key)"
                        + " ORDER BY file, tensor_key LIMIT 1"));
                return List.of(FILE + " leaves out " + (missing == 1 ? "1 tensor" : missing + " tensors") + " of the files,"
                        + " e.g. " + e + ": a reader that finds a key's file through the index will not find "
                        + (missing == 1 ? "it" : "them") + " (the files and the mount's .tensors/ folders do)");
            }
        } catch (SQLException e) {
            RuntimeException room = noRoom(e);
            if (room != null) {
                throw room;
            }
            String why = ParquetInspector.firstLine(e.getMessage());
            throw new InvalidInputException(where + " cannot be read as seed 001's tensor index (" + why + ")", FIX, e);
        }
    }

    /**
     * Room, not the index, when the spill folder's disk is full or DuckDB's memory ran out: that
     * is no reason to rewrite or remove a good index (the review). {@link DuckDb#spillDiskFull}
     * comes appending the headers as well as querying.
     *
     * @return the failure to throw, or null when {@code e} is about something else
     */
    private RuntimeException noRoom(SQLException e) {
        String why = ParquetInspector.firstLine(e.getMessage());
        if (DuckDb.spillDiskFull(why)) {
            // Not StagingFullException.of, which knows the OS's words alone: this was an
            // UncheckedIOException until a test filled a tmpfs.
            return new StagingFullException("checking " + index, spill.getParent(), new IOException(why, e));
        }
        if (why.contains("Out of Memory")) {
            return new IllegalStateException("checking " + index + ": DuckDB ran out of its " + memoryLimit
                    + " (spilling to " + spill + "): " + why, e);
        }
        return null;
    }

    /** The four columns of seed 001, of the types it gives them (shape: a list of integers). */
    private void columns(Statement st) throws SQLException {
        // By name in any case, as DuckDB's queries find them (Tensor_Key is tensor_key).
        Map<String, String> types = new LinkedHashMap<>();
        List<String> names = new ArrayList<>();
        try (ResultSet rs = st.executeQuery("DESCRIBE SELECT * FROM " + source())) {
            while (rs.next()) {
                names.add(rs.getString("column_name"));
                types.putIfAbsent(rs.getString("column_name").toLowerCase(Locale.ROOT), rs.getString("column_type"));
            }
        }
        for (String c : COLUMNS) {
            String type = types.get(c);
            if (type == null) {
                throw refused("has no column '" + c + "' (seed 001's index has tensor_key, file_name, shape, dtype; this one has "
                        + String.join(", ", names) + ")");
            }
            boolean ok = c.equals("shape")
                    ? type.matches("(TINYINT|SMALLINT|INTEGER|BIGINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|HUGEINT)\\[\\]")
                    : type.equals("VARCHAR");
            if (!ok) {
                throw refused("has column '" + c + "' of type " + type + "; seed 001 makes it "
                        + (c.equals("shape") ? "a list of integers (Array[Int])" : "a string"));
            }
        }
    }

    /**
     * The index's files in DuckDB: for a folder, the same files its table publishes (a committed
     * dataset's parts: not {@code _temporary/} nor hidden files, which a glob read and the table
     * leaves out: audit 44).
     */
    private String source() {
        if (parts == null) {
            List<CommittedDataset.Part> table = table(where, index).parts();
            partitioned = table.stream().anyMatch(p -> !p.dir().isEmpty());
            parts = partitioned ? linked(table) : table.stream().map(p -> p.file().toAbsolutePath().toString()).toList();
        }
        // Partition folders' values are columns, as in the table (Spark's partitionBy("dtype")
        // writes dtype=F32/part-*.parquet, files without the column), read as text: a folder
        // file_name=0 is a name, not the number DuckDB would make of it.
        return "read_parquet([" + String.join(", ", parts.stream().map(RowRendering::literal).toList())
                + "], hive_partitioning = " + partitioned + (partitioned ? ", hive_types_autocast = false" : "") + ")";
    }

    /**
     * The parts linked under their partition folders in the spill folder, so that folders above
     * the index (a cache folder named {@code k=v}) add no column, as in the table
     * ({@link ParquetInspector#partitionedSchema}).
     */
    private List<String> linked(List<CommittedDataset.Part> table) {
        List<String> out = new ArrayList<>();
        Path root = spill.resolve("parts");
        try {
            for (CommittedDataset.Part p : table) {
                Path link = root.resolve(p.dir()).resolve(p.name());
                Files.createDirectories(link.getParent());
                Files.createSymbolicLink(link, p.file().toAbsolutePath());
                out.add(link.toString());
            }
        } catch (IOException e) {
            RuntimeException full = StagingFullException.of("linking the parts of " + index, spill.getParent(), e);
            throw full instanceof StagingFullException ? full : new IllegalStateException("cannot link the parts of "
                    + index + " in the staging folder " + root + " to read their partition folders: " + e.getMessage(), e);
        }
        return out;
    }

    /**
     * The index as its table publishes it: the file, or the parts of a folder written as Spark
     * writes one (a committed dataset), each with a readable footer; what is wrong said as the
     * index's fault, with its advice (audits 43 and 44: a text file or a part that was not Parquet
     * got --table's).
     */
    static CommittedDataset table(String where, Path index) {
        try (ParquetInspector footer = new ParquetInspector()) {
            CommittedDataset table = Files.isDirectory(index) ? CommittedDataset.read(FILE, index)
                    : CommittedDataset.loose(List.of(CommittedDataset.Part.of(index, "")));
            for (CommittedDataset.Part p : table.parts()) {
                footer.inspect(p.file());
            }
            return table;
        } catch (InvalidInputException e) {
            throw new InvalidInputException(where + " cannot be read as seed 001's tensor index (" + e.getMessage() + ")",
                    FIX, e);
        }
    }

    private InvalidInputException refused(String what) {
        return new InvalidInputException(where + " " + what, FIX);
    }

    /** A file_name as the manifest's files are compared: "./a.safetensors" is a.safetensors. */
    private String normalized(String name) {
        Path dir = index.getParent();
        try {
            Path p = dir.resolve(name).normalize();
            return p.startsWith(dir) && !p.equals(dir) ? dir.relativize(p).toString() : name;
        } catch (java.nio.file.InvalidPathException e) {
            return name; // a NUL: no file of the dataset's, refused as such
        }
    }

    static String shape(List<Long> shape) {
        StringBuilder sb = new StringBuilder();
        for (Long d : shape) {
            sb.append(sb.isEmpty() ? "" : "x").append(d);
        }
        return sb.toString();
    }

    private static String rows(long n) {
        return n == 1 ? "1 row" : n + " rows";
    }

    private static String listed(Set<String> files) {
        List<String> some = files.stream().sorted().limit(3).map(Printable::of).toList();
        return String.join(", ", some) + (files.size() > some.size() ? ", ..." : "");
    }

    /** A tensor of a row whose first two columns are its file and key, as messages name it: {@code "key" of file}. */
    private static String example(String[] fileAndKey) {
        return fileAndKey == null ? "" : SafetensorsDataset.quoted(fileAndKey[1]) + " of "
                + Printable.of(fileAndKey[0]);
    }

    private static long count(Statement st, String sql) throws SQLException {
        try (ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** The first row of {@code sql} as strings, or null. */
    private static String[] row(Statement st, String sql) throws SQLException {
        try (ResultSet rs = st.executeQuery(sql)) {
            if (!rs.next()) {
                return null;
            }
            String[] out = new String[rs.getMetaData().getColumnCount()];
            for (int i = 0; i < out.length; i++) {
                out[i] = rs.getString(i + 1);
            }
            return out;
        }
    }

    @Override
    public void close() {
        try {
            headers.close();
        } catch (SQLException e) {
            // closing: what it could not flush is not checked anyway
        }
        try {
            connection.close();
        } catch (SQLException e) {
            // an in-memory database: nothing is kept
        }
        Staging.delete(spill);
    }
}
