package io.warpdata.daemon.mount;

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
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Committed Parquet datasets (issue 15, seed 002 and Spark/DuckDB partitioned output): parts
 * written by DuckDB, the seed-002 manifest.json and _SUCCESS as its store writes them, published
 * with warpctl to a real S3Proxy and read through the mount by DuckDB. Every refusal publishes
 * nothing.
 */
class ParquetStoreIT {
    private static MountedStore store;

    @BeforeAll
    static void start() {
        store = MountedStore.start("it-parquet-store");
    }

    @AfterAll
    static void stop() throws IOException {
        if (store != null) {
            store.close();
        }
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
        Path dir = Files.createDirectories(store.work.resolve(name));
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
        store.warpctl("publish", "pq/committed", "--table", "main=" + dir, "--set-latest").requireSuccess();
        Path table = store.mount.resolve("pq/committed/main");
        MountIT.waitFor(() -> Files.isDirectory(table));
        assertThat(Shell.run("ls", table.toString()).requireSuccess().out().lines().toList())
                .containsExactly("part-00000.parquet", "part-00001.parquet");
        for (String p : List.of("part-00000.parquet", "part-00001.parquet")) {
            assertThat(Files.readAllBytes(table.resolve(p))).isEqualTo(Files.readAllBytes(dir.resolve(p)));
        }
        assertThat(groups("SELECT 'rows', count(*) FROM read_parquet('" + table + "/*.parquet')"))
                .containsEntry("rows", 1000L);
        String manifest = Files.readString(store.mount.resolve("pq/committed/.warp/manifest.json"));
        assertThat(manifest.indexOf("part-00001.parquet")).as("the manifest's order")
                .isLessThan(manifest.indexOf("part-00000.parquet"));
    }

    @Test
    void aPartitionedOutputKeepsItsHiveFoldersForDuckdb() throws Exception {
        Path dir = store.work.resolve("partitioned");
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
        store.warpctl("publish", "pq/parts", "--table", "main=" + dir, "--set-latest").requireSuccess();
        Path table = store.mount.resolve("pq/parts/main");
        MountIT.waitFor(() -> Files.isDirectory(table));
        assertThat(Shell.run("ls", table.toString()).requireSuccess().out().lines().toList())
                .containsExactly("year=2024", "year=2025", "year=2026");
        Map<String, Long> viaMount = groups(q.formatted(table));
        assertThat(viaMount).hasSize(12).isEqualTo(source);
        assertThat(viaMount.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(3000);

        // warpd's own reads of the table have the partition columns too: rows, head, and a view,
        // whose one file holds them (it used to fail "column cls not found", or drop them).
        Map<String, Long> streamed = new TreeMap<>();
        List<String> lines = store.warpctl("stream", "pq/parts", "--format", "csv", "--columns", "year,cls,id")
                .requireSuccess().out().lines().toList();
        assertThat(lines.get(0)).isEqualTo("year,cls,id");
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split(",");
            streamed.merge(f[0] + "/" + f[1], 1L, Long::sum);
        }
        assertThat(streamed).isEqualTo(source);
        assertThat(store.warpctl("head", "pq/parts", "-n", "2").requireSuccess().out()).contains("year").contains("cls");
        store.warpctl("view", "pq/parts", "--as", "pq/parts-2025b", "--where", "year = 2025 AND cls = 'b'")
                .requireSuccess();
        Path view = store.mount.resolve("pq/parts-2025b/main");
        MountIT.waitFor(() -> Files.isDirectory(view));
        assertThat(groups("SELECT year || '/' || cls, count(*) FROM read_parquet('" + view + "/*.parquet') GROUP BY ALL"))
                .isEqualTo(Map.of("2025/b", source.get("2025/b")));
    }

    @Test
    void partitionValuesDuckdbReadsAsTextOrNullPublishTypedOverTheWholeTable() throws Exception {
        // hour=00..23: DuckDB types a leading zero as text, so hour is VARCHAR though hour=10
        // alone would be BIGINT; a NULL year is __HIVE_DEFAULT_PARTITION__. Both were refused as
        // files of different schemas. DuckDB writes no _SUCCESS: the user adds it.
        Path dir = store.work.resolve("hours");
        sql("COPY (SELECT i AS id, lpad((i % 24)::VARCHAR, 2, '0') AS hour, CASE WHEN i % 4 = 0 THEN NULL"
                + " ELSE 2020 + i % 2 END AS year FROM range(0, 480) t(i)) TO '" + dir
                + "' (FORMAT PARQUET, PARTITION_BY (year, hour))");
        Files.writeString(dir.resolve("_SUCCESS"), "");
        String q = "SELECT coalesce(year::VARCHAR, 'null') || '/' || hour, count(*) FROM read_parquet('%s/**/*.parquet',"
                + " hive_partitioning = true) GROUP BY ALL ORDER BY 1";
        Map<String, Long> source = groups(q.formatted(dir));
        assertThat(source).containsKey("null/00").containsKey("2021/13");

        store.warpctl("publish", "pq/hours", "--table", "main=" + dir, "--set-latest").requireSuccess();
        assertThat(store.warpctl("schema", "pq/hours").requireSuccess().out()).contains("hour", "VARCHAR", "year", "BIGINT");
        Path table = store.mount.resolve("pq/hours/main");
        MountIT.waitFor(() -> Files.isDirectory(table));
        assertThat(groups(q.formatted(table))).isEqualTo(source);
        Map<String, Long> streamed = new TreeMap<>();
        List<String> lines = store.warpctl("stream", "pq/hours", "--format", "csv", "--columns", "year,hour")
                .requireSuccess().out().lines().toList();
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split(",", -1);
            streamed.merge((f[0].isEmpty() ? "null" : f[0]) + "/" + f[1], 1L, Long::sum);
        }
        assertThat(streamed).as("warpd's own reads keep the leading zeros and the NULLs").isEqualTo(source);
    }

    private static void refused(Path dir, String dataset, String... expected) {
        Shell.Result r = store.warpctl("publish", dataset, "--table", "main=" + dir, "--set-latest", "--no-daemon");
        assertThat(r.exit()).as(r.out()).isEqualTo(1);
        assertThat(r.err()).contains(expected).contains("what to do:");
        assertThat(store.warpctl("list-remote", "pq/").out()).doesNotContain(dataset);
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
