package io.warpdata.daemon.inspect;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.warpdata.blobcache.cache.BlobReader;
import io.warpdata.manifest.Column;
import io.warpdata.manifest.Table;
import io.warpdata.manifest.TableShard;
import io.warpdata.manifest.WarpException;

import org.duckdb.DuckDBConnection;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

/**
 * A table's rows as columnar batches (the {@code table.batches} control operation, which the
 * Python package {@code warpdata} reads): each batch one JSON object
 * {@code {"name": [values...], ...}}, a list per column, so that a client decodes a batch with
 * one {@code json.loads} and no per-row work.
 *
 * <p>Rows are those {@link RowSplit} gives the (rank, worker), read shard by shard in manifest
 * order as {@link RowStream} reads them: DuckDB over a sparse mirror holding only the footer and
 * the column chunks needed (the columns asked for, or every column when there is a filter),
 * fetched through the {@link BlobReader} (warpd's cache: read once, then local). Projection and
 * the {@code where} filter run in DuckDB; the filter is a SQL expression over the table's columns,
 * evaluated with DuckDB's file system access turned off (it can read nothing but the shard).
 *
 * <p>Values: numbers, strings, booleans and nulls as JSON; BLOBs as base64 (their columns are
 * named in {@link Batch#base64()}); lists, structs and maps as JSON arrays and objects (DuckDB's
 * {@code to_json}); anything else (timestamps, dates, UUIDs, intervals) as DuckDB's text form.
 */
public final class TableBatches {
    private static final JsonFactory JSON = new JsonFactory();

    /** One batch: {@code rows} rows, {@code columnsJson} the columns object, BLOB columns in base64. */
    public record Batch(int rows, String columnsJson, List<String> base64) {
    }

    /** Where a batch goes; returns normally or throws to stop. */
    public interface Sink {
        void accept(Batch batch);
    }

    /** What was read: {@code rows} sent, {@code bytesRead} of the shards needed for them. */
    /**
     * @param range the rows read (an even split: its run of real rows, the padded row aside)
     * @param even  whether the split was even ({@link Query#even}): said back, so that a client can
     *              tell that a warpd which predates even splits ignored the request
     */
    public record Result(long rows, long batches, long bytesRead, RowSplit.Range range, boolean even) {
        /** How the rows were cut, as the tools print it. */
        public String how() {
            return even ? "even" : range.how();
        }
    }

    /**
     * What to read.
     *
     * @param columns   in this order; empty: all
     * @param where     a SQL filter over the table's columns, or empty
     * @param limit     at most this many rows (after the filter); negative: no limit
     * @param batchSize rows per batch (the last may have fewer)
     * @param even      as many rows on every rank, and for every worker as on the same worker of
     *                  every other rank ({@link RowSplit#even}: distributed training); else the
     *                  one row split, every row once ({@link RowSplit#of})
     */
    public record Query(List<String> columns, Optional<String> where, long limit, int batchSize,
                        int rank, int world, int worker, int workers, boolean even) {
        public Query {
            if (batchSize < 1) {
                throw new IllegalArgumentException("batch size " + batchSize);
            }
        }

        /** The one row split: every row once. */
        public Query(List<String> columns, Optional<String> where, long limit, int batchSize,
                     int rank, int world, int worker, int workers) {
            this(columns, where, limit, batchSize, rank, world, worker, workers, false);
        }
    }

    private final BlobReader reader;
    private final Path tempDir;
    private DuckDBConnection shared;

    public TableBatches(BlobReader reader, Path tempDir) {
        this.reader = Objects.requireNonNull(reader, "reader");
        this.tempDir = Objects.requireNonNull(tempDir, "tempDir");
    }

    /**
     * Sends the batches of {@code q} to {@code sink}, stopping early when {@code cancelled} turns true.
     *
     * @throws RowStream.NoSuchColumnException if a column is not in the schema
     * @throws BadFilterException if DuckDB refuses the filter
     * @throws ParquetHead.CorruptShardException if a shard is not valid Parquet
     * @throws io.warpdata.store.StoreException if shard bytes cannot be fetched or verified
     */
    public Result read(String tableName, Table table, Query q, Sink sink, BooleanSupplier cancelled) {
        List<String> schema = table.schema().stream().map(Column::name).toList();
        List<String> chosen = q.columns().isEmpty() ? schema : q.columns();
        for (String c : chosen) {
            if (!schema.contains(c)) {
                throw new RowStream.NoSuchColumnException(tableName, c, schema);
            }
        }
        long[] fileRows = table.shards().stream().mapToLong(TableShard::rowCount).toArray();
        List<RowSplit.Range> ranges = q.even() ? RowSplit.even(fileRows, q.rank(), q.world(), q.worker(), q.workers())
                : List.of(RowSplit.of(fileRows, q.rank(), q.world(), q.worker(), q.workers()));
        RowSplit.Range range = ranges.isEmpty() ? new RowSplit.Range(0, 0, false) : ranges.get(0);
        if (!ranges.isEmpty() && (ranges.size() != 1 || range.rows() < totalRows(table))
                && schema.contains("file_row_number")) {
            throw new RowStream.RowNumberClashException(tableName);
        }
        Buffer buffer = new Buffer(chosen, q.batchSize(), sink);
        long bytesRead = 0;
        Path dir = null;
        try {
            dir = Files.createTempDirectory(Files.createDirectories(tempDir), "warp-batches-");
            try (Connection c = connect(dir, q.where().isPresent())) {
                for (RowSplit.Range part : ranges) {
                    long firstRow = 0;
                    for (TableShard s : table.shards()) {
                        long from = Math.max(part.start(), firstRow) - firstRow;
                        long to = Math.min(part.end(), firstRow + s.rowCount()) - firstRow;
                        firstRow += s.rowCount();
                        if (to <= from) {
                            continue;
                        }
                        if ((q.limit() >= 0 && buffer.sent + buffer.held >= q.limit()) || cancelled.getAsBoolean()) {
                            break;
                        }
                        String what = "table '" + tableName + "' shard " + s.name();
                        try (ShardMirror mirror = ShardMirror.open(reader, s, table.schema(), what, dir)) {
                            readShard(c, mirror, what, chosen, q, from == 0 && to == s.rowCount() ? null
                                    : new long[]{from, to}, buffer, cancelled);
                            bytesRead += mirror.bytesRead();
                        }
                    }
                }
            }
        } catch (SQLException e) {
            throw new ParquetHead.CorruptShardException("DuckDB cannot read table '" + tableName + "': " + e.getMessage());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot make a temporary folder in " + tempDir, e);
        } finally {
            deleteQuietly(dir);
        }
        if (!cancelled.getAsBoolean()) {
            buffer.flush();
        }
        return new Result(buffer.sent, buffer.batches, bytesRead, range, q.even());
    }

    /**
     * A connection for one call: to a shared database when there is no filter (no SQL of the
     * client's runs), else to a database of its own that can read nothing outside {@code dir}.
     */
    private Connection connect(Path dir, boolean sandbox) throws SQLException {
        if (!sandbox) {
            synchronized (this) {
                if (shared == null) {
                    shared = (DuckDBConnection) DuckDb.connect();
                    try (Statement st = shared.createStatement()) {
                        st.execute("SET threads TO 1");
                        st.execute("SET memory_limit = '256MB'");
                    }
                }
                Connection c = shared.duplicate();
                try {
                    return DuckDb.streamResults(c);
                } catch (SQLException e) {
                    c.close();
                    throw e;
                }
            }
        }
        Connection c = DuckDb.streamResults(DuckDb.connectInUtc());
        try (Statement st = c.createStatement()) {
            st.execute("SET threads TO 1");
            st.execute("SET memory_limit = '256MB'");
            // The filter is the client's SQL: DuckDB reads nothing but this call's shard mirrors. Its
            // spill folder would be allowed too, and by default it is .tmp in warpd's working
            // directory (wherever it was started: a planted .tmp symlink opened any file), so it
            // goes inside this call's folder; then no setting can change.
            st.execute("SET temp_directory = " + RowRendering.literal(dir.resolve(".spill").toString()));
            st.execute("SET allowed_directories = [" + RowRendering.literal(dir + "/") + "]");
            st.execute("SET enable_external_access = false");
            st.execute("SET lock_configuration = true");
        } catch (SQLException e) {
            c.close();
            throw e;
        }
        return c;
    }

    private static void deleteQuietly(Path dir) {
        if (dir == null) {
            return;
        }
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.deleteIfExists(f);
            }
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            // A leftover empty temp folder; nothing else to do.
        }
    }

    private static long totalRows(Table table) {
        return table.shards().stream().mapToLong(TableShard::rowCount).sum();
    }

    private void readShard(Connection c, ShardMirror mirror, String what, List<String> columns, Query q, long[] rows,
                           Buffer buffer, BooleanSupplier cancelled) {
        try {
            String lit = mirror.sqlLiteral();
            try (Statement st = c.createStatement()) {
                mirror.fetch(RowStream.columnChunks(st, lit, q.where().isPresent() ? List.of() : columns));
            }
            String source = rows == null ? mirror.source("")
                    : "(SELECT * EXCLUDE (file_row_number) FROM " + mirror.source(", file_row_number = true")
                    + " WHERE file_row_number >= " + rows[0] + " AND file_row_number < " + rows[1] + ")";
            String from = " FROM " + source + " t" + q.where().map(FilterText::clause).orElse("");
            List<String> types = new ArrayList<>();
            try (Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("DESCRIBE SELECT " + idents(columns) + from)) {
                while (rs.next()) {
                    types.add(rs.getString("column_type"));
                }
            } catch (SQLException e) {
                if (q.where().isPresent()) {
                    throw new BadFilterException(q.where().get(), e);
                }
                throw ParquetHead.unreadable(what, e);
            }
            List<String> select = new ArrayList<>();
            for (int i = 0; i < columns.size(); i++) {
                String id = RowRendering.ident(columns.get(i));
                select.add(switch (kind(types.get(i))) {
                    case NESTED -> "to_json(" + id + ")::VARCHAR";
                    case TEXT -> "CAST(" + id + " AS VARCHAR)";
                    default -> id;
                });
            }
            boolean[] nested = new boolean[columns.size()];
            for (int i = 0; i < columns.size(); i++) {
                nested[i] = kind(types.get(i)) == Kind.NESTED;
                if (kind(types.get(i)) == Kind.BLOB && !buffer.base64.contains(columns.get(i))) {
                    buffer.base64.add(columns.get(i));
                }
            }
            long left = q.limit() < 0 ? -1 : q.limit() - buffer.sent - buffer.held;
            String query = "SELECT " + String.join(", ", select) + from + (left >= 0 ? " LIMIT " + left : "");
            try (Statement st = c.createStatement(); Watch watch = cancelling(st, cancelled)) {
                try (ResultSet rs = st.executeQuery(query)) {
                    int n = columns.size();
                    while (rs.next()) {
                        for (int i = 0; i < n; i++) {
                            Object v = rs.getObject(i + 1);
                            buffer.values.get(i).add(nested[i] && v != null ? new Raw(v.toString()) : v);
                        }
                        if (++buffer.held == q.batchSize()) {
                            buffer.flush();
                            if (cancelled.getAsBoolean()) {
                                return;
                            }
                        }
                    }
                }
            } catch (SQLException e) {
                if (cancelled.getAsBoolean()) {
                    return; // interrupted by cancelling(): the client went away
                }
                // A filter's fault is DuckDB's binder, parser or a conversion it asked for; anything
                // else (out of memory, a resource) is no bad filter (audit 30).
                String m = String.valueOf(e.getMessage());
                if (q.where().isPresent() && (m.contains("Binder Error") || m.contains("Parser Error")
                        || m.contains("Conversion Error") || m.contains("Catalog Error") || m.contains("Out of Range Error"))) {
                    throw new BadFilterException(q.where().get(), e);
                }
                throw ParquetHead.unreadable(what, e);
            }
        } catch (SQLException e) {
            throw ParquetHead.unreadable(what, e);
        }
    }

    /**
     * Interrupts {@code st} once {@code cancelled} turns true (looked at every 200 ms) until the
     * returned handle is closed. A filter can keep DuckDB computing before its first row (a
     * subquery over range(10^12)): the batches loop, which looks between batches, never got
     * there, and a client that went away left a core busy until warpd stopped.
     */
    private static Watch cancelling(Statement st, BooleanSupplier cancelled) {
        Thread watch = Thread.ofVirtual().name("warp-query-cancel").start(() -> {
            try {
                while (true) {
                    if (cancelled.getAsBoolean()) {
                        st.cancel();
                        return;
                    }
                    Thread.sleep(200);
                }
            } catch (InterruptedException | SQLException done) {
                // the query ended first, or cannot be cancelled: nothing more to do
            }
        });
        return watch::interrupt;
    }

    /** Stops a {@link #cancelling} watch. */
    private interface Watch extends AutoCloseable {
        @Override
        void close();
    }

    private enum Kind { PLAIN, BLOB, NESTED, TEXT }

    private static Kind kind(String duckType) {
        String t = duckType.toUpperCase(Locale.ROOT);
        if (t.endsWith("]") || t.startsWith("STRUCT") || t.startsWith("MAP") || t.startsWith("UNION") || t.equals("JSON")) {
            return Kind.NESTED;
        }
        if (t.equals("BLOB") || t.equals("BYTEA")) {
            return Kind.BLOB;
        }
        if (t.equals("VARCHAR") || t.equals("BOOLEAN") || t.equals("DOUBLE") || t.equals("FLOAT") || t.equals("REAL")
                || t.equals("BIGINT") || t.equals("INTEGER") || t.equals("SMALLINT") || t.equals("TINYINT")
                || t.equals("UBIGINT") || t.equals("UINTEGER") || t.equals("USMALLINT") || t.equals("UTINYINT")
                || t.equals("HUGEINT") || t.equals("UHUGEINT") || t.startsWith("DECIMAL")) {
            return Kind.PLAIN;
        }
        return Kind.TEXT;
    }

    private static String idents(List<String> columns) {
        return columns.stream().map(RowRendering::ident).collect(Collectors.joining(", "));
    }

    /** A JSON text written as it is (a nested value from DuckDB's to_json). */
    private record Raw(String json) {
    }

    /** Rows held until a batch is full. */
    private static final class Buffer {
        final List<String> names;
        final List<List<Object>> values = new ArrayList<>();
        final List<String> base64 = new ArrayList<>();
        final Sink sink;
        int held;
        long sent;
        long batches;

        Buffer(List<String> names, int batchSize, Sink sink) {
            this.names = names;
            this.sink = sink;
            for (int i = 0; i < names.size(); i++) {
                values.add(new ArrayList<>(Math.min(batchSize, 65_536)));
            }
        }

        void flush() {
            if (held == 0) {
                return;
            }
            StringWriter out = new StringWriter(held * names.size() * 8);
            try (JsonGenerator g = JSON.createGenerator(out)) {
                g.writeStartObject();
                for (int i = 0; i < names.size(); i++) {
                    g.writeArrayFieldStart(names.get(i));
                    for (Object v : values.get(i)) {
                        write(g, v);
                    }
                    g.writeEndArray();
                    values.get(i).clear();
                }
                g.writeEndObject();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            int rows = held;
            held = 0;
            sent += rows;
            batches++;
            sink.accept(new Batch(rows, out.toString(), List.copyOf(base64)));
        }

        private static void write(JsonGenerator g, Object v) throws IOException {
            switch (v) {
                case null -> g.writeNull();
                case String s -> g.writeString(s);
                case Long l -> g.writeNumber(l);
                case Integer i -> g.writeNumber(i);
                case Double d -> writeDouble(g, d);
                case Float f -> writeDouble(g, f.doubleValue());
                case Boolean b -> g.writeBoolean(b);
                case Short s -> g.writeNumber(s);
                case Byte b -> g.writeNumber(b);
                case BigDecimal d -> g.writeNumber(d);
                case BigInteger i -> g.writeNumber(i);
                case Raw r -> g.writeRawValue(r.json());
                case byte[] bytes -> g.writeString(Base64.getEncoder().encodeToString(bytes));
                case java.sql.Blob blob -> {
                    try {
                        g.writeString(Base64.getEncoder().encodeToString(blob.getBytes(1, (int) blob.length())));
                    } catch (SQLException e) {
                        throw new IOException(e);
                    }
                }
                default -> g.writeString(v.toString());
            }
        }

        /** NaN and the infinities as Python's json module writes and reads them. */
        private static void writeDouble(JsonGenerator g, double d) throws IOException {
            if (Double.isNaN(d)) {
                g.writeRawValue("NaN");
            } else if (Double.isInfinite(d)) {
                g.writeRawValue(d > 0 ? "Infinity" : "-Infinity");
            } else {
                g.writeNumber(d);
            }
        }
    }

    /** A filter DuckDB could not run. */
    public static final class BadFilterException extends WarpException {
        public BadFilterException(String where, SQLException e) {
            this(where, inUsersWords(where, firstLine(e.getMessage())));
        }

        public BadFilterException(String where, String why) {
            super("The filter '" + where + "' cannot be run: " + why,
                    "Write one DuckDB SQL expression over the table's columns, e.g. label = 'cat' AND id < 100 (warpctl"
                            + " view --where, Python's where=; it can read nothing but the table).");
        }

        /**
         * DuckDB's words about the filter as the user wrote it: the filter is placed inside
         * parentheses, so a filter that stops short (label =) was "near ')'", a ')' the user never
         * wrote (audit 32).
         */
        public static String inUsersWords(String where, String why) {
            if (why.contains("syntax error at or near \")\"") && where.indexOf(')') < 0 && where.indexOf('(') < 0) {
                return why.replace("syntax error at or near \")\"", "syntax error at the end of the filter (it stops"
                        + " before its expression is complete)");
            }
            return why;
        }

        @Override
        public String type() {
            return "InvalidFilter";
        }

        private static String firstLine(String s) {
            if (s == null) {
                return "";
            }
            int nl = s.indexOf('\n');
            return nl < 0 ? s : s.substring(0, nl);
        }
    }
}
