package io.warpdata.daemon.inspect;

import io.warpdata.blobcache.cache.BlobReader;
import io.warpdata.manifest.Table;
import io.warpdata.manifest.TableShard;
import io.warpdata.manifest.WarpException;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The first rows of a table, reading only the bytes DuckDB needs, by ranged reads.
 *
 * <p>DuckDB cannot reach the store itself (no httpfs here, and it would skip verification), so
 * each shard is mirrored into a sparse temp file ({@link ShardMirror}) that holds only what is
 * read through the {@link BlobReader} (verified bytes): first the footer, then, once DuckDB's
 * {@code parquet_metadata} has said where they lie, the column chunks of the first row group(s)
 * that cover the rows asked for. DuckDB then reads the temp file as if it were whole; a filter on
 * {@code file_row_number} makes it skip the row groups that were not fetched, so it never touches
 * the holes.
 */
public final class ParquetHead {
    private final BlobReader reader;
    private final Path tempDir;

    public ParquetHead(BlobReader reader, Path tempDir) {
        this.reader = Objects.requireNonNull(reader, "reader");
        this.tempDir = Objects.requireNonNull(tempDir, "tempDir");
    }

    /**
     * Rows (rendered as {@link RowRendering} says, as {@code stream} renders them) and what reading
     * them cost: {@code bytesRead} is what DuckDB needed, {@code bytesFetched} what the reader
     * fetched from the store for it (whole verification blocks, plus the block hash lists),
     * {@code shardBytes} the shards' full size.
     */
    public record Result(List<String> columns, List<Row> rows, long bytesRead, long bytesFetched,
                         long shardBytes, int shardsRead) {
    }

    /**
     * One row: {@code json} the whole row as a JSON object, {@code text} each value as text (null
     * for NULL), in column order.
     */
    public record Row(String json, List<String> text) {
    }

    /**
     * Reads the first {@code n} rows of {@code table}.
     *
     * @throws io.warpdata.store.StoreException if the shard bytes cannot be fetched or verified
     * @throws CorruptShardException if a shard is not valid Parquet
     */
    public Result head(String tableName, Table table, int n) {
        List<String> columns = table.schema().stream().map(io.warpdata.manifest.Column::name).toList();
        List<Row> rows = new ArrayList<>();
        long fetchedBefore = reader.metrics().bytesFetched.sum();
        long bytesRead = 0;
        long shardBytes = 0;
        int shardsRead = 0;
        for (TableShard shard : table.shards()) {
            if (rows.size() >= n) {
                break;
            }
            if (shard.rowCount() == 0) {
                continue;
            }
            ShardRows r = headOfShard(tableName, table, shard, n - rows.size());
            columns = r.columns;
            rows.addAll(r.rows);
            bytesRead += r.bytesRead;
            shardBytes += shard.blob().size();
            shardsRead++;
        }
        return new Result(columns, rows, bytesRead, reader.metrics().bytesFetched.sum() - fetchedBefore,
                shardBytes, shardsRead);
    }

    private record ShardRows(List<String> columns, List<Row> rows, long bytesRead) {
    }

    private ShardRows headOfShard(String tableName, Table table, TableShard shard, int n) {
        String what = "table '" + tableName + "' shard " + shard.name();
        try (ShardMirror mirror = ShardMirror.open(reader, shard, table.schema(), what, tempDir);
             Connection c = DuckDb.connectInUtc();
             Statement st = c.createStatement()) {
            // One thread: a small read needs no parallel scan, and the fallback LIMIT query
            // then reads row groups in order.
            st.execute("SET threads = 1");
            String lit = mirror.sqlLiteral();
            // DuckDB reads one row group past a LIMIT; a filter on file_row_number instead
            // prunes every row group beyond the rows asked for, so none of their bytes is needed.
            List<String> columns = shardColumns(st, mirror);
            boolean prune = columns.stream().noneMatch("file_row_number"::equals);
            mirror.fetch(firstRowGroupRanges(st, lit, n, prune ? 0 : 1));
            String inner = prune
                    ? "SELECT * EXCLUDE (file_row_number) FROM " + mirror.source(", file_row_number = true")
                            + " WHERE file_row_number < " + n + " ORDER BY file_row_number"
                    : "SELECT * FROM " + mirror.source("") + " LIMIT " + n;
            String query = "SELECT " + RowRendering.json() + (columns.isEmpty() ? "" : ", " + RowRendering.text(columns))
                    + RowRendering.over(inner);
            List<Row> rows = new ArrayList<>();
            try (ResultSet rs = st.executeQuery(query)) {
                while (rs.next()) {
                    List<String> text = new ArrayList<>();
                    for (int i = 0; i < columns.size(); i++) {
                        text.add(rs.getString(i + 2));
                    }
                    rows.add(new Row(RowRendering.strictJson(rs.getString(1)), text));
                }
            }
            return new ShardRows(columns, rows, mirror.bytesRead());
        } catch (SQLException e) {
            throw new CorruptShardException(what + " cannot be read as Parquet: " + e.getMessage());
        }
    }

    /** Column names of the shard, from its footer and its partition folders. */
    private static List<String> shardColumns(Statement st, ShardMirror mirror) throws SQLException {
        List<String> names = new ArrayList<>();
        try (ResultSet rs = st.executeQuery("DESCRIBE SELECT * FROM " + mirror.source(""))) {
            while (rs.next()) {
                names.add(rs.getString("column_name"));
            }
        }
        return names;
    }

    /**
     * Byte ranges [start, end) of the first row groups that together hold {@code n} rows, merged
     * per row group (its column chunks are contiguous in every writer we know, but taking min/max
     * is right either way).
     */
    private static List<long[]> firstRowGroupRanges(Statement st, String lit, int n, int extraGroups)
            throws SQLException {
        List<long[]> ranges = new ArrayList<>();
        String sql = "SELECT row_group_id, any_value(row_group_num_rows),"
                + " min(CASE WHEN dictionary_page_offset IS NOT NULL AND dictionary_page_offset > 0"
                + "     THEN least(dictionary_page_offset, data_page_offset) ELSE data_page_offset END),"
                + " max(CASE WHEN dictionary_page_offset IS NOT NULL AND dictionary_page_offset > 0"
                + "     THEN least(dictionary_page_offset, data_page_offset) ELSE data_page_offset END"
                + "     + total_compressed_size)"
                + " FROM parquet_metadata(" + lit + ") GROUP BY row_group_id ORDER BY row_group_id";
        long rows = 0;
        try (ResultSet rs = st.executeQuery(sql)) {
            int extra = extraGroups;
            while (rs.next() && (rows < n || extra-- > 0)) {
                rows += rs.getLong(2);
                ranges.add(new long[]{rs.getLong(3), rs.getLong(4)});
            }
        }
        return ranges;
    }

    /**
     * A published Parquet shard that does not read as Parquet. Its bytes were checked against the
     * SHA-256 recorded at publish (the store cannot have changed them unnoticed), so the file was
     * already damaged when it was published: publish checks a file's footer, not every page.
     */
    /**
     * What a DuckDB failure reading verified bytes is: damage ({@link CorruptShardException})
     * only when DuckDB says the file is no valid Parquet; else a failed read
     * ({@link ReadFailedException}): the 53rd of 80 open readers failed with "Invalid result set"
     * and was told the source file was damaged (audit 30), while a new read of it returned every row.
     */
    public static WarpException unreadable(String what, java.sql.SQLException e) {
        String m = String.valueOf(e.getMessage());
        String lower = m.toLowerCase(java.util.Locale.ROOT);
        for (String damage : List.of("magic bytes", "too small to be a parquet", "corrupt", "invalid parquet",
                "not a parquet", "thrift", "decompress", "checksum", "page header", "out of bounds")) {
            if (lower.contains(damage)) {
                return new CorruptShardException(what + " cannot be read as Parquet: " + m);
            }
        }
        return new ReadFailedException(what + " could not be read by DuckDB: " + m);
    }

    /** DuckDB failed on bytes that were verified and are valid Parquet as far as it said. */
    public static final class ReadFailedException extends WarpException {
        public ReadFailedException(String message) {
            super(message, "The file's bytes were checked against their SHA-256: it is as published. DuckDB ran out of"
                    + " something (memory, open files: many tables read at once?): read it again, or fewer at once.");
        }

        @Override
        public String type() {
            return "ReadFailed";
        }
    }

    public static final class CorruptShardException extends WarpException {
        public CorruptShardException(String message) {
            super(message, "These are the bytes that were published (checked against their SHA-256), so the source file"
                    + " was already damaged: check it (duckdb -c \"SELECT count(*) FROM read_parquet('FILE')\") and"
                    + " publish a good copy.");
        }

        @Override
        public String type() {
            return "CorruptShard";
        }
    }
}
