package io.warpdata.daemon.publish;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.MemberIndex;
import io.warpdata.manifest.TensorHashes;
import io.warpdata.manifest.TensorHeaders;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tensor hashes publish writes: for each safetensors file, the SHA-256 of its header and of
 * each tensor in the order of their data offsets, as Python's hashlib computes them from files
 * Python wrote from the format (not Warp's writer).
 */
class TensorHashingTest {
    @TempDir
    Path tmp;

    /**
     * Writes a.safetensors (keys listed out of offset order, a zero-size tensor), sub/same.safetensors
     * (the same bytes: one entry), b.safetensors and notes.txt; prints {file: [header sha, [tensor
     * sha in offset order]]}.
     */
    private static final String WRITER = """
            import hashlib, json, os, struct, sys
            root = sys.argv[1]
            def write(path, tensors):
                header, blobs, at = {}, [], 0
                for name, (dtype, shape, data) in tensors:
                    header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [at, at + len(data)]}
                    blobs.append(data)
                    at += len(data)
                # listed in reverse: the JSON order is not the offset order
                h = json.dumps(dict(reversed(list(header.items())))).encode()
                h += b" " * (-len(h) % 8)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "wb") as f:
                    f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
                return [hashlib.sha256(h).hexdigest(), [hashlib.sha256(d).hexdigest() for _, (_, _, d) in tensors]]
            a = [("emb/0", ("F32", [4], bytes(range(16)))), ("empty", ("F32", [0], b"")),
                 ("emb/1", ("F32", [4], bytes(range(16, 32)))), ("label", ("I64", [2], struct.pack("<qq", 7, 9)))]
            b = [("w", ("U8", [3], b"abc"))]
            out = {"a.safetensors": write(root + "/a.safetensors", a), "b.safetensors": write(root + "/b.safetensors", b)}
            write(root + "/sub/same.safetensors", a)
            with open(root + "/notes.txt", "w") as f:
                f.write("not tensors")
            print(json.dumps(out))
            """;

    @Test
    void eachSafetensorsFileHasItsHeaderAndTensorsHashedInOffsetOrder() throws Exception {
        Path src = Files.createDirectories(tmp.resolve("src"));
        Process p = new ProcessBuilder("/usr/bin/python3", "-c", WRITER, src.toString()).start();
        String stdout = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(new String(p.getErrorStream().readAllBytes())).isZero();
        JsonNode want = new ObjectMapper().readTree(stdout);

        PackedArtifact folder = new ArtifactPacker(tmp.resolve("staging"), 1 << 20).pack("t", src, PublishProgress.NONE);
        assertThat(TensorHashing.of("t", folder, PublishProgress.NONE)).as("a plain folder shows no tensor folders").isEmpty();
        PackedArtifact packed = folder.asFormat(io.warpdata.manifest.ArtifactKind.SAFETENSORS, Map.of());
        assertThat(TensorHashing.of("t", packed, PublishProgress.NONE, false))
                .as("--no-tensor-headers, as the release before: no shard of 64 MiB or more, nothing").isEmpty();
        TensorHashing.Staged hashesOnly = TensorHashing.of("t", packed, PublishProgress.NONE, 0, false).orElseThrow();
        assertThat(hashesOnly.headers()).as("without headers").isNull();
        TensorHashing.Staged both = TensorHashing.of("t", packed, PublishProgress.NONE).orElseThrow();
        assertThat(both.hashes().bytes().orElseThrow()).isEqualTo(hashesOnly.hashes().bytes().orElseThrow());
        StagedBlob staged = both.hashes();
        byte[] blob = staged.bytes().orElseThrow();
        byte[] headers = both.headers().bytes().orElseThrow();
        assertThat(both.headers().blocks().blockSize()).isEqualTo(TensorHashing.BLOCK_SIZE);
        assertThat(TensorHeaders.count(headers, headers.length, "z")).isEqualTo(2);
        assertThat(staged.blocks().blockSize()).as("a few KiB per lookup").isEqualTo(TensorHashing.BLOCK_SIZE);
        int count = TensorHashes.count(Arrays.copyOf(blob, TensorHashes.HEAD_BYTES), blob.length, "t");
        assertThat(count).as("a, b; sub/same is a's bytes").isEqualTo(2);
        Map<BlobId, TensorHashes.Entry> entries = new HashMap<>();
        for (int i = 0; i < count; i++) {
            int at = (int) TensorHashes.entryAt(i);
            TensorHashes.Entry e = TensorHashes.entry(Arrays.copyOfRange(blob, at, at + TensorHashes.ENTRY_BYTES), count,
                    blob.length, "t");
            entries.put(e.member(), e);
            // Its deflated header, at the same place: the JSON Python wrote, byte for byte.
            int zAt = (int) TensorHeaders.entryAt(i);
            TensorHeaders.Entry z = TensorHeaders.entry(Arrays.copyOfRange(headers, zAt, zAt + TensorHeaders.ENTRY_BYTES),
                    count, headers.length, "z");
            assertThat(z.member()).isEqualTo(e.member());
            byte[] json = TensorHeaders.inflate(Arrays.copyOfRange(headers, (int) z.at(), (int) z.at() + z.length()),
                    e.headerLength(), e.header(), "z");
            assertThat(BlobId.of(json)).isEqualTo(e.header());
        }
        MemberIndex members = packed.members();
        for (String file : List.of("a.safetensors", "b.safetensors", "sub/same.safetensors")) {
            TensorHashes.Entry e = entries.get(members.hash(members.find(file)));
            assertThat(e).as(file).isNotNull();
            JsonNode w = want.get(file.equals("sub/same.safetensors") ? "a.safetensors" : file);
            assertThat(e.header().hex()).isEqualTo(w.get(0).asText());
            byte[] array = Arrays.copyOfRange(blob, (int) e.hashesAt(), (int) (e.hashesAt() + e.hashesLength()));
            assertThat(BlobId.of(array)).isEqualTo(e.hashes());
            List<String> got = new ArrayList<>();
            TensorHashes.hashes(array).forEach(h -> got.add(h.hex()));
            List<String> expected = new ArrayList<>();
            w.get(1).forEach(h -> expected.add(h.asText()));
            assertThat(got).as(file).isEqualTo(expected);
        }
    }

    @Test
    void anArtifactWithoutSafetensorsHasNone() throws Exception {
        Path src = Files.createDirectories(tmp.resolve("plain"));
        Files.writeString(src.resolve("a.txt"), "a");
        Files.write(src.resolve("x.safetensors.bak"), new byte[64]);
        PackedArtifact packed = new ArtifactPacker(tmp.resolve("staging"), 1 << 20).pack("t", src, PublishProgress.NONE)
                .asFormat(io.warpdata.manifest.ArtifactKind.SAFETENSORS, Map.of());
        assertThat(TensorHashing.of("t", packed, PublishProgress.NONE)).isEmpty();
    }

    /**
     * Past the most tensors an artifact may have hashed, counting every shard's, the files of the
     * large shards are hashed as the release before did (no headers), not none (review 93).
     */
    @Test
    void pastTheMostTensorsOnlyTheLargeShardsFilesAreHashed() throws Exception {
        Path src = Files.createDirectories(tmp.resolve("many"));
        String writer = """
                import json, os, struct, sys
                def write(path, tensors):
                    header, at = {}, 0
                    for name, data in tensors:
                        header[name] = {"dtype": "U8", "shape": [len(data)], "data_offsets": [at, at + len(data)]}
                        at += len(data)
                    h = json.dumps(header).encode()
                    h += b" " * (-len(h) % 8)
                    with open(path, "wb") as f:
                        f.write(struct.pack("<Q", len(h)) + h + b"".join(d for _, d in tensors))
                root = sys.argv[1]
                write(root + "/a-large.safetensors", [("t%d" % i, bytes([i]) * 3000) for i in range(3)])
                write(root + "/b-small.safetensors", [("x", b"xyz")])
                write(root + "/c-small.safetensors", [("y", b"abc")])
                """;
        Process p = new ProcessBuilder("/usr/bin/python3", "-c", writer, src.toString()).start();
        assertThat(p.waitFor()).as(new String(p.getErrorStream().readAllBytes())).isZero();
        PackedArtifact packed = new ArtifactPacker(tmp.resolve("staging-many"), 4096).pack("t", src, PublishProgress.NONE)
                .asFormat(io.warpdata.manifest.ArtifactKind.SAFETENSORS, Map.of());
        MemberIndex members = packed.members();
        long large = packed.shards().get(members.shard(members.find("a-large.safetensors"))).size();
        assertThat(packed.shards().get(members.shard(members.find("b-small.safetensors"))).size())
                .as("the small files' shard").isLessThan(large);

        List<String> notes = new ArrayList<>();
        PublishProgress progress = new PublishProgress() {
            @Override
            public void note(String text) {
                notes.add(text);
            }
        };
        assertThat(TensorHashing.of("t", packed, progress, 0, true, 5, large).orElseThrow().headers())
                .as("5 tensors: all hashed, with headers").isNotNull();
        assertThat(notes).isEmpty();

        TensorHashing.Staged largeOnly = TensorHashing.of("t", packed, progress, 0, true, 4, large).orElseThrow();
        assertThat(largeOnly.headers()).as("as the release before: no headers").isNull();
        byte[] blob = largeOnly.hashes().bytes().orElseThrow();
        assertThat(TensorHashes.count(Arrays.copyOf(blob, TensorHashes.HEAD_BYTES), blob.length, "t"))
                .as("the large shard's file only").isEqualTo(1);
        TensorHashes.Entry e = TensorHashes.entry(Arrays.copyOfRange(blob, (int) TensorHashes.entryAt(0),
                (int) TensorHashes.entryAt(0) + TensorHashes.ENTRY_BYTES), 1, blob.length, "t");
        assertThat(e.member()).isEqualTo(members.hash(members.find("a-large.safetensors")));
        assertThat(notes).singleElement().asString().contains("more than 4 tensors in all", "hashing the 3 of shards of "
                + large + " bytes or more only, without their headers");

        notes.clear();
        assertThat(TensorHashing.of("t", packed, progress, 0, true, 2, large)).as("3 in the large shard alone").isEmpty();
        assertThat(notes).singleElement().asString().contains("more than 2 tensors; they read through their blocks");

        notes.clear();
        assertThat(TensorHashing.of("t", packed, progress, 0, true, 4, large + 1)).as("no shard that large").isEmpty();
        assertThat(notes).singleElement().asString().contains("more than 4 tensors; they read through their blocks");
    }
}
