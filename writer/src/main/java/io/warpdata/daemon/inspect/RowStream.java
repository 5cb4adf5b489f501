package io.warpdata.daemon.inspect;

import io.warpdata.blobcache.cache.BlobReader;
import io.warpdata.manifest.Column;
import io.warpdata.manifest.Table;
import io.warpdata.manifest.TableShard;
import io.warpdata.manifest.WarpException;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * A table's rows, written out as JSON lines or CSV, as {@code warpctl stream} does: shard by
 * shard in manifest order, each read by DuckDB from a sparse mirror ({@link ShardMirror}) that
 * holds only the footer and the column chunks of the columns asked for, fetched by ranged reads
 * through the {@link BlobReader} (verified). Rows keep their order within the table.
 *
 * <p>Sharding is {@link RowSplit}'s, the one rule the Python package and the {@code warpctl init}
 * stub use too: rows are numbered across the table's shards in manifest order and file order, and
 * a rank takes one contiguous run of them (whole files when they split evenly): no row twice, none
 * left out.
 *
 * <p>Values are rendered as {@link RowRendering} says (the same as {@code head}): JSON lines by
 * DuckDB's {@code to_json} (nested values as JSON objects and arrays), CSV fields as DuckDB casts
 * them to text, quoted as DuckDB's own CSV writer quotes them (NULL is an empty field, an empty
 * string {@code ""}).
 */
public final class RowStream {
    /** Output formats. */
    public enum Format { JSONL, CSV }

    /**
     * Which rows: rank {@code rank} of {@code world} ({@code 0/1}: all of them).
     *
     * @throws IllegalArgumentException unless {@code 0 <= rank < world}
     */
    public record Shard(int rank, int world) {
        public Shard {
            if (world < 1 || rank < 0 || rank >= world) {
                throw new IllegalArgumentException("shard " + rank + "/" + world + ": need 0 <= rank < world");
            }
        }

        /** Every row. */
        public static final Shard ALL = new Shard(0, 1);
    }

    /**
     * What a stream wrote and what it cost: {@code bytesRead} is what DuckDB needed of the shards
     * (footers and the column chunks asked for), {@code shardBytes} their full size.
     */
    public record Result(long rows, long bytesRead, long shardBytes) {
    }

    private final BlobReader reader;
    private final Path tempDir;

    public RowStream(BlobReader reader, Path tempDir) {
        this.reader = Objects.requireNonNull(reader, "reader");
        this.tempDir = Objects.requireNonNull(tempDir, "tempDir");
    }

    /**
     * Writes the rows of {@code table} that {@code shard} selects to {@code out}.
     *
     * @param columns   the columns to write, in this order; empty: every column
     * @param batchSize rows fetched from DuckDB at a time, and written out (flushed) together
     * @throws NoSuchColumnException if a column is not in the table's schema
     * @throws ParquetHead.CorruptShardException if a shard is not valid Parquet
     * @throws io.warpdata.store.StoreException if shard bytes cannot be fetched or verified
     * @throws UncheckedIOException if {@code out} fails
     */
    public Result stream(String tableName, Table table, List<String> columns, int batchSize, Shard shard,
                         Format format, OutputStream out) {
        if (batchSize < 1) {
            throw new IllegalArgumentException("batch size " + batchSize);
        }
        List<String> schema = table.schema().stream().map(Column::name).toList();
        List<String> chosen = columns.isEmpty() ? schema : columns;
        for (String c : chosen) {
            if (!schema.contains(c)) {
                throw new NoSuchColumnException(tableName, c, schema);
            }
        }
        if (shard.world() > 1 && schema.contains("file_row_number")) {
            throw new RowNumberClashException(tableName);
        }
        try {
            if (format == Format.CSV) {
                out.write((chosen.stream().map(RowStream::csvField).collect(Collectors.joining(",")) + "\n")
                        .getBytes(StandardCharsets.UTF_8));
            }
            long rows = 0;
            long bytesRead = 0;
            long shardBytes = 0;
            long firstRow = 0;
            RowSplit.Range range = range(table, shard);
            for (TableShard s : table.shards()) {
                long from = Math.max(range.start(), firstRow) - firstRow;
                long to = Math.min(range.end(), firstRow + s.rowCount()) - firstRow;
                if (to > from) {
                    String what = "table '" + tableName + "' shard " + s.name();
                    try (ShardMirror mirror = ShardMirror.open(reader, s, table.schema(), what, tempDir)) {
                        rows += streamShard(mirror, what, chosen, columns.isEmpty(),
                                from == 0 && to == s.rowCount() ? null : new long[]{from, to}, batchSize,
                                format, out);
                        bytesRead += mirror.bytesRead();
                    }
                }
                shardBytes += s.blob().size();
                firstRow += s.rowCount();
            }
            out.flush();
            return new Result(rows, bytesRead, shardBytes);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write rows of table " + tableName, e);
        }
    }

    /** The rows of {@code table} that {@code shard} selects ({@link RowSplit} over its files' row counts). */
    public static RowSplit.Range range(Table table, Shard shard) {
        return RowSplit.of(table.shards().stream().mapToLong(TableShard::rowCount).toArray(), shard.rank(), shard.world());
    }

    /** @param rows the file's rows {@code [from, to)} to write, or null for all of them */
    private long streamShard(ShardMirror mirror, String what, List<String> columns, boolean all, long[] rows,
                             int batchSize, Format format, OutputStream out) throws IOException {
        try (Connection c = DuckDb.streamResults(DuckDb.connectInUtc());
             Statement st = c.createStatement()) {
            String lit = mirror.sqlLiteral();
            mirror.fetch(columnChunks(st, lit, all ? List.of() : columns));
            String projection = columns.stream().map(RowRendering::ident).collect(Collectors.joining(", "));
            String inner = "SELECT " + projection + " FROM "
                    + (rows != null ? mirror.source(", file_row_number = true") + " WHERE file_row_number >= " + rows[0]
                    + " AND file_row_number < " + rows[1] : mirror.source(""));
            String query = "SELECT " + (format == Format.JSONL ? RowRendering.json() : RowRendering.text(columns))
                    + RowRendering.over(inner);
            long written = 0;
            StringBuilder batch = new StringBuilder();
            try (ResultSet rs = st.executeQuery(query)) {
                int n = rs.getMetaData().getColumnCount();
                while (rs.next()) {
                    if (format == Format.JSONL) {
                        batch.append(RowRendering.strictJson(rs.getString(1)));
                    } else {
                        for (int i = 1; i <= n; i++) {
                            if (i > 1) {
                                batch.append(',');
                            }
                            String v = rs.getString(i);
                            if (v != null) {
                                batch.append(csvField(v));
                            }
                        }
                    }
                    batch.append('\n');
                    if (++written % batchSize == 0) {
                        out.write(batch.toString().getBytes(StandardCharsets.UTF_8));
                        out.flush();
                        batch.setLength(0);
                    }
                }
            }
            out.write(batch.toString().getBytes(StandardCharsets.UTF_8));
            return written;
        } catch (SQLException e) {
            throw new ParquetHead.CorruptShardException(what + " cannot be read as Parquet: " + e.getMessage());
        }
    }

    /**
     * Byte ranges of the column chunks of {@code columns} (every column when empty) in every row
     * group: all the data a full scan of those columns reads.
     */
    static List<long[]> columnChunks(Statement st, String lit, List<String> columns) throws SQLException {
        String start = "CASE WHEN dictionary_page_offset IS NOT NULL AND dictionary_page_offset > 0"
                + " THEN least(dictionary_page_offset, data_page_offset) ELSE data_page_offset END";
        String where = columns.isEmpty() ? "" : " WHERE " + columns.stream()
                .map(c -> "path_in_schema = " + RowRendering.literal(c) + " OR starts_with(path_in_schema, " + RowRendering.literal(c + ", ") + ")")
                .collect(Collectors.joining(" OR "));
        List<long[]> ranges = new ArrayList<>();
        try (ResultSet rs = st.executeQuery("SELECT " + start + ", " + start + " + total_compressed_size"
                + " FROM parquet_metadata(" + lit + ")" + where)) {
            while (rs.next()) {
                ranges.add(new long[]{rs.getLong(1), rs.getLong(2)});
            }
        }
        return ranges;
    }

    /** A CSV field as DuckDB's CSV writer writes it: quoted when it holds a delimiter, quote or line break, or is empty. */
    static String csvField(String v) {
        if (v.isEmpty()) {
            return "\"\"";
        }
        boolean quote = v.indexOf(',') >= 0 || v.indexOf('"') >= 0 || v.indexOf('\n') >= 0 || v.indexOf('\r') >= 0;
        return quote ? "\"" + v.replace("\"", "\"\"") + "\"" : v;
    }

    /** A column the table does not have. */
    public static final class NoSuchColumnException extends WarpException {
        public NoSuchColumnException(String table, String column, List<String> columns) {
            super("Table '" + table + "' has no column '" + column + "'",
                    "Its columns are " + String.join(", ", columns.stream().map(NoSuchColumnException::asGiven).toList())
                            + "; ask for some of them (warpctl: --columns a,b; Python: columns=[\"a\", \"b\"]).");
        }

        /**
         * A name as --columns takes it: in double quotes (a quote doubled) when it holds a comma,
         * a quote or a space, which --columns would split or trim (audit 28: {@code a,b} shown bare).
         */
        static String asGiven(String column) {
            boolean quote = column.isEmpty() || column.chars().anyMatch(c -> c == ',' || c == '"' || Character.isWhitespace(c));
            return quote ? "\"" + column.replace("\"", "\"\"") + "\"" : column;
        }

        @Override
        public String type() {
            return "ColumnNotFound";
        }
    }

    /** A table with a column named {@code file_row_number}, which sharding needs for DuckDB's own row numbers. */
    public static final class RowNumberClashException extends WarpException {
        public RowNumberClashException(String table) {
            super("Table '" + table + "' has a column named 'file_row_number', which sharding needs for its own row numbers",
                    "Stream it without --shard (or with --shard 0/1), or rename the column in the published table.");
        }

        @Override
        public String type() {
            return "RowNumberClash";
        }
    }
}
