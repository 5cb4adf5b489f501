package io.warpdata.daemon.mount;

import io.warpdata.blobcache.S3ProxyFixture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Committed Parquet datasets (issue 15, seed 002 and Spark/DuckDB partitioned output): parts
 * written by DuckDB, the seed-002 manifest.json and _SUCCESS as its store writes them, published
 * with warpctl to a real S3Proxy and read through the mount by DuckDB. Every refusal publishes
 * nothing.
 */
class ParquetStoreIT {
    private static Path work;
    private static S3ProxyFixture s3;
    private static Path mount;
    private static Path cache;
    private static WarpdProcess warpd;

    @BeforeAll
    static void start() throws IOException {
        work = Files.createTempDirectory("warp-parquet-store-it");
        s3 = S3ProxyFixture.start();
        mount = Files.createDirectories(work.resolve("mnt"));
        cache = work.resolve("cache");
        warpd = WarpdProcess.start(mount, remote(), cache, s3.env());
    }

    @AfterAll
    static void stop() throws IOException {
        try {
            if (warpd != null) {
                warpd.close();
            }
        } finally {
            WarpdProcess.unmount(mount);
            if (s3 != null) {
                s3.close();
            }
            if (work != null && !WarpdProcess.isMounted(mount)) {
                try (Stream<Path> all = Files.walk(work)) {
                    all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
        }
    }

    private static String remote() {
        return "s3://" + S3ProxyFixture.BUCKET + "/it-parquet-store";
    }

    private static Shell.Result warpctl(String... args) {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>(List.of(java, "-jar", WarpdProcess.JAR.toString(), "warpctl",
                "--remote", remote(), "--socket", cache.resolve("warpd.sock").toString()));
        cmd.addAll(List.of(args));
        return Shell.run(work, s3.env(), 300, cmd);
    }

    private static void sql(String... statements) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement s = c.createStatement()) {
            for (String q : statements) {
                s.execute(q);
            }
        }
    }

    private static Map<String, Long> groups(String query) throws Exception {
        Map<String, Long> out = new TreeMap<>();
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(query)) {
            while (rs.next()) {
                out.put(rs.getString(1), rs.getLong(2));
            }
        }
        return out;
    }

    /** A seed-002 dataset: two parts by DuckDB, manifest.json listing them (in reverse), _SUCCESS. */
    private static Path seed002(String name, long rowCount) throws Exception {
        Path dir = Files.createDirectories(work.resolve(name));
        sql("COPY (SELECT i AS id, i % 7 AS label FROM range(0, 600) t(i)) TO '" + dir.resolve("part-00000.parquet")
                        + "' (FORMAT PARQUET, COMPRESSION zstd)",
                "COPY (SELECT i AS id, i % 7 AS label FROM range(600, 1000) t(i)) TO '" + dir.resolve("part-00001.parquet")
                        + "' (FORMAT PARQUET, COMPRESSION zstd)");
        Files.writeString(dir.resolve("manifest.json"), """
                {
                  "compression": "zstd",
                  "created_at_utc": "2026-11-24T10:00:00+00:00",
                  "dataset_key": "runs/%s",
                  "metadata": {"source": "it"},
                  "parts": ["part-00001.parquet", "part-00000.parquet"],
                  "row_count": %d,
                  "run_id": "run-42",
                  "schema_hash": "0123456789abcdef"
                }
                """.formatted(name, rowCount));
        Files.writeString(dir.resolve("_SUCCESS"), "");
        return dir;
    }

    @Test
    void aSeed002DatasetPublishesExactlyItsPartsInOrderAndReadsThroughTheMount() throws Exception {
        Path dir = seed002("committed", 1000);
        Files.writeString(dir.resolve("stray.parquet"), "not listed, not published");
        warpctl("publish", "pq/committed", "--table", "main=" + dir, "--set-latest").requireSuccess();
        Path table = mount.resolve("pq/committed/main");
        MountIT.waitFor(() -> Files.isDirectory(table));
        assertThat(Shell.run("ls", table.toString()).requireSuccess().out().lines().toList())
                .containsExactly("part-00000.parquet", "part-00001.parquet");
        for (String p : List.of("part-00000.parquet", "part-00001.parquet")) {
            assertThat(Files.readAllBytes(table.resolve(p))).isEqualTo(Files.readAllBytes(dir.resolve(p)));
        }
        assertThat(groups("SELECT 'rows', count(*) FROM read_parquet('" + table + "/*.parquet')"))
                .containsEntry("rows", 1000L);
        String manifest = Files.readString(mount.resolve("pq/committed/.warp/manifest.json"));
        assertThat(manifest.indexOf("part-00001.parquet")).as("the manifest's order")
                .isLessThan(manifest.indexOf("part-00000.parquet"));
    }

    @Test
    void aPartitionedOutputKeepsItsHiveFoldersForDuckdb() throws Exception {
        Path dir = work.resolve("partitioned");
        sql("COPY (SELECT i AS id, 2024 + i % 3 AS year, chr(97 + (i % 4)::INT) AS cls, i * 0.5 AS score"
                + " FROM range(0, 3000) t(i)) TO '" + dir + "' (FORMAT PARQUET, PARTITION_BY (year, cls))");
        String q = "SELECT year || '/' || cls, count(*) FROM read_parquet('%s/**/*.parquet', hive_partitioning = true)"
                + " GROUP BY ALL ORDER BY 1";
        Map<String, Long> source = groups(q.formatted(dir));
        Files.writeString(dir.resolve("_SUCCESS"), "");
        // Spark's and Hadoop's bookkeeping, which is not data:
        Files.createDirectories(dir.resolve("_temporary/0"));
        Files.writeString(dir.resolve("_temporary/0/part-x.parquet"), "half-written");
        Files.writeString(dir.resolve("year=2024/.cls.crc"), "crc");
        warpctl("publish", "pq/parts", "--table", "main=" + dir, "--set-latest").requireSuccess();
        Path table = mount.resolve("pq/parts/main");
        MountIT.waitFor(() -> Files.isDirectory(table));
        assertThat(Shell.run("ls", table.toString()).requireSuccess().out().lines().toList())
                .containsExactly("year=2024", "year=2025", "year=2026");
        Map<String, Long> viaMount = groups(q.formatted(table));
        assertThat(viaMount).hasSize(12).isEqualTo(source);
        assertThat(viaMount.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(3000);
    }

    private static void refused(Path dir, String dataset, String... expected) {
        Shell.Result r = warpctl("publish", dataset, "--table", "main=" + dir, "--set-latest", "--no-daemon");
        assertThat(r.exit()).as(r.out()).isEqualTo(1);
        assertThat(r.err()).contains(expected).contains("what to do:");
        assertThat(warpctl("list-remote", "pq/").out()).doesNotContain(dataset);
    }

    @Test
    void incompleteOrCorruptedDatasetsAreRefusedNamingTheFile() throws Exception {
        Path noSuccess = seed002("nosuccess", 1000);
        Files.delete(noSuccess.resolve("_SUCCESS"));
        refused(noSuccess, "pq/nosuccess", "has no _SUCCESS", "DatasetIncomplete");

        Path missing = seed002("missing", 1000);
        Files.delete(missing.resolve("part-00000.parquet"));
        refused(missing, "pq/missing", "lists part part-00000.parquet, which the folder lacks", "DatasetIncomplete");

        Path notJson = seed002("notjson", 1000);
        Files.writeString(notJson.resolve("manifest.json"), "{\"parts\": [");
        refused(notJson, "pq/notjson", "manifest.json is not JSON", "ManifestCorrupted");

        Path noRows = seed002("norows", 1000);
        Files.writeString(noRows.resolve("manifest.json"), Files.readString(noRows.resolve("manifest.json"))
                .replace("\"row_count\": 1000,", ""));
        refused(noRows, "pq/norows", "lacks 'row_count'", "ManifestCorrupted");

        Path wrongRows = seed002("wrongrows", 999);
        refused(wrongRows, "pq/wrongrows", "says row_count 999 but the parts' Parquet footers hold 1000 rows");
    }
}
