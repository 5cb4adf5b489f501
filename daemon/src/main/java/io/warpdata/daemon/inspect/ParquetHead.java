package io.warpdata.daemon.inspect;

import io.warpdata.blobcache.BlobReader;
import io.warpdata.manifest.BlockHashList;
import io.warpdata.manifest.Table;
import io.warpdata.manifest.TableShard;
import io.warpdata.manifest.WarpException;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The first rows of a table, reading only the bytes DuckDB needs, by ranged reads.
 *
 * <p>DuckDB cannot reach the store itself (no httpfs here, and it would skip verification), so
 * each shard is mirrored into a <em>sparse</em> temp file of its full size that holds only what
 * is read through the {@link BlobReader} (verified bytes): first the footer (the last 8 bytes
 * give its length), then, once DuckDB's {@code parquet_metadata} has said where they lie, the
 * column chunks of the first row group(s) that cover the rows asked for. DuckDB then reads the
 * temp file as if it were whole; a filter on {@code file_row_number} makes it skip the row groups
 * that were not fetched, so it never touches the holes.
 */
public final class ParquetHead {
    private static final int MAGIC_LENGTH = 4;
    private static final int TRAILER = 8;
    /** Reads are cut at multiples of this, so that no verification block is fetched twice. */
    private static final int CHUNK = 4 * BlockHashList.DEFAULT_BLOCK_SIZE;
    /** Footers of shards with a few hundred columns and row groups fit in 64 KiB. */
    private static final int TAIL_GUESS = 64 * 1024;

    private final BlobReader reader;
    private final Path tempDir;

    public ParquetHead(BlobReader reader, Path tempDir) {
        this.reader = Objects.requireNonNull(reader, "reader");
        this.tempDir = Objects.requireNonNull(tempDir, "tempDir");
    }

    /**
     * Rows (values as JDBC returns them) and what reading them cost: {@code bytesRead} is what
     * DuckDB needed, {@code bytesFetched} what the reader fetched from the store for it (whole
     * verification blocks, plus the block hash lists), {@code shardBytes} the shards' full size.
     */
    public record Result(List<String> columns, List<List<Object>> rows, long bytesRead, long bytesFetched,
                         long shardBytes, int shardsRead) {
    }

    /**
     * Reads the first {@code n} rows of {@code table}.
     *
     * @throws io.warpdata.blobcache.StoreException if the shard bytes cannot be fetched or verified
     * @throws CorruptShardException if a shard is not valid Parquet
     */
    public Result head(String tableName, Table table, int n) {
        List<String> columns = table.schema().stream().map(io.warpdata.manifest.Column::name).toList();
        List<List<Object>> rows = new ArrayList<>();
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
            ShardRows r = headOfShard(tableName, shard, n - rows.size());
            columns = r.columns;
            rows.addAll(r.rows);
            bytesRead += r.bytesRead;
            shardBytes += shard.blob().size();
            shardsRead++;
        }
        return new Result(columns, rows, bytesRead, reader.metrics().bytesFetched.sum() - fetchedBefore,
                shardBytes, shardsRead);
    }

    private record ShardRows(List<String> columns, List<List<Object>> rows, long bytesRead) {
    }

    private ShardRows headOfShard(String tableName, TableShard shard, int n) {
        long size = shard.blob().size();
        String what = "table '" + tableName + "' shard " + shard.name();
        if (size < MAGIC_LENGTH + TRAILER) {
            throw new CorruptShardException(what + " is too small to be Parquet (" + size + " bytes)");
        }
        Path tmp = null;
        try {
            Files.createDirectories(tempDir);
            tmp = Files.createTempFile(tempDir, "warp-head-", ".parquet");
            long read = 0;
            try (RandomAccessFile file = new RandomAccessFile(tmp.toFile(), "rw")) {
                file.setLength(size);
                // One read for the tail: it holds the trailer and, almost always, the whole footer.
                int tailLength = (int) Math.min(size, TAIL_GUESS);
                byte[] tail = new byte[tailLength];
                readFully(shard, size - tailLength, tail, tailLength);
                read += tailLength;
                if (!"PAR1".equals(new String(tail, tailLength - 4, 4, StandardCharsets.US_ASCII))) {
                    throw new CorruptShardException(what + " does not end with the Parquet magic bytes");
                }
                long footerLength = ByteBuffer.wrap(tail, tailLength - TRAILER, 4).order(ByteOrder.LITTLE_ENDIAN)
                        .getInt() & 0xffffffffL;
                long footerStart = size - TRAILER - footerLength;
                if (footerStart < MAGIC_LENGTH) {
                    throw new CorruptShardException(what + " has a footer length of " + footerLength
                            + " bytes, more than the file holds");
                }
                if (footerStart < size - tailLength) {
                    read += copy(shard, file, footerStart, size - tailLength - footerStart);
                }
                file.seek(size - tailLength);
                file.write(tail);
            }
            try (Connection c = DriverManager.getConnection("jdbc:duckdb:");
                 Statement st = c.createStatement()) {
                // One thread: a small read needs no parallel scan, and the fallback LIMIT query
                // then reads row groups in order.
                st.execute("SET threads = 1");
                String lit = "'" + tmp.toAbsolutePath().toString().replace("'", "''") + "'";
                // DuckDB reads one row group past a LIMIT; a filter on file_row_number instead
                // prunes every row group beyond the rows asked for, so none of their bytes is needed.
                boolean prune = shardColumns(st, lit).stream().noneMatch("file_row_number"::equals);
                List<long[]> ranges = firstRowGroupRanges(st, lit, n, prune ? 0 : 1);
                try (RandomAccessFile file = new RandomAccessFile(tmp.toFile(), "rw")) {
                    for (long[] r : coalesce(ranges)) {
                        read += copy(shard, file, r[0], r[1] - r[0]);
                    }
                }
                String query = prune
                        ? "SELECT * EXCLUDE (file_row_number) FROM read_parquet(" + lit + ", file_row_number = true)"
                                + " WHERE file_row_number < " + n + " ORDER BY file_row_number"
                        : "SELECT * FROM read_parquet(" + lit + ") LIMIT " + n;
                List<String> columns = new ArrayList<>();
                List<List<Object>> rows = new ArrayList<>();
                try (ResultSet rs = st.executeQuery(query)) {
                    ResultSetMetaData md = rs.getMetaData();
                    for (int i = 1; i <= md.getColumnCount(); i++) {
                        columns.add(md.getColumnName(i));
                    }
                    while (rs.next()) {
                        List<Object> row = new ArrayList<>();
                        for (int i = 1; i <= md.getColumnCount(); i++) {
                            row.add(rs.getObject(i));
                        }
                        rows.add(row);
                    }
                }
                return new ShardRows(columns, rows, read);
            } catch (SQLException e) {
                throw new CorruptShardException(what + " cannot be read as Parquet: " + e.getMessage());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("head of " + what + " via temp file " + tmp, e);
        } finally {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException e) {
                    // A leftover temp file in the temp directory is harmless.
                }
            }
        }
    }

    /**
     * The ranges plus the leading magic bytes, sorted, with touching or overlapping ranges merged:
     * the reader fetches whole verification blocks and keeps none, so each block should be asked
     * for once.
     */
    private static List<long[]> coalesce(List<long[]> ranges) {
        List<long[]> sorted = new ArrayList<>(ranges);
        sorted.add(new long[]{0, MAGIC_LENGTH});
        sorted.sort((a, b) -> Long.compare(a[0], b[0]));
        List<long[]> out = new ArrayList<>();
        for (long[] r : sorted) {
            long[] last = out.isEmpty() ? null : out.get(out.size() - 1);
            if (last != null && r[0] <= last[1]) {
                last[1] = Math.max(last[1], r[1]);
            } else {
                out.add(new long[]{r[0], r[1]});
            }
        }
        return out;
    }

    /** Column names of the shard, from its footer. */
    private static List<String> shardColumns(Statement st, String lit) throws SQLException {
        List<String> names = new ArrayList<>();
        try (ResultSet rs = st.executeQuery("DESCRIBE SELECT * FROM read_parquet(" + lit + ")")) {
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

    private long copy(TableShard shard, RandomAccessFile file, long offset, long length) throws IOException {
        byte[] buf = new byte[(int) Math.min(CHUNK, Math.max(1, length))];
        long done = 0;
        while (done < length) {
            long toBoundary = CHUNK - (offset + done) % CHUNK;
            int len = (int) Math.min(Math.min(buf.length, toBoundary), length - done);
            readFully(shard, offset + done, buf, len);
            file.seek(offset + done);
            file.write(buf, 0, len);
            done += len;
        }
        return length;
    }

    private void readFully(TableShard shard, long offset, byte[] dst) {
        readFully(shard, offset, dst, dst.length);
    }

    private void readFully(TableShard shard, long offset, byte[] dst, int len) {
        int done = 0;
        while (done < len) {
            int n = reader.read(shard.blob(), offset + done, dst, done, len - done);
            if (n <= 0) {
                throw new CorruptShardException("shard " + shard.name() + " ended at " + (offset + done)
                        + " bytes, before its recorded size " + shard.blob().size());
            }
            done += n;
        }
    }

    /** A published Parquet shard that does not read as Parquet. */
    public static final class CorruptShardException extends WarpException {
        public CorruptShardException(String message) {
            super(message, "Re-publish the table from its source files; check the store for damaged objects.");
        }

        @Override
        public String type() {
            return "CorruptShard";
        }
    }
}
