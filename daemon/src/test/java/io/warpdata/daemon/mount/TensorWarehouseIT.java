package io.warpdata.daemon.mount;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tensor warehouses (issue 15, seed 003) end to end: TWH1 shards and their manifest.json
 * written byte by byte from the seed's format by Debian's numpy (not by Warp), published with
 * warpctl, mounted by warpd over a real S3Proxy, and read through the mount with
 * {@code numpy.memmap} as training would: every section of every shard at the header's offsets,
 * byte-exact and equal in value to what was written. Broken warehouses are refused naming the
 * file and publish nothing; a summary beyond its thresholds is refused unless allowed.
 */
class TensorWarehouseIT {
    /**
     * Writes a warehouse as seed 003's ETL job would: three shards (f32 little-endian, f16
     * little-endian, f32 big-endian) of CHW images, boxes padded to max_boxes and the box mask,
     * and manifest.json with a checksum per shard, a summary and thresholds. Deterministic: the
     * reader regenerates every section. {@code --violate} writes a summary with 9% invalid
     * samples against a 5% limit; {@code --thresholds JSON} replaces the thresholds.
     */
    static final String WRITER = """
            import hashlib, json, os, struct, sys
            import numpy as np

            SHARDS = [  # id, samples, width, height, channels, max_boxes, dtype, endianness
                ("00000", 4, 8, 6, 3, 3, "F32", "Little"),
                ("00001", 3, 8, 6, 3, 3, "F16", "Little"),
                ("00002", 2, 5, 4, 3, 2, "F32", "Big"),
            ]

            def np_dtype(dtype, endianness):
                return ("<" if endianness == "Little" else ">") + ("f4" if dtype == "F32" else "f2")

            def sections(i, n, w, h, c, mb, dtype, endianness):
                rng = np.random.default_rng(i)
                t = np_dtype(dtype, endianness)
                images = rng.random((n, c, h, w)).astype(t)
                boxes = np.zeros((n, mb, 4), dtype=t)
                mask = np.zeros((n, mb), dtype=t)
                for s in range(n):
                    k = s % (mb + 1)
                    boxes[s, :k] = rng.random((k, 4))
                    mask[s, :k] = 1
                return images, boxes, mask

            def shard_bytes(i):
                sid, n, w, h, c, mb, dtype, endianness = SHARDS[i]
                images, boxes, mask = sections(i, n, w, h, c, mb, dtype, endianness)
                io = 80
                bo = io + images.nbytes
                mo = bo + boxes.nbytes
                header = b"TWH1" + struct.pack("<7I", 1, 0 if dtype == "F32" else 1, 0 if endianness == "Little" else 1,
                                               w, h, c, mb) + struct.pack("<6Q", n, io, bo, mo, 0, 0)
                assert len(header) == 80
                return header + images.tobytes() + boxes.tobytes() + mask.tobytes()

            if __name__ == "__main__":
                root = sys.argv[1]
                violate = "--violate" in sys.argv
                thresholds = {"max_invalid_ratio": 0.05, "max_missing_ratio": 0.1, "max_empty_ratio": None}
                if "--thresholds" in sys.argv:
                    thresholds = json.loads(sys.argv[sys.argv.index("--thresholds") + 1])
                os.makedirs(root, exist_ok=True)
                transform = {"target_size": [8, 6], "resize_mode": "Letterbox", "max_boxes": 3, "skip_empty": False}
                version = hashlib.sha256(("/data/captures" + json.dumps(transform, sort_keys=True) + "etl-0.3").encode()).hexdigest()
                shards = []
                for i, (sid, n, w, h, c, mb, dtype, endianness) in enumerate(SHARDS):
                    name = "shard_%s.bin" % sid
                    data = shard_bytes(i)
                    with open(os.path.join(root, name), "wb") as f:
                        f.write(data)
                    shards.append({"id": sid, "relative_path": name, "shard_version": 1, "samples": n, "width": w,
                                   "height": h, "channels": c, "max_boxes": mb, "dtype": dtype, "endianness": endianness,
                                   "checksum_sha256": hashlib.sha256(data).hexdigest()})
                totals = {"total": 100, "non_empty": 80, "empty": 15, "missing": 3, "invalid": 9 if violate else 2}
                manifest = {"dataset_root": "/data/captures", "transform": transform, "version": version,
                            "version_recipe": "sha256(root + transform + code_version)", "code_version": "etl-0.3",
                            "default_dtype": "F32", "default_shard_version": 1, "created_at_ms": 1764000000000,
                            "thresholds": thresholds,
                            "summary": {"runs": [{"run": "run_1", **totals}], "totals": totals},
                            "shards": shards}
                with open(os.path.join(root, "manifest.json"), "w") as m:
                    json.dump(manifest, m, indent=2)
            """;

    /** Reads every shard through the mount with numpy.memmap, as training does, and compares. */
    static final String READER = """
            import hashlib, json, os, struct, sys
            import numpy as np
            sys.path.insert(0, os.path.dirname(sys.argv[0]))
            from writer import SHARDS, sections, shard_bytes, np_dtype
            root = sys.argv[1]
            manifest = json.load(open(os.path.join(root, "manifest.json")))
            checked = 0
            for i, entry in enumerate(manifest["shards"]):
                path = os.path.join(root, entry["relative_path"])
                raw = np.memmap(path, dtype=np.uint8, mode="r")
                assert raw.tobytes() == shard_bytes(i), ("bytes", path)
                assert hashlib.sha256(raw).hexdigest() == entry["checksum_sha256"], ("checksum", path)
                assert raw[:4].tobytes() == b"TWH1"
                version, dtype, endian, w, h, c, mb = struct.unpack("<7I", raw[4:32].tobytes())
                n, io, bo, mo, meta, cs = struct.unpack("<6Q", raw[32:80].tobytes())
                assert (n, w, h, c, mb) == (entry["samples"], entry["width"], entry["height"], entry["channels"],
                                            entry["max_boxes"]), path
                t = np_dtype(entry["dtype"], entry["endianness"])
                images = np.memmap(path, dtype=t, mode="r", offset=io, shape=(n, c, h, w))
                boxes = np.memmap(path, dtype=t, mode="r", offset=bo, shape=(n, mb, 4))
                mask = np.memmap(path, dtype=t, mode="r", offset=mo, shape=(n, mb))
                want = sections(i, n, w, h, c, mb, entry["dtype"], entry["endianness"])
                for got, exp, what in zip((images, boxes, mask), want, ("images", "boxes", "mask")):
                    assert got.dtype == exp.dtype and got.shape == exp.shape, (path, what)
                    assert np.array_equal(got, exp), (path, what)
                assert float(images.min()) >= 0.0 and float(images.max()) < 1.0, path
                assert [int(mask[s].sum()) for s in range(n)] == [s % (mb + 1) for s in range(n)], path
                checked += 1
            print("checked", checked, "shards")
            """;

    private static MountedStore store;

    @BeforeAll
    static void start() throws IOException {
        store = MountedStore.start("it-warehouse");
        Files.writeString(store.work.resolve("writer.py"), WRITER);
        Files.writeString(store.work.resolve("reader.py"), READER);
    }

    @AfterAll
    static void stop() throws IOException {
        if (store != null) {
            store.close();
        }
    }

    /** A fresh warehouse, to publish or to break. */
    private static Path warehouse(String name, String... flags) {
        Path dir = store.work.resolve(name);
        List<String> args = new ArrayList<>(List.of(dir.toString()));
        args.addAll(List.of(flags));
        store.python("writer.py", args.toArray(String[]::new)).requireSuccess();
        return dir;
    }

    private static void readsBackThroughTheMount(Path src, String dataset) throws Exception {
        Path root = store.mount.resolve(dataset).resolve("wh");
        MountIT.waitFor(() -> Files.isDirectory(root));
        assertThat(Shell.run("ls", root.toString()).requireSuccess().out().lines().toList()).containsExactly(
                "manifest.json", "shard_00000.bin", "shard_00001.bin", "shard_00002.bin");
        Shell.Result r = store.python("reader.py", root.toString());
        assertThat(r.exit()).as(r.out() + r.err()).isZero();
        assertThat(r.out()).contains("checked 3 shards");
        for (String f : List.of("manifest.json", "shard_00000.bin", "shard_00001.bin", "shard_00002.bin")) {
            assertThat(Files.readAllBytes(root.resolve(f))).as(f).isEqualTo(Files.readAllBytes(src.resolve(f)));
        }
    }

    @Test
    void aWarehousePublishesAndEveryShardMemoryMapsThroughTheMount() throws Exception {
        Path src = warehouse("good");
        Shell.Result p = store.warpctl("publish", "tw/good", "--artifact", "wh=" + src, "--set-latest");
        assertThat(p.exit()).as(p.err()).isZero();
        readsBackThroughTheMount(src, "tw/good");
        assertThat(store.warpctl("info", "tw/good", "--json").requireSuccess().out()).contains("\"kind\" : \"tensor_warehouse\"");
        assertThat(store.warpctl("inspect", "tw/good").requireSuccess().out()).contains("format: tensor_warehouse",
                "shards: 3", "samples: 9", "dims: 3x4x5 F32 boxes 2:1 3x6x8 F16 boxes 3:1 3x6x8 F32 boxes 3:1");
    }

    private static void refused(Path src, String dataset, String... expected) {
        Shell.Result r = store.warpctl("publish", dataset, "--artifact", "wh=" + src, "--set-latest", "--no-daemon");
        assertThat(r.exit()).as(r.out()).isEqualTo(1);
        assertThat(r.err()).contains(expected).contains("what to do:");
        Shell.Result ls = store.warpctl("list-remote", "tw/");
        assertThat(ls.out()).doesNotContain(dataset);
    }

    /** Overwrites bytes of a file in place. */
    private static void poke(Path file, long at, byte[] bytes) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(at);
            f.write(bytes);
        }
    }

    @Test
    void brokenWarehousesAreRefusedNamingTheFileAndPublishNothing() throws Exception {
        Path magic = warehouse("magic");
        poke(magic.resolve("shard_00001.bin"), 0, "TWH2".getBytes());
        refused(magic, "tw/magic", "shard_00001.bin: magic is 'TWH2', not TWH1");

        Path truncated = warehouse("truncated");
        Path t = truncated.resolve("shard_00000.bin");
        byte[] all = Files.readAllBytes(t);
        Files.write(t, Arrays.copyOf(all, all.length - 4));
        refused(truncated, "tw/truncated", "shard_00000.bin has " + (all.length - 4) + " bytes", "(the file is truncated)");

        Path offset = warehouse("offset");
        // boxes_offset (bytes 48..56) moved 4 bytes back: it no longer follows the image section.
        Path o = offset.resolve("shard_00002.bin");
        long boxes = java.nio.ByteBuffer.wrap(Files.readAllBytes(o), 48, 8).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong();
        poke(o, 48, java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(boxes - 4).array());
        refused(offset, "tw/offset", "shard_00002.bin: boxes_offset is " + (boxes - 4), "(the sections overlap)");

        Path width = warehouse("width");
        String m = Files.readString(width.resolve("manifest.json"));
        Files.writeString(width.resolve("manifest.json"), m.replaceFirst("\"width\": 8", "\"width\": 9"));
        refused(width, "tw/width", "shards[0] (id '00000') says width 9, but the header of shard shard_00000.bin says 8");

        Path dtype = warehouse("dtype");
        String dm = Files.readString(dtype.resolve("manifest.json"));
        Files.writeString(dtype.resolve("manifest.json"), dm.replaceFirst("\"dtype\": \"F16\"", "\"dtype\": \"F32\""));
        refused(dtype, "tw/dtype", "shards[1] (id '00001') says dtype \"F32\", but the header of shard shard_00001.bin"
                + " says 1 (F16)");

        Path checksum = warehouse("checksum");
        Path c = checksum.resolve("shard_00002.bin");
        poke(c, 100, new byte[] {0x7f});
        refused(checksum, "tw/checksum", "says shard shard_00002.bin has SHA-256", "changed after the manifest was written");

        Path missing = warehouse("missing");
        Files.delete(missing.resolve("shard_00001.bin"));
        refused(missing, "tw/missing", "lists shard shard_00001.bin (id '00001'), which the folder lacks", "DatasetIncomplete");

        Path notJson = warehouse("notjson");
        Files.writeString(notJson.resolve("manifest.json"), "{\"dataset_root\": ");
        refused(notJson, "tw/notjson", "manifest.json is not JSON", "ManifestCorrupted");

        Path stray = warehouse("stray");
        Files.copy(stray.resolve("shard_00000.bin"), stray.resolve("shard_00099.bin"));
        refused(stray, "tw/stray", "shard_00099.bin is a TWH1 shard not listed in manifest.json");
    }

    @Test
    void aSummaryBeyondItsThresholdsIsRefusedUnlessAllowed() throws Exception {
        Path src = warehouse("violating", "--violate");
        refused(src, "tw/violating", "its summary violates its thresholds",
                "invalid 9 of 100 (0.09000) > max_invalid_ratio 0.05", "--allow-threshold-violations");
        // Through warpd the refusal is the same, and nothing is published.
        Shell.Result viaDaemon = store.warpctl("publish", "tw/violating", "--artifact", "wh=" + src, "--set-latest");
        assertThat(viaDaemon.exit()).as(viaDaemon.out()).isEqualTo(1);
        assertThat(viaDaemon.err()).contains("publishing through warpd", "invalid 9 of 100 (0.09000) > max_invalid_ratio 0.05");
        assertThat(store.warpctl("list-remote", "tw/").out()).doesNotContain("tw/violating");
        // Allowed: published through warpd (the option travels over the control socket) and mounted.
        Shell.Result p = store.warpctl("publish", "tw/violating", "--artifact", "wh=" + src, "--set-latest",
                "--allow-threshold-violations");
        assertThat(p.exit()).as(p.err()).isZero();
        assertThat(p.out()).contains("note: artifact wh: published although its summary violates its thresholds"
                + " (--allow-threshold-violations): invalid 9 of 100 (0.09000) > max_invalid_ratio 0.05");
        readsBackThroughTheMount(src, "tw/violating");
    }

    @Test
    void thresholdsOfOtherSpellingsAreCheckedAndOnesThatCannotBeReadAreSaidInPublishAndInspect() throws Exception {
        // The spelling of issue 28 (a fraction), a percentage, and one no count in the summary explains.
        Path src = warehouse("spelled", "--thresholds",
                "{\"max_invalid_fraction\": 0.05, \"max_missing_pct\": 5, \"max_foo\": 3}");

        Shell.Result viaDaemon = store.warpctl("publish", "tw/spelled", "--artifact", "wh=" + src, "--set-latest");
        Shell.Result inProcess = store.warpctl("publish", "tw/spelled", "--artifact", "wh=" + src, "--no-daemon", "--json");

        assertThat(viaDaemon.exit()).as(viaDaemon.err()).isZero();
        assertThat(viaDaemon.out()).contains("note: artifact wh: threshold max_foo not checked: no count foo in summary.totals")
                .doesNotContain("max_invalid_fraction", "max_missing_pct");
        assertThat(inProcess.exit()).as(inProcess.err()).isZero();
        assertThat(inProcess.out()).contains("\"notes\" : [ \"artifact wh: threshold max_foo not checked: no count foo in summary.totals\" ]");
        assertThat(store.warpctl("inspect", "tw/spelled").requireSuccess().out())
                .contains("thresholds_not_checked: threshold max_foo not checked: no count foo in summary.totals");
        readsBackThroughTheMount(src, "tw/spelled");
    }
}
