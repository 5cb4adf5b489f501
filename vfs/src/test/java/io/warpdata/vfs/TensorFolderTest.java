package io.warpdata.vfs;

import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.formats.SafetensorsHeader;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Tensor names to files: keys with '/' become folders, keys that cannot be paths are left out. */
class TensorFolderTest {
    private static final BlobRef SHARD = new BlobRef(BlobId.of("shard".getBytes(StandardCharsets.UTF_8)), 1 << 20,
            BlobId.of("list".getBytes(StandardCharsets.UTF_8)));

    private static SafetensorsHeader.Tensor t(String name, SafetensorsHeader.Dtype dtype, long begin, long... shape) {
        long n = dtype.size();
        for (long d : shape) {
            n *= d;
        }
        return new SafetensorsHeader.Tensor(name, dtype, java.util.Arrays.stream(shape).boxed().toList(), begin, begin + n);
    }

    @Test
    void keysBecomeFilesAndFoldersAndEveryFileIsHeaderPlusBlobSlice() {
        SafetensorsHeader h = new SafetensorsHeader(120, Map.of(), List.of(
                t("emb/0", SafetensorsHeader.Dtype.F32, 0, 4),
                t("emb/1", SafetensorsHeader.Dtype.F32, 16, 4),
                t("w", SafetensorsHeader.Dtype.BF16, 32, 2),
                t("../up", SafetensorsHeader.Dtype.U8, 36, 1),
                t("a//b", SafetensorsHeader.Dtype.U8, 37, 1),
                t("", SafetensorsHeader.Dtype.U8, 38, 1),
                t("q/", SafetensorsHeader.Dtype.U8, 39, 1),
                t("x/y/z", SafetensorsHeader.Dtype.I64, 40, 1)));
        TensorFolder f = TensorFolder.of(SHARD, 1000, h);
        assertThat(f.children("")).extracting(TensorFolder.Child::name).containsExactly("emb", "w.bf16", "x");
        assertThat(f.children("emb")).extracting(TensorFolder.Child::name).containsExactly("0.npy", "1.npy");
        assertThat(f.children("x/y")).extracting(TensorFolder.Child::name).containsExactly("z.npy");
        assertThat(f.isDirectory("x")).isTrue();
        assertThat(f.childDirectoryCount("")).isEqualTo(2);
        assertThat(f.fileCount()).as("'../up', 'a//b', '' and 'q/' cannot be paths (no hidden '.npy')").isEqualTo(4);

        FileContent.Pieces npy = (FileContent.Pieces) f.file("emb/1.npy").orElseThrow();
        assertThat(npy.pieces().get(0)).isInstanceOf(FileContent.Inline.class);
        FileContent.BlobSlice data = (FileContent.BlobSlice) npy.pieces().get(1);
        assertThat(data.offset()).as("member offset + 8 + header + begin").isEqualTo(1000 + 8 + 120 + 16);
        assertThat(data.length()).isEqualTo(16);
        assertThat(npy.size()).as("a 128-byte NPY header (69 bytes, aligned to 64)").isEqualTo(128 + 16);
        FileContent.BlobSlice bf16 = (FileContent.BlobSlice) f.file("w.bf16").orElseThrow();
        assertThat(bf16.offset()).isEqualTo(1000 + 8 + 120 + 32);
        assertThat(bf16.length()).isEqualTo(4);
    }
    /**
     * The review: a folder's weight left out its NPY headers (one per dtype and shape: one a
     * tensor where every shape differs) and its hashes, so the folders' budget could be exceeded
     * twice over.
     */
    @Test
    void aFoldersWeightCountsItsNpyHeadersHashesAndWidePaths() {
        List<SafetensorsHeader.Tensor> sameShape = new java.util.ArrayList<>();
        List<SafetensorsHeader.Tensor> ownShapes = new java.util.ArrayList<>();
        List<BlobId> hashes = new java.util.ArrayList<>();
        for (int i = 0; i < 100; i++) {
            sameShape.add(t("k" + i, SafetensorsHeader.Dtype.U8, i * 200L, 1));
            ownShapes.add(t("k" + i, SafetensorsHeader.Dtype.U8, i * 200L, i + 1));
            hashes.add(BlobId.of(new byte[] {(byte) i}));
        }
        long shared = TensorFolder.of(SHARD, 0, new SafetensorsHeader(120, Map.of(), sameShape)).heapBytes();
        long own = TensorFolder.of(SHARD, 0, new SafetensorsHeader(120, Map.of(), ownShapes)).heapBytes();
        long hashed = TensorFolder.of(SHARD, 0, new SafetensorsHeader(120, Map.of(), ownShapes), hashes).heapBytes();
        assertThat(own - shared).as("99 more NPY headers of 128 bytes").isGreaterThanOrEqualTo(99 * 128);
        assertThat(hashed - own).as("32 bytes a hash").isEqualTo(100 * 32);
        long latin = TensorFolder.of(SHARD, 0, new SafetensorsHeader(120, Map.of(), List.of(t("\u00e9" + "a".repeat(30),
                SafetensorsHeader.Dtype.U8, 0, 1)))).heapBytes();
        long wide = TensorFolder.of(SHARD, 0, new SafetensorsHeader(120, Map.of(), List.of(t("\u4e2d" + "a".repeat(30),
                SafetensorsHeader.Dtype.U8, 0, 1)))).heapBytes();
        assertThat(wide - latin).as("a path beyond Latin-1 takes 2 bytes a character").isGreaterThanOrEqualTo(30);
    }
}
