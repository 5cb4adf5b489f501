package io.warpdata.manifest;

import com.code_intelligence.jazzer.junit.FuzzTest;

import java.nio.charset.StandardCharsets;

/**
 * Every parser of bytes Warp did not write: the only acceptable outcome of any input is a
 * result or a typed {@link WarpException}; any other exception, an allocation the input sized
 * without a bound (an OutOfMemoryError under the fuzzer's small heap) or a loop that does not end
 * (the fuzzer's per-input timeout) is a finding.
 *
 * <p>In the suite each method replays the inputs under
 * {@code src/test/resources/io/warpdata/manifest/ParsersFuzzTestInputs/<method>/}: valid seeds
 * and every finding, minimized. {@code scripts/fuzz} runs the campaigns.
 */
class ParsersFuzzTest {

    @FuzzTest
    void manifestJson(byte[] input) {
        try {
            Manifest m = ManifestCodec.fromJson(input, "fuzz");
            // What parses must write back and hash: canonical form and id are total on manifests.
            ManifestCodec.version(ManifestCodec.fromJson(ManifestCodec.toJson(m), "fuzz"));
        } catch (WarpException expected) {
            // Refused with a typed error: fine.
        }
    }

    @FuzzTest
    void memberIndex(byte[] input) {
        try {
            MemberIndex index = MemberIndex.parse(input, "fuzz");
            // Walk what parsed: every accessor of every member must hold up.
            for (int i = 0; i < index.size(); i++) {
                index.path(i);
                index.hash(i);
                index.find(index.path(i));
            }
            index.forEachChild("", (name, directory, from, to) -> { });
        } catch (WarpException expected) {
            // Refused with a typed error: fine.
        }
    }

    @FuzzTest
    void blockHashList(byte[] input) {
        try {
            BlockHashList list = BlockHashList.parse(input, "fuzz");
            for (int b = 0; b < list.blockCount(); b++) {
                list.blockLength(b);
            }
        } catch (WarpException expected) {
            // Refused with a typed error: fine.
        }
    }

    @FuzzTest
    void datasetRef(byte[] input) {
        try {
            DatasetRef.parse(new String(input, StandardCharsets.UTF_8));
        } catch (WarpException expected) {
            // Refused with a typed error: fine.
        }
    }

    @FuzzTest
    void safetensorsFile(byte[] input) {
        try {
            // A whole file: the 8-byte length, then the header against the file's size.
            long n = io.warpdata.manifest.formats.SafetensorsHeader.headerLength(input, input.length, "fuzz");
            byte[] header = java.util.Arrays.copyOfRange(input, 8, (int) (8 + n));
            var h = io.warpdata.manifest.formats.SafetensorsHeader.parse(header, input.length, "fuzz");
            for (var t : h.tensors()) {
                io.warpdata.manifest.formats.NpyHeader.descr(t.dtype())
                        .ifPresent(d -> io.warpdata.manifest.formats.NpyHeader.of(d, t.shape()));
            }
        } catch (WarpException expected) {
            // Refused with a typed error: fine.
        }
    }

    @FuzzTest
    void twhShard(byte[] input) {
        try {
            // A whole shard: the header against the file's size, then every section size.
            var h = io.warpdata.manifest.formats.TwhHeader.parse(input, input.length, "fuzz");
            if (h.maskEnd() > input.length || h.imageBytes() < 0 || h.boxesBytes() < 0) {
                throw new AssertionError("accepted a header whose sections leave the file: " + h);
            }
        } catch (WarpException expected) {
            // Refused with a typed error: fine.
        }
    }
}
