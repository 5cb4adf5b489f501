package io.warpdata.daemon.inspect;

import io.warpdata.blobcache.cache.BlobReader;
import io.warpdata.daemon.testing.StoreBlobReader;
import io.warpdata.store.InMemoryBlobStore;
import io.warpdata.store.StoreLayout;
import io.warpdata.daemon.publish.TestData;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.Column;
import io.warpdata.manifest.Table;
import io.warpdata.manifest.TableShard;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ParquetHeadTest {
    @TempDir
    Path tmp;

    private final InMemoryBlobStore store = new InMemoryBlobStore();

    /** Plain ranged reads from the in-memory store, so the test sees exactly what head asked for. */
    private final BlobReader reader = new StoreBlobReader(store);

    private TableShard shard(Path file) throws Exception {
        byte[] bytes = Files.readAllBytes(file);
        BlobId id = BlobId.of(bytes);
        store.put(StoreLayout.blob(id), bytes);
        return new TableShard(file.getFileName().toString(), new BlobRef(id, bytes.length, id), 0L + countRows(file));
    }

    private static long countRows(Path file) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement();
             var rs = st.executeQuery("SELECT count(*) FROM read_parquet('" + file + "')")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private ParquetHead head() {
        return new ParquetHead(reader, tmp.resolve("head-tmp"));
    }

    /**
     * DuckDB's failure on verified bytes is damage only when it says the file is no valid Parquet
     * (audit 30: "Invalid result set", the 53rd of 80 open readers, was called a damaged source
     * file, while a new read returned every row).
     */
    @Test
    void aFailureIsDamageOnlyWhenDuckDbSaysTheFileIsNoParquet() {
        assertThat(ParquetHead.unreadable("shard p0.parquet", new java.sql.SQLException(
                "Invalid Input Error: No magic bytes found at end of file 'p0.parquet'")))
                .isInstanceOf(ParquetHead.CorruptShardException.class).hasMessageContaining("p0.parquet");
        io.warpdata.manifest.WarpException resource = ParquetHead.unreadable("shard p0.parquet",
                new java.sql.SQLException("Invalid Input Error: Invalid result set"));
        assertThat(resource).isInstanceOf(ParquetHead.ReadFailedException.class).hasMessageContaining("Invalid result set");
        assertThat(resource.type()).isEqualTo("ReadFailed");
        assertThat(resource.nextStep()).contains("as published", "read it again").doesNotContain("damaged");
        assertThat(ParquetHead.unreadable("x", new java.sql.SQLException("Out of Memory Error: could not allocate")))
                .isInstanceOf(ParquetHead.ReadFailedException.class);
    }

    @Test
    void readsFirstRowsFromFooterAndFirstRowGroupOnly() throws Exception {
        TableShard s = shard(TestData.parquet(tmp.resolve("part-0.parquet"), 20_000, 2_000));
        Table t = new Table(List.of(s), List.of(new Column("id", "BIGINT")));
        ParquetHead.Result r = head().head("main", t, 3);
        assertThat(r.columns()).containsExactly("id", "path", "label", "note");
        assertThat(r.rows()).extracting(row -> row.text().get(0)).containsExactly("0", "1", "2");
        assertThat(r.rows().get(0).json()).startsWith("{\"id\":0,");
        assertThat(r.bytesRead()).isLessThan(s.blob().size() / 4);
        assertThat(store.bytesRead.get()).isEqualTo(r.bytesRead());
        try (var files = Files.list(tmp.resolve("head-tmp"))) {
            assertThat(files).as("temp file removed").isEmpty();
        }
    }

    @Test
    void continuesIntoTheNextShardWhenTheFirstHasTooFewRows() throws Exception {
        TableShard a = shard(TestData.parquet(tmp.resolve("a.parquet"), 100, 100));
        TableShard b = shard(TestData.parquet(tmp.resolve("b.parquet"), 100, 100));
        ParquetHead.Result r = head().head("main", new Table(List.of(a, b), List.of()), 150);
        assertThat(r.rows()).hasSize(150);
        assertThat(r.shardsRead()).isEqualTo(2);
        assertThat(r.rows().get(149).text().get(0)).isEqualTo("49");
    }

    @Test
    void tableWithAFileRowNumberColumnStillReadsCorrectly() throws Exception {
        Path f = tmp.resolve("odd.parquet");
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement()) {
            st.execute("COPY (SELECT 1000 - i AS file_row_number, i AS x FROM range(10000) t(i) ORDER BY i) TO '"
                    + f + "' (FORMAT PARQUET, ROW_GROUP_SIZE 2048)");
        }
        ParquetHead.Result r = head().head("main", new Table(List.of(shard(f)), List.of()), 4);
        List<Long> xs = new ArrayList<>();
        r.rows().forEach(row -> xs.add(Long.parseLong(row.text().get(1))));
        assertThat(r.columns()).containsExactly("file_row_number", "x");
        assertThat(xs).containsExactly(0L, 1L, 2L, 3L);
    }
}
