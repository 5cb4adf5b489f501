package io.warpdata.daemon.mount;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.zip.CRC32;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Order-aware prefetch end to end (issue 16): a real S3Proxy, warpd and warpctl from the shaded
 * jar, a real mount. ImageFolder-style datasets of 400 small files in 8 class folders, published
 * as tar shards of 8 MiB; a shuffled order handed to warpd ({@code warpctl prefetch}, and the
 * loader {@code warpctl init} writes, run by Debian's python3 with torch's DataLoader), then the
 * files read in that order through the mount. Asserted on warpd's own counters: the reads were
 * served by blocks the plan fetched, the shards came in a handful of large GETs (not one per
 * file), nothing was wasted, and every byte is right.
 */
class OrderPrefetchIT {
    private static final int CLASSES = 8;
    private static final int PER_CLASS = 50;
    private static final int FILES = CLASSES * PER_CLASS;
    private static final ObjectMapper JSON = new ObjectMapper();

    private static MountedStore store;
    private static Path src;
    /** Per dataset: its version. */
    private static final Map<String, String> versions = new HashMap<>();

    /** Reads in the main process in the sampler's order; DataLoader workers CRC each file (the transform). */
    private static final String TRAIN = """
            import importlib.util, json, sys, zlib
            spec = importlib.util.spec_from_file_location("loader", sys.argv[1])
            loader = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(loader)

            def crc(row):
                with open(row["path"], "rb") as f:
                    data = f.read()
                return {"path": row["path"], "crc": zlib.crc32(data), "size": len(data)}

            dl = loader.make_loader(batch_size=16, num_workers=2, shuffle=True, seed=5, transform=crc)
            seen = {}
            for batch in dl:
                for p, c, n in zip(batch["path"], batch["crc"].tolist(), batch["size"].tolist()):
                    seen[p[len(loader.ROOT) + 1:]] = [c, n]
            print(json.dumps({"files": seen, "answer": dl.sampler.last_answer}))
            """;

    @BeforeAll
    static void publish() throws Exception {
        store = MountedStore.start("it-order");
        src = Files.createDirectories(store.work.resolve("src"));
        for (String name : List.of("order", "loader")) {
            Path dir = src.resolve(name);
            writeFiles(dir.resolve("images"), name.hashCode());
            writeLabels(dir.resolve("main"));
            JsonNode p = json(store.warpctl("publish", "zoo/" + name, "--table", "main=" + dir.resolve("main") + "/*.parquet",
                    "--artifact", "images=" + dir.resolve("images"), "--bind", "main.path=images:image",
                    "--shard-size", "8MiB", "--set-latest", "--json"));
            versions.put(name, p.get("version").asText());
        }
        Files.writeString(store.work.resolve("train.py"), TRAIN);
    }

    @AfterAll
    static void stop() throws IOException {
        if (store != null) {
            store.close();
        }
    }

    /** {@code c0..c7/img000..049.jpg}: 20-120 KB of random bytes each (raw bytes are all ImageFolder needs here). */
    private static void writeFiles(Path dir, long seed) throws IOException {
        Random rnd = new Random(seed);
        for (int c = 0; c < CLASSES; c++) {
            Path classDir = Files.createDirectories(dir.resolve("c" + c));
            for (int i = 0; i < PER_CLASS; i++) {
                byte[] data = new byte[20_000 + rnd.nextInt(100_000)];
                rnd.nextBytes(data);
                Files.write(classDir.resolve(String.format("img%03d.jpg", i)), data);
            }
        }
    }

    /** {@code dir/labels.parquet} by DuckDB: one row per file (path, label). */
    private static void writeLabels(Path dir) throws Exception {
        Files.createDirectories(dir);
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement s = c.createStatement()) {
            s.execute("COPY (SELECT printf('c%d/img%03d.jpg', cls, i) AS path, cls AS label FROM range(" + CLASSES
                    + ") a(cls), range(" + PER_CLASS + ") b(i) ORDER BY cls, i) TO '" + dir.resolve("labels.parquet")
                    + "' (FORMAT PARQUET)");
        }
    }

    private static JsonNode json(Shell.Result r) {
        r.requireSuccess();
        try {
            return JSON.readTree(r.out());
        } catch (IOException e) {
            throw new UncheckedIOException("not JSON: " + r.out(), e);
        }
    }

    private static JsonNode call(String op) {
        return store.call(op);
    }

    private static Map<String, Long> counters() throws InterruptedException {
        return store.readCounters();
    }

    private static Map<String, Long> delta(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> d = new HashMap<>();
        after.forEach((k, v) -> d.put(k, v - before.getOrDefault(k, 0L)));
        return d;
    }

    /** The dataset's files, relative to its images folder, in a seeded shuffled order. */
    private static List<String> shuffled(long seed) {
        List<String> files = new ArrayList<>();
        for (int c = 0; c < CLASSES; c++) {
            for (int i = 0; i < PER_CLASS; i++) {
                files.add(String.format("c%d/img%03d.jpg", c, i));
            }
        }
        Collections.shuffle(files, new Random(seed));
        return files;
    }

    private static long crc(byte[] data) {
        CRC32 crc = new CRC32();
        crc.update(data);
        return crc.getValue();
    }

    /** What the counters must show after a cold shuffled pass that followed a plan of {@code grains} grains. */
    private static void assertServedByThePlan(Map<String, Long> d, long grains, int shards) {
        System.out.printf("%d files, %d shards, %d grains planned; counters of the pass: %s%n", FILES, shards, grains,
                new java.util.TreeMap<>(d));
        assertThat(d.get("planned_blocks")).as("blocks fetched for the plan; %s", d).isBetween(grains * 9 / 10, grains);
        assertThat(d.get("prefetch_hit_blocks")).as("reads served by blocks the plan fetched; %s", d)
                .isGreaterThanOrEqualTo(d.get("planned_blocks") * 9 / 10);
        // Most reads found their block cached; the first ones may wait for it to stream in.
        assertThat(d.get("miss_blocks")).as("block reads that waited; %s", d)
                .isLessThanOrEqualTo((d.get("hit_blocks") + d.get("miss_blocks")) / 4);
        assertThat(d.get("prefetch_wasted_bytes")).as("%s", d).isZero();
        assertThat(d.get("read_errors")).as("%s", d).isZero();
        // Coalesced: a few GETs per shard (its data in runs of 4-32 MiB, its block hash list; and the
        // member index), never one per file.
        assertThat(d.get("gets_issued")).as("GETs for %d files in %d shards; %s", FILES, shards, d)
                .isLessThanOrEqualTo(4L * shards + 4);
        assertThat(d.get("bytes_fetched")).as("every block fetched once; %s", d)
                .isLessThanOrEqualTo((grains + 1) * (1 << 20) + 64 * 1024);
    }

    @Test
    void aShuffledOrderHandedToWarpdIsFetchedAheadInLargeGetsAndReadsHitIt() throws Exception {
        String version = versions.get("order");
        Path images = store.mount.resolve("zoo/order@" + version + "/images");
        List<String> order = shuffled(16);
        Path orderFile = store.work.resolve("order.txt");
        Files.write(orderFile, order.stream().map(f -> images.resolve(f).toString()).toList(), StandardCharsets.UTF_8);

        Map<String, Long> before = counters();
        JsonNode plan = json(store.warpctl("prefetch", "--order", orderFile.toString(), "--plan", "it epoch 0", "--json"));
        assertThat(plan.get("members").asInt()).isEqualTo(FILES);
        int shards = plan.get("blobs").asInt();
        long grains = plan.get("grains").asLong();
        assertThat(shards).as("8 MiB shards").isBetween(2, 8);

        for (String f : order) {
            assertThat(Files.readAllBytes(images.resolve(f))).as(f).isEqualTo(Files.readAllBytes(src.resolve("order/images")
                    .resolve(f)));
        }
        Map<String, Long> d = delta(before, counters());
        assertServedByThePlan(d, grains, shards);

        JsonNode plans = call("stats").path("order_plans");
        assertThat(plans.toString()).contains("\"name\":\"it epoch 0\"", "\"members\":" + FILES);

        // Through the latest link: as a root, and inside absolute paths.
        Files.write(orderFile, order.subList(0, 3), StandardCharsets.UTF_8);
        assertThat(json(store.warpctl("prefetch", "--order", orderFile.toString(), "--root", "zoo/order/images",
                "--plan", "it link", "--json")).get("members").asInt()).isEqualTo(3);
        Files.write(orderFile, order.subList(0, 3).stream().map(f -> store.mount.resolve("zoo/order/images").resolve(f)
                .toString()).toList(), StandardCharsets.UTF_8);
        assertThat(json(store.warpctl("prefetch", "--order", orderFile.toString(), "--plan", "it link", "--json"))
                .get("replaced").asBoolean()).isTrue();

        // A wrong path plans nothing and says which.
        Files.writeString(orderFile, images.resolve("c0/img000.jpg") + "\n" + images.resolve("c9/nope.jpg") + "\n");
        Shell.Result bad = store.warpctl("prefetch", "--order", orderFile.toString(), "--plan", "it epoch 1");
        assertThat(bad.exit()).isEqualTo(1);
        assertThat(bad.err()).contains("/images/c9/nope.jpg' (position 1) is not a file under", "what to do:");
    }

    @Test
    void theGeneratedLoaderTellsWarpdEachEpochsOrder() throws Exception {
        String version = versions.get("loader");
        json(store.warpctl("init", "zoo/loader@" + version, "-o", store.work.resolve("zoo_loader.py").toString(), "--json"));
        Map<String, long[]> expected = new HashMap<>();
        for (String f : shuffled(0)) {
            byte[] data = Files.readAllBytes(src.resolve("loader/images").resolve(f));
            expected.put("images/" + f, new long[] {crc(data), data.length});
        }

        // The loader's rows come from warpd (table.batches, through the cache): warm the table, so that
        // the pass's counters are those of the files the plan fetched.
        json(store.warpctl("warm", "zoo/loader@" + version, "--tables", "main", "--json"));
        Map<String, Long> before = counters();
        Shell.Result r = store.python("train.py", store.work.resolve("zoo_loader.py").toString()).requireSuccess();
        Map<String, Long> d = delta(before, counters());
        JsonNode out = JSON.readTree(r.out().lines().reduce((a, b) -> b).orElseThrow());
        assertThat(r.err()).doesNotContain("did not take the read order");
        JsonNode answer = out.get("answer");
        assertThat(answer.get("members").asInt()).isEqualTo(FILES);
        assertThat(out.get("files").size()).isEqualTo(FILES);
        expected.forEach((f, crcAndSize) -> {
            assertThat(out.get("files").has(f)).as(f).isTrue();
            assertThat(out.get("files").get(f).get(0).asLong()).as("CRC of %s", f).isEqualTo(crcAndSize[0]);
            assertThat(out.get("files").get(f).get(1).asLong()).as("size of %s", f).isEqualTo(crcAndSize[1]);
        });
        assertServedByThePlan(d, answer.get("grains").asLong(), answer.get("blobs").asInt());

    }
}
