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
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Output of a real Spark (issue 28): the data under {@code src/test/data/spark} was written
 * by Spark 4 in local mode ({@code scripts/spark-fixtures}, which regenerates it; the suite does
 * not run Spark) with what Spark read back from it ({@code expected/}). Here it is published with
 * warpctl to a real S3 server (S3Proxy), mounted by warpd, and read through the mount by DuckDB
 * (the partitioned Parquet dataset) and numpy (the safetensors dataset's tensors as {@code .npy}),
 * which must see exactly what Spark saw.
 */
class SparkOutputIT {
    /** Through the mount: every sample of every part's tensors, against Spark's rows. */
    static final String READER = """
            import csv, json, os, sys
            import numpy as np
            root, expected = sys.argv[1], sys.argv[2]
            manifest = json.load(open(os.path.join(root, "dataset_manifest.json")))
            rows = list(csv.DictReader(open(expected)))
            assert len(rows) == manifest["total_samples"], (len(rows), manifest["total_samples"])
            counts = {s["file"]: s["samples_count"] for s in manifest["shards"]}
            tensors = {}
            for r in rows:
                f = r["file"]
                if f not in tensors:
                    d = os.path.join(root, f[:-len(".safetensors")] + ".tensors")
                    tensors[f] = {k: np.load(os.path.join(d, k + ".npy"), mmap_mode="r") for k in ("features", "label", "sample_id")}
                    t = tensors[f]
                    assert t["features"].dtype == np.dtype("<f4") and t["features"].shape == (counts[f], 8), t["features"].shape
                    assert t["label"].dtype == np.dtype("<i8") and t["sample_id"].shape == (counts[f],)
                t, i = tensors[f], int(r["index"])
                assert t["sample_id"][i] == int(r["sample_id"]), (f, i, "sample_id")
                assert t["label"][i] == int(r["label"]), (f, i, "label")
                want = np.array([float(x) for x in r["features"].split(" ")], dtype="<f4")
                assert np.array_equal(t["features"][i], want), (f, i, t["features"][i], want)
            print("checked", len(rows), "samples in", len(tensors), "files")
            """;

    private static MountedStore store;
    private static Path spark;

    @BeforeAll
    static void start() throws IOException {
        // Read where it is committed, not from the classpath: resource copying drops "._*" files
        // such as Hadoop's ._SUCCESS.crc.
        spark = Path.of("src/test/data/spark").toAbsolutePath();
        assertThat(spark.resolve("expected/spark-version.txt")).as("Spark's output; scripts/spark-fixtures writes it").exists();
        store = MountedStore.start("it-spark");
        Files.writeString(store.work.resolve("reader.py"), READER);
    }

    @AfterAll
    static void stop() throws IOException {
        if (store != null) {
            store.close();
        }
    }

    private static List<Path> files(Path root) throws IOException {
        try (Stream<Path> all = Files.walk(root)) {
            return all.filter(Files::isRegularFile).sorted().toList();
        }
    }

    /** The query's rows as CSV lines, each column as Java prints it (as the expected files were written). */
    private static List<String> duckdb(String sql) throws Exception {
        List<String> out = new ArrayList<>();
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:");
             Statement st = c.createStatement();
             ResultSet rs = st.executeQuery(sql)) {
            int n = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                List<String> cols = new ArrayList<>();
                for (int i = 1; i <= n; i++) {
                    Object v = rs.getObject(i);
                    cols.add(v instanceof Number num && !(v instanceof Double) ? String.valueOf(num.longValue()) : String.valueOf(v));
                }
                out.add(String.join(",", cols));
            }
        }
        return out;
    }

    private static List<String> expected(String name) throws IOException {
        List<String> lines = Files.readAllLines(spark.resolve("expected").resolve(name));
        return lines.subList(1, lines.size());
    }

    @Test
    void sparksPartitionedParquetPublishesAndDuckdbReadsThroughTheMountWhatSparkReadBack() throws Exception {
        Path events = spark.resolve("events");
        // The fixture is Spark's commit as it was: _SUCCESS, Hadoop's .crc files, Spark's part names.
        List<String> written = files(events).stream().map(p -> events.relativize(p).toString()).toList();
        assertThat(written).contains("_SUCCESS", "._SUCCESS.crc");
        List<String> parts = written.stream().filter(f -> f.endsWith(".parquet")).toList();
        assertThat(parts).hasSize(12).allMatch(f -> f.matches("year=202[56]/cls=(cat|dog|fox)/part-\\d{5}-[0-9a-f-]{36}\\.c000\\.snappy\\.parquet"));
        assertThat(written.stream().filter(f -> f.endsWith(".crc"))).hasSize(13);

        store.warpctl("publish", "spark/events", "--table", "events=" + events, "--set-latest").requireSuccess();
        Path table = store.mount.resolve("spark/events/events");
        MountIT.waitFor(() -> Files.isDirectory(table));
        // In the mount: the partition folders and the parts, byte for byte; none of Hadoop's bookkeeping.
        assertThat(Shell.run("ls", "-A", table.toString()).requireSuccess().out().lines().toList())
                .containsExactly("year=2025", "year=2026");
        List<String> mounted = files(table).stream().map(p -> table.relativize(p).toString()).toList();
        assertThat(mounted).containsExactlyInAnyOrderElementsOf(parts);
        for (String part : parts) {
            assertThat(Files.readAllBytes(table.resolve(part))).as(part).isEqualTo(Files.readAllBytes(events.resolve(part)));
        }

        String scan = "read_parquet('" + table + "/**/*.parquet', hive_partitioning = true)";
        assertThat(duckdb("SELECT id, year, cls, score, name FROM " + scan + " ORDER BY id"))
                .hasSize(60).containsExactlyElementsOf(expected("events-rows.csv"));
        assertThat(duckdb("SELECT year, cls, count(*), sum(id), sum(score) FROM " + scan + " GROUP BY year, cls ORDER BY year, cls"))
                .hasSize(6).containsExactlyElementsOf(expected("events-aggregates.csv"));
    }

    @Test
    void sparksSafetensorsDatasetPublishesAndNumpyReadsThroughTheMountWhatSparkReadBack() throws Exception {
        Path embeddings = spark.resolve("embeddings");
        List<String> written = files(embeddings).stream().map(p -> embeddings.relativize(p).toString()).toList();
        assertThat(written).hasSize(4).contains("dataset_manifest.json")
                .filteredOn(f -> f.endsWith(".safetensors")).hasSize(3)
                .allMatch(f -> f.matches("part-\\d{5}-[0-9a-f-]{36}\\.safetensors"));

        store.warpctl("publish", "spark/emb", "--artifact", "emb=" + embeddings, "--set-latest").requireSuccess();
        Path root = store.mount.resolve("spark/emb/emb");
        MountIT.waitFor(() -> Files.isDirectory(root));
        for (String f : written) {
            assertThat(Files.readAllBytes(root.resolve(f))).as(f).isEqualTo(Files.readAllBytes(embeddings.resolve(f)));
        }
        Shell.Result r = store.python("reader.py", root.toString(), spark.resolve("expected/embeddings-rows.csv").toString());
        assertThat(r.exit()).as(r.out() + r.err()).isZero();
        assertThat(r.out()).contains("checked 30 samples in 3 files");
        assertThat(store.warpctl("inspect", "spark/emb").requireSuccess().out())
                .contains("format: safetensors", "files: 3", "tensors: 9", "samples: 30", "dtypes: I64:6 F32:3");
    }
}
