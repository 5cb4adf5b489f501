package io.warpdata.daemon.mount;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Safetensors datasets (issue 15, seed 001) end to end: files written byte by byte from the
 * format by Debian's numpy (not by Warp), published with warpctl, mounted by warpd over a real
 * S3Proxy, and read through the mount by numpy ({@code memmap} of the whole file,
 * {@code load(mmap_mode="r")} of each tensor's synthesized {@code .npy}) and torch
 * ({@code from_file}). Broken datasets are refused naming the file and the tensor, and publish
 * nothing.
 */
class SafetensorsIT {
    /**
     * Writes a safetensors dataset as seed 001's writer would: files of tensors (F32 embeddings
     * under "emb/N", I64 labels, a U8 image, F16, BF16 raw and a scalar), the header padded with
     * spaces to 8 bytes, and dataset_manifest.json. Deterministic: the reader regenerates it.
     */
    static final String WRITER = """
            import json, os, struct, sys
            import numpy as np

            def tensors(f):
                rng = np.random.default_rng(f)
                t = {}
                for i in range(40):
                    t["emb/%d" % i] = rng.standard_normal(16).astype("<f4")
                t["label"] = np.arange(40, dtype="<i8") + 1000 * f
                t["image"] = rng.integers(0, 256, (3, 8, 8), dtype=np.uint8)
                t["half"] = rng.standard_normal(5).astype("<f2")
                t["count"] = np.array(7 + f, dtype="<i4")
                return t

            def bf16(f):
                return np.random.default_rng(100 + f).integers(0, 65536, 6, dtype="<u2").tobytes()

            def write(path, f):
                t = tensors(f)
                header, blobs, at = {"__metadata__": {"writer": "numpy test", "file": str(f)}}, [], 0
                for k, a in t.items():
                    b = a.tobytes()
                    header[k] = {"dtype": {"<f4": "F32", "<i8": "I64", "|u1": "U8", "<f2": "F16", "<i4": "I32"}[a.dtype.str],
                                 "shape": list(a.shape), "data_offsets": [at, at + len(b)]}
                    blobs.append(b)
                    at += len(b)
                b = bf16(f)
                header["bf"] = {"dtype": "BF16", "shape": [6], "data_offsets": [at, at + len(b)]}
                blobs.append(b)
                h = json.dumps(header).encode()
                h += b" " * (-len(h) % 8)
                with open(path, "wb") as out:
                    out.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))

            if __name__ == "__main__":
                root, files = sys.argv[1], int(sys.argv[2])
                os.makedirs(root, exist_ok=True)
                shards = []
                for f in range(files):
                    name = "part-%05d.safetensors" % f
                    write(os.path.join(root, name), f)
                    shards.append({"file": name, "samples_count": 40, "bytes": os.path.getsize(os.path.join(root, name))})
                with open(os.path.join(root, "dataset_manifest.json"), "w") as m:
                    json.dump({"format_version": "1.0", "safetensors_version": "1.0", "total_samples": 40 * files,
                               "total_bytes": sum(s["bytes"] for s in shards), "shards": shards}, m)
            """;

    /** Reads through the mount with numpy and torch and compares with what the writer wrote. */
    static final String READER = """
            import json, os, struct, sys
            import numpy as np
            import torch
            sys.path.insert(0, os.path.dirname(sys.argv[0]))
            from writer import tensors, bf16
            root, files = sys.argv[1], int(sys.argv[2])
            checked = 0
            for f in range(files):
                path = os.path.join(root, "part-%05d.safetensors" % f)
                raw = np.memmap(path, dtype=np.uint8, mode="r")
                n = struct.unpack("<Q", raw[:8].tobytes())[0]
                header = json.loads(raw[8:8 + n].tobytes())
                assert header["__metadata__"]["file"] == str(f)
                t = tensors(f)
                for k, a in t.items():
                    b, e = header[k]["data_offsets"]
                    assert raw[8 + n + b:8 + n + e].tobytes() == a.tobytes(), ("memmap", f, k)
                    npy = os.path.join(root, "part-%05d.tensors" % f, k + ".npy")
                    got = np.load(npy, mmap_mode="r")
                    assert got.dtype == a.dtype and got.shape == a.shape, (npy, got.dtype, got.shape)
                    assert np.array_equal(got, a), npy
                    assert os.path.getsize(npy) == 128 + a.nbytes or os.path.getsize(npy) == 64 + a.nbytes, npy
                    checked += 1
                bf = os.path.join(root, "part-%05d.tensors" % f, "bf.bf16")
                assert open(bf, "rb").read() == bf16(f), bf
                whole = torch.from_file(path, shared=False, size=os.path.getsize(path), dtype=torch.uint8)
                assert bytes(whole.numpy()) == open(path, "rb").read()
                emb = sorted(os.listdir(os.path.join(root, "part-%05d.tensors" % f, "emb")), key=lambda s: int(s[:-4]))
                assert emb == ["%d.npy" % i for i in range(40)], emb
            print("checked", checked, "tensors")
            """;

    private static MountedStore store;

    @BeforeAll
    static void start() throws IOException {
        store = MountedStore.start("it-safetensors");
        Files.writeString(store.work.resolve("writer.py"), WRITER);
        Files.writeString(store.work.resolve("reader.py"), READER);
    }

    @AfterAll
    static void stop() throws IOException {
        if (store != null) {
            store.close();
        }
    }

    /** A fresh copy of a good dataset of {@code files} files, to break. */
    private static Path dataset(String name, int files) {
        Path dir = store.work.resolve(name);
        store.python("writer.py", dir.toString(), String.valueOf(files)).requireSuccess();
        return dir;
    }

    @Test
    void aSafetensorsDatasetPublishesAndEveryTensorReadsThroughTheMountAsNpy() throws Exception {
        Path src = dataset("good", 3);
        // The writer's global index (seed 001, generate_index=true), written by DuckDB.
        try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:duckdb:");
             java.sql.Statement st = c.createStatement()) {
            st.execute("COPY (SELECT 'emb/' || i AS tensor_key, printf('part-%05d.safetensors', f) AS file_name,"
                    + " [16] AS shape, 'F32' AS dtype FROM range(3) a(f), range(40) b(i) ORDER BY f, i) TO '"
                    + src.resolve("_tensor_index.parquet") + "' (FORMAT PARQUET)");
        }
        // An index whose row names a tensor its file does not hold is refused, and nothing is published.
        Path wrong = dataset("wrong-index", 1);
        try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:duckdb:");
             java.sql.Statement st = c.createStatement()) {
            st.execute("COPY (SELECT 'emb/' || i AS tensor_key, 'part-00000.safetensors' AS file_name, [16] AS shape,"
                    + " 'F32' AS dtype FROM range(41) b(i)) TO '" + wrong.resolve("_tensor_index.parquet") + "' (FORMAT PARQUET)");
        }
        Shell.Result refused = store.warpctl("publish", "st/wrong", "--artifact", "emb=" + wrong, "--set-latest");
        assertThat(refused.exit()).isNotZero();
        assertThat(refused.err()).contains("_tensor_index.parquet has 1 row naming a tensor its file does not"
                + " hold, e.g. \"emb/40\" of part-00000.safetensors", "generate_index=true");
        Shell.Result none = store.warpctl("list-remote", "st/wrong");
        assertThat(none.exit()).isNotZero();
        assertThat(none.err()).contains("is not published");
        Shell.Result p = store.warpctl("publish", "st/emb", "--artifact", "emb=" + src, "--set-latest");
        assertThat(p.exit()).as(p.err()).isZero();
        // The index lists the 120 emb/ tensors; the files' 15 others are said, not refused.
        assertThat(p.out() + p.err()).contains("_tensor_index.parquet leaves out 15 tensors of the files");
        Path root = store.mount.resolve("st/emb/emb");
        MountIT.waitFor(() -> Files.isDirectory(root));
        assertThat(Shell.run("ls", root.toString()).requireSuccess().out().lines().toList()).containsExactly(
                "_tensor_index.parquet", "dataset_manifest.json", "part-00000.safetensors", "part-00000.tensors", "part-00001.safetensors",
                "part-00001.tensors", "part-00002.safetensors", "part-00002.tensors");
        Shell.Result r = store.python("reader.py", root.toString(), "3");
        assertThat(r.exit()).as(r.out() + r.err()).isZero();
        assertThat(r.out()).contains("checked " + 3 * 44 + " tensors");
        // Every file byte-exact, the safetensors files as they were written.
        for (String f : List.of("part-00000.safetensors", "part-00002.safetensors", "dataset_manifest.json")) {
            assertThat(Files.readAllBytes(root.resolve(f))).as(f).isEqualTo(Files.readAllBytes(src.resolve(f)));
        }
        assertThat(store.warpctl("info", "st/emb", "--json").requireSuccess().out()).contains("\"kind\" : \"safetensors\"");
        // The global index is also a table: DuckDB finds the files that hold a key through the store.mount.
        try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:duckdb:");
             java.sql.Statement st = c.createStatement();
             java.sql.ResultSet rs = st.executeQuery("SELECT string_agg(file_name, ',' ORDER BY file_name) FROM read_parquet('"
                     + store.mount.resolve("st/emb/emb_tensor_index") + "/*.parquet') WHERE tensor_key = 'emb/7'")) {
            rs.next();
            assertThat(rs.getString(1)).isEqualTo("part-00000.safetensors,part-00001.safetensors,part-00002.safetensors");
        }
        // What the check learned is in the (hashed) manifest, and inspect shows it.
        assertThat(store.warpctl("inspect", "st/emb").requireSuccess().out()).contains("artifact emb: safetensors",
                "format: safetensors", "files: 3", "tensors: 135", "samples: 120",
                "dtypes: F32:120 BF16:3 F16:3 I32:3 I64:3 U8:3", "shapes: 16:120 3x8x8:3 40:3 5:3 6:3 scalar:3");
        // cat of a tensor's .npy: the mount makes it, it is no member; the error says how to read it
        Shell.Result cat = store.warpctl("cat", "st/emb", "--artifact", "emb", "--ref", "part-00000.tensors/emb/0.npy");
        assertThat(cat.exit()).isEqualTo(1);
        assertThat(cat.err()).contains("has no member 'part-00000.tensors/emb/0.npy'", "read it from the mount");
    }

    /** Lists the 4,096 tensor files of the big test file's folder in {@code artifact}. */
    private static void assertTensorsListed(Path artifact) {
        assertThat(Shell.run("ls", artifact.resolve("big.tensors/emb").toString()).requireSuccess().out().lines().count())
                .isEqualTo(4096);
    }

    /** An empty cache and a warpd started again, once {@code dir} shows in its mount. */
    private static void freshWarpd(Path dir) throws Exception {
        store.warpctl("cache", "gc", "--limit", "0").requireSuccess();
        store.stopWarpds();
        store.mount();
        MountIT.waitFor(() -> Files.isDirectory(dir));
    }

    private static void refused(Path src, String dataset, String... expected) {
        Shell.Result r = store.warpctl("publish", dataset, "--artifact", "emb=" + src, "--set-latest", "--no-daemon");
        assertThat(r.exit()).as(r.out()).isEqualTo(1);
        assertThat(r.err()).contains(expected).contains("what to do:");
        Shell.Result ls = store.warpctl("list-remote", "st/");
        assertThat(ls.out()).doesNotContain(dataset);
    }

    /** The review: Spark writes its Parquet "file" as a folder of parts with _SUCCESS; it was neither checked nor a table. */
    @Test
    void anIndexWrittenAsAFolderIsCheckedAndIsATable() throws Exception {
        Path src = dataset("index-folder", 2);
        Path folder = src.resolve("_tensor_index.parquet");
        try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:duckdb:");
             java.sql.Statement st = c.createStatement()) {
            st.execute("SET threads = 2");
            st.execute("COPY (SELECT 'emb/' || i AS tensor_key, printf('part-%05d.safetensors', f) AS file_name,"
                    + " [16] AS shape, 'F32' AS dtype FROM range(2) a(f), range(40) b(i)) TO '" + folder
                    + "' (FORMAT PARQUET, PER_THREAD_OUTPUT true)");
        }
        Files.createFile(folder.resolve("_SUCCESS"));
        Shell.Result p = store.warpctl("publish", "st/indexfolder", "--artifact", "emb=" + src, "--set-latest");
        assertThat(p.exit()).as(p.err()).isZero();
        assertThat(p.out() + p.err()).contains("_tensor_index.parquet leaves out 10 tensors of the files");
        Path table = store.mount.resolve("st/indexfolder/emb_tensor_index");
        MountIT.waitFor(() -> Files.isDirectory(table));
        try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:duckdb:");
             java.sql.Statement st = c.createStatement();
             java.sql.ResultSet rs = st.executeQuery("SELECT count(*), count(DISTINCT file_name) FROM read_parquet('"
                     + table + "/*.parquet')")) {
            rs.next();
            assertThat(rs.getLong(1)).isEqualTo(80);
            assertThat(rs.getLong(2)).isEqualTo(2);
        }
        // Audit 43: an index that is not Parquet was refused with --table's advice.
        Path text = dataset("index-text", 1);
        Files.writeString(text.resolve("_tensor_index.parquet"), "tensor_key,file_name\n");
        Shell.Result refused = store.warpctl("publish", "st/indextext", "--artifact", "emb=" + text);
        assertThat(refused.exit()).isNotZero();
        assertThat(refused.err()).contains("_tensor_index.parquet is not a readable Parquet file", "generate_index=true")
                .doesNotContain("--table");

        // Spark's partitionBy("file_name") (DuckDB's PARTITION_BY writes the same folders): the
        // column is the folders', was refused as missing (audit 44), and is the table's column.
        Path parted = dataset("index-parted", 2);
        Path byFile = parted.resolve("_tensor_index.parquet");
        try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:duckdb:");
             java.sql.Statement st = c.createStatement()) {
            st.execute("COPY (SELECT 'emb/' || i AS tensor_key, printf('part-%05d.safetensors', f) AS file_name,"
                    + " [16] AS shape, 'F32' AS dtype FROM range(2) a(f), range(40) b(i)) TO '" + byFile
                    + "' (FORMAT PARQUET, PARTITION_BY (file_name))");
        }
        Files.createFile(byFile.resolve("_SUCCESS"));
        Shell.Result pp = store.warpctl("publish", "st/indexparted", "--artifact", "emb=" + parted, "--set-latest");
        assertThat(pp.exit()).as(pp.err()).isZero();
        assertThat(pp.out() + pp.err()).contains("_tensor_index.parquet leaves out 10 tensors of the files");
        Path partedTable = store.mount.resolve("st/indexparted/emb_tensor_index");
        MountIT.waitFor(() -> Files.isDirectory(partedTable));
        assertThat(partedTable.resolve("file_name=part-00001.safetensors")).isDirectory();
        try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:duckdb:");
             java.sql.Statement st = c.createStatement();
             java.sql.ResultSet rs = st.executeQuery("SELECT count(*) FROM read_parquet('" + partedTable
                     + "/*/*.parquet', hive_partitioning = true) WHERE file_name = 'part-00001.safetensors'")) {
            rs.next();
            assertThat(rs.getLong(1)).isEqualTo(40);
        }
    }

    @Test
    void brokenDatasetsAreRefusedNamingTheFileAndTheTensorAndPublishNothing() throws Exception {
        Path overlap = dataset("overlap", 2);
        Path f = overlap.resolve("part-00001.safetensors");
        byte[] bytes = Files.readAllBytes(f);
        String text = new String(bytes, java.nio.charset.StandardCharsets.ISO_8859_1);
        // emb/1's offsets moved 4 bytes back: it overlaps emb/0 (same header length).
        String broken = text.replace("\"emb/1\": {\"dtype\": \"F32\", \"shape\": [16], \"data_offsets\": [64, 128]}",
                "\"emb/1\": {\"dtype\": \"F32\", \"shape\": [16], \"data_offsets\": [60, 124]}");
        assertThat(broken).isNotEqualTo(text);
        Files.write(f, broken.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
        refused(overlap, "st/overlap", "part-00001.safetensors: tensor 'emb/1'", "overlapping");

        Path missing = dataset("missing", 2);
        Files.delete(missing.resolve("part-00000.safetensors"));
        refused(missing, "st/missing", "lists part-00000.safetensors, which the folder lacks", "DatasetIncomplete");

        Path notJson = dataset("notjson", 1);
        Files.writeString(notJson.resolve("dataset_manifest.json"), "{\"format_version\": ");
        refused(notJson, "st/notjson", "dataset_manifest.json is not JSON", "ManifestCorrupted");

        Path totals = dataset("totals", 2);
        String m = Files.readString(totals.resolve("dataset_manifest.json"));
        Files.writeString(totals.resolve("dataset_manifest.json"), m.replace("\"total_samples\": 80", "\"total_samples\": 81"));
        refused(totals, "st/totals", "says total_samples 81 but its shards add up to 80");

        Path grown = dataset("grown", 1);
        Files.write(grown.resolve("part-00000.safetensors"), new byte[] {1, 2, 3}, java.nio.file.StandardOpenOption.APPEND);
        refused(grown, "st/grown", "says part-00000.safetensors has ", "bytes; it has ");

        Path extra = dataset("extra", 1);
        Files.copy(extra.resolve("part-00000.safetensors"), extra.resolve("stray.safetensors"));
        refused(extra, "st/extra", "stray.safetensors is not listed in dataset_manifest.json");

        Path truncated = dataset("truncated", 1);
        Path t = truncated.resolve("part-00000.safetensors");
        byte[] all = Files.readAllBytes(t);
        Files.write(t, java.util.Arrays.copyOf(all, all.length - 3));
        String tm = Files.readString(truncated.resolve("dataset_manifest.json"));
        Files.writeString(truncated.resolve("dataset_manifest.json"), tm.replace(String.valueOf(all.length),
                String.valueOf(all.length - 3)));
        refused(truncated, "st/truncated", "part-00000.safetensors", "(the file is truncated)");

        // A key given twice is refused, not read last-wins (which then blamed the data).
        Path twice = dataset("twice", 2);
        String tw = Files.readString(twice.resolve("dataset_manifest.json"));
        Files.writeString(twice.resolve("dataset_manifest.json"), tw.replace("\"total_samples\": 80,",
                "\"total_samples\": 80, \"total_samples\": 81,"));
        refused(twice, "st/twice", "has the key 'total_samples' more than once", "ManifestCorrupted");
    }

    /**
     * The bench's shape (issue 26): four files of 5,000 F32 vectors of 256 (1 KiB each, about 5
     * MiB a file), written by numpy from the format; reads the tensors a file of "F I" lines names,
     * in that order, through the mount's .npy files, and exits 0 if every one equals what was
     * written.
     */
    static final String SMALL = """
            import json, os, struct, sys
            import numpy as np
            def values(f):
                return np.random.default_rng(1000 + f).standard_normal((5000, 256)).astype("<f4")
            if sys.argv[1] == "write":
                os.makedirs(sys.argv[2], exist_ok=True)
                shards = []
                for f in range(4):
                    header = {("emb/%d" % i): {"dtype": "F32", "shape": [256], "data_offsets": [i * 1024, (i + 1) * 1024]}
                              for i in range(5000)}
                    h = json.dumps(header).encode()
                    h += b" " * (-len(h) % 8)
                    name = "part-%05d.safetensors" % f
                    with open(os.path.join(sys.argv[2], name), "wb") as out:
                        out.write(struct.pack("<Q", len(h)) + h + values(f).tobytes())
                    shards.append({"file": name, "samples_count": 5000, "bytes": os.path.getsize(os.path.join(sys.argv[2], name))})
                with open(os.path.join(sys.argv[2], "dataset_manifest.json"), "w") as m:
                    json.dump({"format_version": "1.0", "total_samples": 20000, "total_bytes": sum(s["bytes"] for s in shards),
                               "shards": shards}, m)
            else:
                v = [values(f) for f in range(4)]
                for line in open(sys.argv[3]):
                    f, i = map(int, line.split())
                    got = np.load(os.path.join(sys.argv[2], "part-%05d.tensors" % f, "emb", "%d.npy" % i), mmap_mode="r")
                    assert np.array_equal(np.asarray(got), v[f][i]), (f, i)
            """;

    /**
     * Issue 26: 1,000 random tensors of 1 KiB out of 20,000 in four 5 MiB files (the bench's
     * tensor-npy), told to warpd ahead as an order plan, fetch about what they read, not the
     * 20 MiB of blocks they lie in: each tensor on its own, checked against its own hash, and each
     * file's header from the deflated headers rather than the file's first block.
     */
    @Test
    void randomTensorsToldAheadFetchAboutWhatTheyReadNotTheirBlocks() throws Exception {
        Files.writeString(store.work.resolve("small.py"), SMALL);
        Path src = store.work.resolve("small");
        store.python("small.py", "write", src.toString()).requireSuccess();
        store.warpctl("publish", "st/small", "--artifact", "t=" + src, "--set-latest").requireSuccess();
        Path root = store.mount.resolve("st/small/t");
        MountIT.waitFor(() -> Files.isDirectory(root));
        java.util.Random random = new java.util.Random(26);
        List<String> picks = new java.util.ArrayList<>();
        List<String> paths = new java.util.ArrayList<>();
        for (int k = 0; k < 1000; k++) {
            int f = random.nextInt(4);
            int i = random.nextInt(5000);
            picks.add(f + " " + i);
            paths.add(root.resolve("part-0000" + f + ".tensors/emb/" + i + ".npy").toString());
        }
        Path picksFile = store.work.resolve("small-picks.txt");
        Files.write(picksFile, picks);
        Path orderFile = store.work.resolve("small-order.txt");
        Files.write(orderFile, paths);

        store.s3.resetCounters();
        Shell.Result told = store.warpctl("prefetch", "--order", orderFile.toString(), "--plan", "tensors", "--json");
        told.requireSuccess();
        assertThat(new com.fasterxml.jackson.databind.ObjectMapper().readTree(told.out()).path("fetches").asText())
                .as("a plan whose files are a 20th of its blocks fetches its files: %s", told.out()).isEqualTo("files");
        store.python("small.py", "read", root.toString(), picksFile.toString()).requireSuccess();
        long read = 1000L * (1024 + 128);
        long fetched = store.s3.counters().bytesServed();
        // 1,000 tensors (1.0 MB), four files' tensor hashes (640 KB) and deflated headers
        // (about 45 KB each), where the blocks were 20.5 MB.
        assertThat(fetched).as("bytes fetched for 1,000 random tensors of 1 KiB told ahead").isLessThan(2 * read)
                .isGreaterThan(1000L * 1024);
        System.out.printf("1,000 tensors told ahead: %d bytes fetched for %d read (%.2fx), %d GETs%n", fetched, read,
                (double) fetched / read, store.s3.counters().gets());
        // A GET per tensor (a few picked twice, a few neighbours in one), and a few for the hashes and headers.
        assertThat(store.s3.counters().gets()).as("GETs for 1,000 tensors told ahead").isBetween(900L, 1100L);

        // The reader may ask for the blocks instead (fewer, larger GETs), and nothing else.
        Shell.Result blocks = store.warpctl("prefetch", "--order", orderFile.toString(), "--plan", "tensors blocks",
                "--fetch", "blocks", "--json");
        blocks.requireSuccess();
        assertThat(new com.fasterxml.jackson.databind.ObjectMapper().readTree(blocks.out()).path("fetches").asText())
                .isEqualTo("blocks");
        store.warpctl("prefetch", "--stop", "--plan", "tensors blocks").requireSuccess();
        Shell.Result nope = store.warpctl("prefetch", "--order", orderFile.toString(), "--fetch", "some");
        assertThat(nope.exit()).isNotZero();
        assertThat(nope.err()).contains("--fetch is 'some'", "Give --fetch auto, blocks or files.");
    }

    /**
     * A safetensors dataset of one file of 4,096 tensors of 16 KiB (64 MiB), written by numpy from
     * the format (seed 001's dataset_manifest.json beside it); reads the
     * tensors whose numbers it is given through the mount's .npy files and exits 0 if every one
     * equals what was written (prints "bad N: error" for a tensor whose read failed).
     */
    static final String BIG = """
            import json, os, struct, sys
            import numpy as np
            def values():
                return np.random.default_rng(26).standard_normal((4096, 4096)).astype("<f4")
            if sys.argv[1] == "write":
                v = values()
                header = {("emb/%d" % i): {"dtype": "F32", "shape": [4096], "data_offsets": [i * 16384, (i + 1) * 16384]}
                          for i in range(4096)}
                h = json.dumps(header).encode()
                h += b" " * (-len(h) % 8)
                os.makedirs(sys.argv[2], exist_ok=True)
                with open(os.path.join(sys.argv[2], "big.safetensors"), "wb") as f:
                    f.write(struct.pack("<Q", len(h)) + h + v.tobytes())
                size = os.path.getsize(os.path.join(sys.argv[2], "big.safetensors"))
                with open(os.path.join(sys.argv[2], "dataset_manifest.json"), "w") as m:
                    json.dump({"format_version": "1.0", "total_samples": 4096, "total_bytes": size,
                               "shards": [{"file": "big.safetensors", "samples_count": 4096, "bytes": size}]}, m)
            else:
                v, bad = values(), 0
                for i in map(int, sys.argv[3].split(",")):
                    try:
                        got = np.load(os.path.join(sys.argv[2], "big.tensors", "emb", "%d.npy" % i), mmap_mode="r")
                        assert np.array_equal(np.asarray(got), v[i]), i
                    except OSError as e:
                        print("bad", i, e)
                        bad += 1
                sys.exit(1 if bad else 0)
            """;

    /**
     * Issue 26: a tensor read through the mount is fetched as a range of its own, checked against
     * the SHA-256 publish wrote for it, not through the 1 MiB blocks around it, while such reads
     * are sparse; many a block, they are served by the blocks (a GET per tensor would be a round
     * trip each); bytes that fail the hash fail the read (and the blocks' own hashes too), never
     * reach the reader; a version published without tensor hashes (--no-tensor-hashes, for
     * releases before manifest format 4) reads the same bytes through the blocks.
     */
    @Test
    void aTensorIsFetchedAsItsOwnCheckedRangeNotTheBlocksAroundIt() throws Exception {
        Files.writeString(store.work.resolve("big.py"), BIG);
        Path src = store.work.resolve("big");
        store.python("big.py", "write", src.toString()).requireSuccess();
        store.warpctl("publish", "st/big", "--artifact", "t=" + src, "--set-latest").requireSuccess();
        store.warpctl("publish", "st/big0", "--artifact", "t=" + src, "--set-latest", "--no-tensor-hashes").requireSuccess();
        Path root = store.mount.resolve("st/big/t");
        MountIT.waitFor(() -> Files.isDirectory(root));
        assertThat(Files.readString(store.mount.resolve("st/big/.warp/manifest.json")))
                .contains("\"format_version\":5", "\"tensor_hashes\":", "\"tensor_headers\":");
        assertThat(Files.readString(store.mount.resolve("st/big0/.warp/manifest.json")))
                .contains("\"format_version\":1").doesNotContain("tensor_hashes");

        // The folder: the file's header deflated (330 KB of JSON, about 40 KB deflated) and its
        // tensors' hashes (128 KB), not its 64 MiB, nor its header itself.
        store.s3.resetCounters();
        assertTensorsListed(root);
        long folder = store.s3.counters().bytesServed();
        assertThat(folder).as("bytes fetched to list the tensors").isBetween(130_000L, 300_000L);
        // The hashes (32 blocks of 4 KiB) in one GET, not one each (audit 50): the header, the
        // hash blob's entry for the file (a few blocks, found by halving) and the hashes.
        assertThat(store.s3.counters().gets()).as("GETs to list the tensors").isLessThanOrEqualTo(12);
        // 32 tensors at random: about 512 KiB, where each would cost a 1 MiB block.
        String picks = String.join(",", new java.util.Random(26).ints(32, 0, 4096).mapToObj(String::valueOf).toList());
        store.s3.resetCounters();
        Shell.Result read = store.python("big.py", "read", root.toString(), picks);
        assertThat(read.exit()).as(read.out() + read.err()).isZero();
        assertThat(store.s3.counters().bytesServed()).as("bytes fetched for 32 tensors of 16 KiB")
                .isBetween(32L * 16384, 4L * 32 * 16384);

        // Wrong bytes from the store fail the read of a tensor not yet cached, and are never served.
        store.s3.faults().corruptNextGets(1000);
        try {
            Shell.Result poisoned = store.python("big.py", "read", root.toString(), "4000");
            assertThat(poisoned.exit()).as(poisoned.out() + poisoned.err()).isEqualTo(1);
            assertThat(poisoned.out()).contains("bad 4000", "Input/output error");
        } finally {
            store.s3.faults().clear();
        }
        // Read again once the store is healthy: a tensor served wrong again and again is not
        // fetched again for a while (5 s after its second failure, up to 30 s: audit 38).
        MountIT.waitFor(() -> store.python("big.py", "read", root.toString(), "4000," + picks).exit() == 0, 40);

        // 600 more at random (about 10 a block): the blocks serve them, far fewer GETs than tensors.
        String many = String.join(",", new java.util.Random(27).ints(600, 0, 4096).mapToObj(String::valueOf).toList());
        store.s3.resetCounters();
        store.python("big.py", "read", root.toString(), many).requireSuccess();
        assertThat(store.s3.counters().gets()).as("GETs for 600 tensors read at random from 64 blocks").isLessThan(250);

        // Without tensor hashes: the same bytes, through the blocks.
        Path old = store.mount.resolve("st/big0/t");
        MountIT.waitFor(() -> Files.isDirectory(old));
        store.python("big.py", "read", old.toString(), picks).requireSuccess();

        // The version without hashes listed first, by a fresh warpd: the folder made through its
        // blocks is not the one the version with hashes reads by (audit 50: the same file's 32
        // tensors then cost 30.9 MB through the blocks, 59x what was read).
        freshWarpd(old);
        assertTensorsListed(old);
        MountIT.waitFor(() -> Files.isDirectory(root));
        assertTensorsListed(root);
        store.s3.resetCounters();
        store.python("big.py", "read", root.toString(), picks).requireSuccess();
        assertThat(store.s3.counters().bytesServed()).as("bytes fetched for 32 tensors of 16 KiB after the other version's listing")
                .isPositive().isLessThanOrEqualTo(4L * 32 * 16384);

        // One bad byte in the store's deflated headers: the header is read from the file itself,
        // checked against the hash the tensor hashes give it, and every tensor reads as before.
        damageBlobOf("st/big", "tensor_headers");
        freshWarpd(root);
        assertTensorsListed(root);
        store.python("big.py", "read", root.toString(), "4000," + picks).requireSuccess();
        assertThat(store.warpd().output()).contains("cannot be read", "it is read from the file instead");

        // One bad byte in the store's tensor hash blob: the shard is intact, and its blocks' own
        // hashes vouch for its tensors, so the folder is read through them (audit 36: every one of
        // its tensors was EIO, and the folder itself).
        damageBlobOf("st/big", "tensor_hashes");
        freshWarpd(root);
        assertTensorsListed(root);
        store.python("big.py", "read", root.toString(), "4000," + picks).requireSuccess();
        assertThat(store.warpd().output()).contains("read through the blocks of their file instead");
    }

    /** Flips one byte, 100 from its end, of the blob the artifact's {@code field} names in the store. */
    private static void damageBlobOf(String dataset, String field) throws IOException {
        String manifest = Files.readString(store.mount.resolve(dataset + "/.warp/manifest.json"));
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"" + field
                + "\":\\{\"blocks\":\"[0-9a-f]{64}\",\"byte_size\":[0-9]+,\"hash\":\"([0-9a-f]{64})\"").matcher(manifest);
        assertThat(m.find()).as(manifest).isTrue();
        String key = io.warpdata.store.StoreLayout.blob(new io.warpdata.manifest.BlobId(m.group(1)));
        byte[] bytes = store.store().get(key);
        bytes[bytes.length - 100] ^= 1;
        store.store().put(key, bytes);
    }

    /** A writer that spells its files "./part-00000.safetensors" lists the same files. */
    @Test
    void filesListedWithALeadingDotSlashAreTheFolderFiles() throws Exception {
        Path dotted = dataset("dotted", 2);
        String m = Files.readString(dotted.resolve("dataset_manifest.json"));
        Files.writeString(dotted.resolve("dataset_manifest.json"), m.replace("\"file\": \"part-", "\"file\": \"./part-"));
        store.warpctl("publish", "st/dotted", "--artifact", "emb=" + dotted, "--set-latest").requireSuccess();
    }
}
