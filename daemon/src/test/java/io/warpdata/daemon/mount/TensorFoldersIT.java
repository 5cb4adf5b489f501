package io.warpdata.daemon.mount;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code F.tensors/} folders of safetensors files with many tensors, on warpd's default heap
 * (audit 36): files of 100,000 tensors listed in turn filled the heap until warpd died of an
 * OutOfMemoryError at the sixth, and the mount with it. Files written by numpy from the format.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class TensorFoldersIT {
    /** argv: root, files, tensors a file. Tensor e/i of file f is an F32 [1] holding i + 1000 f. */
    static final String WRITER = """
            import json, os, struct, sys
            import numpy as np

            def write(path, n, f):
                header, at = {}, 0
                for i in range(n):
                    header["e/%d" % i] = {"dtype": "F32", "shape": [1], "data_offsets": [at, at + 4]}
                    at += 4
                h = json.dumps(header).encode()
                h += b" " * (-len(h) % 8)
                with open(path, "wb") as out:
                    out.write(struct.pack("<Q", len(h)) + h + (np.arange(n, dtype="<f4") + 1000 * f).tobytes())

            root, files, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
            os.makedirs(root, exist_ok=True)
            shards = []
            for f in range(files):
                name = "part-%05d.safetensors" % f
                write(os.path.join(root, name), n, f)
                shards.append({"file": name, "samples_count": n, "bytes": os.path.getsize(os.path.join(root, name))})
            with open(os.path.join(root, "dataset_manifest.json"), "w") as m:
                json.dump({"format_version": "1.0", "safetensors_version": "1.0", "total_samples": n * files,
                           "total_bytes": sum(s["bytes"] for s in shards), "shards": shards}, m)
            """;

    /** argv: root, file number, tensor numbers...: each tensor's .npy through the mount holds its value. */
    static final String READER = """
            import os, sys
            import numpy as np
            root, f = sys.argv[1], int(sys.argv[2])
            for i in map(int, sys.argv[3:]):
                a = np.load(os.path.join(root, "part-%05d.tensors" % f, "e", "%d.npy" % i))
                assert a.dtype == np.float32 and a.shape == (1,) and a[0] == i + 1000 * f, (f, i, a)
            print("ok")
            """;

    private static MountedStore store;

    @BeforeAll
    static void start() throws IOException {
        store = MountedStore.startWithHeap("384m", "it-tensorfolders");
        Files.writeString(store.work.resolve("writer.py"), WRITER);
        Files.writeString(store.work.resolve("reader.py"), READER);
    }

    @AfterAll
    static void stop() throws IOException {
        if (store != null) {
            store.close();
        }
    }

    @Test
    @Order(1)
    void foldersOfManyTensorsListedInTurnStayWithinTheDefaultHeap() throws Exception {
        Path src = store.work.resolve("many");
        store.python("writer.py", src.toString(), "6", "100000").requireSuccess();
        store.warpctl("publish", "tf/many", "--artifact", "t=" + src, "--set-latest").requireSuccess();
        Path root = store.mount.resolve("tf/many/t");
        MountIT.waitFor(() -> Files.isDirectory(root));
        for (int f = 0; f < 6; f++) {
            Shell.Result ls = Shell.run("ls", root.resolve("part-%05d.tensors/e".formatted(f)).toString());
            assertThat(ls.exit()).as("file %d: %s", f, ls.err()).isZero();
            assertThat(ls.out().lines().count()).isEqualTo(100_000);
            store.python("reader.py", root.toString(), String.valueOf(f), "0", "31337", "99999").requireSuccess();
        }
        // Audit 40: folders read in turn were let go for each other and made again from their
        // headers at almost every lookup (900 bytes a tensor: one of 100,000 took 90 MB of the
        // 115 MB budget). At about 130 bytes a tensor the six are kept together.
        for (int round = 0; round < 2; round++) {
            for (int f = 0; f < 6; f++) {
                store.python("reader.py", root.toString(), String.valueOf(f), String.valueOf(7 + round), "99998").requireSuccess();
            }
        }
        assertThat(store.warpd().output()).doesNotContain("was made again from its header");
        JsonNode read = statsAfter(java.time.Instant.now()).path("read");
        assertThat(read.path("tensor_folders_made").asLong()).as(read.toString()).isGreaterThanOrEqualTo(6);
        assertThat(read.path("tensor_folders_let_go_for_room").asLong()).as(read.toString()).isZero();
        assertThat(store.warpd().isAlive()).as(store.warpd().output()).isTrue();

        // Audit 39: each tensor file the kernel held took a table entry and a node (600,000 here,
        // about 200 MB outside the folders' budget). Their inodes are computed, like members'.
        Shell.Result find = Shell.run("find", root.resolve("part-00005.tensors").toString(), "-type", "f", "-printf", "%i\n");
        assertThat(find.exit()).as(find.err()).isZero();
        List<java.math.BigInteger> inodes = find.out().lines().map(java.math.BigInteger::new).toList();
        assertThat(inodes).hasSize(100_000).doesNotHaveDuplicates()
                .allMatch(i -> i.testBit(63) && i.testBit(62), "computed: bits 63 and 62 set");
        java.time.Instant listed = java.time.Instant.now();
        Shell.Result lsl = Shell.run("ls", "-l", root.resolve("part-00004.tensors/e").toString());
        assertThat(lsl.exit()).as(lsl.err()).isZero();
        assertThat(lsl.out().lines().filter(l -> l.startsWith("-r--r--r--")).count()).isEqualTo(100_000);
        assertThat(kernelInodesAfter(listed)).as("tensor files take no table entry").isLessThan(1_000);
        store.python("reader.py", root.toString(), "4", "1", "99997").requireSuccess();
    }

    /** stats.json's {@code kernel_inodes} gauge, from a file written after {@code since}. */
    private static long kernelInodesAfter(java.time.Instant since) throws Exception {
        JsonNode gauges = statsAfter(since).path("gauges");
        assertThat(gauges.has("kernel_inodes")).as(gauges.toString()).isTrue();
        return gauges.path("kernel_inodes").asLong();
    }

    /** stats.json, written after {@code since}. */
    private static JsonNode statsAfter(java.time.Instant since) throws Exception {
        Path file = store.cache.resolve("stats.json");
        for (int i = 0; i < 200; i++) {
            if (Files.exists(file) && Files.getLastModifiedTime(file).toInstant().isAfter(since.plusSeconds(1))) {
                try {
                    return new ObjectMapper().readTree(file.toFile());
                } catch (IOException torn) {
                    // replaced while read: try again
                }
            }
            Thread.sleep(100);
        }
        throw new AssertionError("stats.json was not written after " + since);
    }

    /**
     * After the six folders of the other test, which the kernel may still hold as directories:
     * warpd's publish of a header of 200,000 tensors (13 MB) ran out of heap beside them while
     * their nodes held the folders (session 30's note; M1 of its review).
     */
    @Test
    @Order(2)
    void aFileOfMoreTensorsThanTheHeapCanListIsRefusedWithWhatToDo() throws Exception {
        Path src = store.work.resolve("huge");
        store.python("writer.py", src.toString(), "1", "150000").requireSuccess();
        // Through warpd, on its default heap, beside the folders listed before.
        store.warpctl("publish", "tf/huge", "--artifact", "t=" + src, "--set-latest").requireSuccess();
        Path root = store.mount.resolve("tf/huge/t");
        MountIT.waitFor(() -> Files.isDirectory(root));
        // 150,000 tensors were refused at 900 bytes a tensor; they list now, beside the six folders.
        Shell.Result ls = Shell.run("ls", root.resolve("part-00000.tensors/e").toString());
        assertThat(ls.exit()).as(ls.err()).isZero();
        assertThat(ls.out().lines().count()).isEqualTo(150_000);
        store.python("reader.py", root.toString(), "0", "0", "149999").requireSuccess();
        // A header too long to parse within the heap's share is refused before it is read: 300,000
        // tensors, 20 MB of JSON (audit 36: 450,000 took 4 minutes of collections to list).
        Path longer = store.work.resolve("longer");
        store.python("writer.py", longer.toString(), "1", "300000").requireSuccess();
        Shell.Result published = store.warpctl("publish", "tf/longer", "--artifact", "t=" + longer, "--set-latest").requireSuccess();
        // Audit 40: publish said nothing of a file the mount's default heap will refuse to list.
        assertThat(published.out() + published.err()).contains("part-00000.safetensors has a header of",
                "300000 tensors", "with a heap of at least", "WARP_HEAP");
        Path longerRoot = store.mount.resolve("tf/longer/t");
        MountIT.waitFor(() -> Files.isDirectory(longerRoot));
        store.s3.resetCounters();
        assertThat(Shell.run("ls", longerRoot.resolve("part-00000.tensors").toString()).exit()).isNotZero();
        assertThat(store.s3.counters().bytesServed()).as("the header is not fetched").isLessThan(2L << 20);
        assertThat(store.warpctl("status").requireSuccess().out()).contains("TensorFolderTooLarge", "has a header of");
        assertThat(store.warpd().output()).contains("WARP_HEAP", "numpy.memmap");
        // The file itself reads as it is, and warpd serves on.
        Files.writeString(store.work.resolve("memmap.py"), """
                import struct, sys
                import numpy as np
                raw = np.memmap(sys.argv[1], dtype=np.uint8, mode="r")
                n = struct.unpack("<Q", raw[:8].tobytes())[0]
                values = np.frombuffer(raw[8 + n:].tobytes(), dtype="<f4")
                assert values.shape == (150000,) and values[149999] == 149999, values[-3:]
                print("ok")
                """);
        store.python("memmap.py", root.resolve("part-00000.safetensors").toString()).requireSuccess();
        assertThat(store.warpd().isAlive()).isTrue();
    }
    /**
     * Audit 40: keys that cannot be file names were left out of the folder with no word, and a
     * training job met them as FileNotFoundError. Publish says how many, with one, and they read
     * from the file itself.
     */
    @Test
    @Order(3)
    void keysThatCannotBeFileNamesAreCountedAtPublish() throws Exception {
        Path src = store.work.resolve("odd");
        Files.writeString(store.work.resolve("odd.py"), """
                import json, os, struct, sys
                import numpy as np
                root = sys.argv[1]
                os.makedirs(root, exist_ok=True)
                keys = ["ok", "bad\\n\\x00", "../up", "a//b", "conf", "conf.npy/g"]
                header, at = {}, 0
                for k in keys:
                    header[k] = {"dtype": "F32", "shape": [1], "data_offsets": [at, at + 4]}
                    at += 4
                h = json.dumps(header).encode()
                h += b" " * (-len(h) % 8)
                path = os.path.join(root, "w.safetensors")
                with open(path, "wb") as out:
                    out.write(struct.pack("<Q", len(h)) + h + np.arange(len(keys), dtype="<f4").tobytes())
                size = os.path.getsize(path)
                with open(os.path.join(root, "dataset_manifest.json"), "w") as m:
                    json.dump({"format_version": "1.0", "safetensors_version": "1.0", "total_samples": 1,
                               "total_bytes": size, "shards": [{"file": "w.safetensors", "samples_count": 1, "bytes": size}]}, m)
                """);
        store.python("odd.py", src.toString()).requireSuccess();
        Shell.Result published = store.warpctl("publish", "tf/odd", "--artifact", "t=" + src, "--set-latest").requireSuccess();
        // The key as JSON writes it (audit 41: its newline made a line of its own, a NUL or escape went raw)
        assertThat(published.out() + published.err()).contains("artifact t: 4 tensor keys cannot be file names",
                "e.g. \"bad\\n\\u0000\" of w.safetensors").doesNotContain("\0");
        Path folder = store.mount.resolve("tf/odd/t/w.tensors");
        MountIT.waitFor(() -> Files.isDirectory(folder));
        assertThat(Shell.run("ls", folder.toString()).requireSuccess().out().lines().toList())
                .containsExactly("conf.npy", "ok.npy");
    }
}
