package io.warpdata.daemon.mount;

import io.warpdata.catalog.Catalog;
import io.warpdata.daemon.publish.PublishProgress;
import io.warpdata.daemon.publish.PublishRequest;
import io.warpdata.daemon.publish.Publisher;
import io.warpdata.manifest.BlockHashList;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.util.List;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A sparse Parquet query through a real mount (issue 26): DuckDB reads 2 of the 8 columns of a
 * DuckDB-written file, and the S3 server serves about those columns' chunks, not the file: warpd
 * learns the file's column chunks from its footer and reads ahead only within the chunk being
 * scanned.
 */
class ParquetSparseReadIT {
    private static final DatasetId TABLE = new DatasetId("sparse", "wide");
    private static final long BLOCK = BlockHashList.DEFAULT_BLOCK_SIZE;
    /** Metadata GETs (latest.json, manifest, the block hash list): a few KiB here. */
    private static final long METADATA_ALLOWANCE = 128L << 10;
    private static final String QUERY = "SELECT sum(c1), max(c5), count(*) FROM read_parquet('%s')";

    private static MountedStore m;
    private static Path local;
    private static VersionHash version;

    @BeforeAll
    static void publishAndMount() throws IOException, SQLException {
        m = MountedStore.serveOnDisk("it-sparse");
        Path src = Files.createDirectories(m.work.resolve("src/main"));
        local = src.resolve("data.parquet");
        // 8 columns of 8-byte random values, 2 row groups of 500,000 rows: 16 chunks of ~4 MB, 64 MB.
        StringBuilder cols = new StringBuilder();
        for (int c = 0; c < 8; c++) {
            cols.append(c == 0 ? "" : ", ").append("hash(i * ").append(c + 3).append(") AS c").append(c);
        }
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement s = c.createStatement()) {
            s.execute("COPY (SELECT " + cols + " FROM range(0, 1000000) t(i)) TO '" + local
                    + "' (FORMAT PARQUET, COMPRESSION UNCOMPRESSED, ROW_GROUP_SIZE 500000)");
        }
        Publisher publisher = new Publisher(m.store(), new Catalog(m.store()), Clock.systemUTC(), "sparse-it", m.work, 4,
                PublishProgress.NONE);
        version = publisher.publish(new PublishRequest(TABLE, new TreeMap<>(java.util.Map.of("main", List.of(src + "/*.parquet"))),
                new TreeMap<>(), List.of(), true, PublishRequest.DEFAULT_SHARD_SIZE, m.work)).version();
        m.mount();
    }

    @AfterAll
    static void stop() throws IOException {
        if (m != null) {
            m.close();
        }
    }

    private static Object[] query(Path file) throws SQLException {
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement s = c.createStatement();
             ResultSet r = s.executeQuery(String.format(QUERY, file))) {
            assertThat(r.next()).isTrue();
            return new Object[] {r.getObject(1), r.getObject(2), r.getObject(3)};
        }
    }

    /** Bytes of the chunks of the query's columns, and how many chunks, from DuckDB's own parquet_metadata(). */
    private static long[] chunksRead() throws SQLException {
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement s = c.createStatement();
             ResultSet r = s.executeQuery("SELECT sum(total_compressed_size), count(*) FROM parquet_metadata('" + local
                     + "') WHERE path_in_schema IN ('c1', 'c5')")) {
            assertThat(r.next()).isTrue();
            return new long[] {r.getLong(1), r.getLong(2)};
        }
    }

    @Test
    void aQueryOfTwoColumnsOfEightFetchesAboutTheirChunks() throws SQLException {
        Path mounted = m.mount.resolve(TABLE.workspace()).resolve(TABLE.name() + "@" + version.hex()).resolve("main/data.parquet");
        long size = local.toFile().length();
        long[] chunks = chunksRead();
        assertThat(chunks[1]).as("2 columns x 2 row groups").isEqualTo(4);
        assertThat(chunks[0]).as("a quarter of the file").isBetween(size / 5, size / 3);

        Shell.bash("sync; echo 3 > /proc/sys/vm/drop_caches").requireSuccess();
        m.s3.resetCounters();
        assertThat(query(mounted)).containsExactly(query(local));
        long served = m.s3.counters().bytesServed();
        System.out.println("ParquetSparseReadIT: query of 2 of 8 columns: " + served + " bytes served for "
                + chunks[0] + " bytes of their chunks, file " + size + "; " + m.s3.counters());
        // Each chunk may cost its partial blocks at both ends and the kernel's read-around past
        // its end (1 MiB, MountOptions.MAX_READAHEAD); the footer costs its block.
        long bound = chunks[0] + chunks[1] * 3 * BLOCK + BLOCK + METADATA_ALLOWANCE;
        assertThat(served).as("about the chunks read, not the file").isBetween(chunks[0], bound);
        assertThat(bound).as("the bound means something").isLessThan(size / 2);
    }
}
