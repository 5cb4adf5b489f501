package io.warpdata.vfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.IndexBytes;
import io.warpdata.manifest.ManifestCorruptedException;
import io.warpdata.manifest.MemberIndex;
import io.warpdata.manifest.MemberIndexBuilder;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The page cache of index files reads exactly the file's bytes, within its fixed bound. */
class IndexPagesTest {
    @TempDir
    Path dir;

    @Test
    void readsEveryByteIntAndLongAsTheArrayDoesAcrossPageBoundaries() throws IOException {
        byte[] data = new byte[IndexPages.PAGE * 40 + 123];
        new Random(3).nextBytes(data);
        Path file = dir.resolve("f");
        Files.write(file, data);
        IndexPages pages = new IndexPages(16L * IndexPages.PAGE); // far smaller than the file
        IndexBytes paged = pages.open(file, data.length);
        IndexBytes heap = IndexBytes.of(data);
        Random r = new Random(4);
        for (int k = 0; k < 20_000; k++) {
            long pos = r.nextInt(data.length - 8);
            if (k % 3 == 0) { // straddle a boundary
                pos = (long) (1 + r.nextInt(39)) * IndexPages.PAGE - 1 - r.nextInt(7);
            }
            assertThat(paged.get(pos)).isEqualTo(heap.get(pos));
            assertThat(paged.getInt(pos)).isEqualTo(heap.getInt(pos));
            assertThat(paged.getLong(pos)).isEqualTo(heap.getLong(pos));
        }
        byte[] all = new byte[data.length];
        paged.get(0, all, 0, all.length);
        assertThat(all).isEqualTo(data);
        assertThat(pages.capacityBytes()).isEqualTo(16L * IndexPages.PAGE);
        assertThatThrownBy(() -> paged.getInt(data.length - 3)).isInstanceOf(ManifestCorruptedException.class);
        assertThatThrownBy(() -> paged.get(-1)).isInstanceOf(ManifestCorruptedException.class);
    }

    @Test
    void aHotPageIsReadFromDiskOnce() throws IOException {
        Path file = dir.resolve("g");
        Files.write(file, new byte[IndexPages.PAGE * 4]);
        IndexPages pages = new IndexPages(1 << 20);
        IndexBytes paged = pages.open(file, IndexPages.PAGE * 4L);
        for (int k = 0; k < 1000; k++) {
            paged.getInt(100);
        }
        assertThat(pages.pageReads()).isEqualTo(1);
    }

    @Test
    void aFlatIndexInAFileAnswersAsOnTheHeapThroughACacheMuchSmallerThanIt() throws IOException {
        MemberIndexBuilder b = new MemberIndexBuilder();
        BlobId h = BlobId.of(new byte[] {7});
        List<String> paths = new ArrayList<>();
        for (int c = 0; c < 50; c++) {
            for (int i = 0; i < 400; i++) {
                String p = String.format("class_%03d/sample_%06d.jpg", c, c * 400 + i);
                paths.add(p);
                b.add(p, c, i * 4096L, 4000 + i, 0644, h);
            }
        }
        MemberIndex heap = b.build();
        byte[] bytes = heap.serialize();
        Path file = dir.resolve("index");
        Files.write(file, bytes);
        IndexPages pages = new IndexPages(16L * IndexPages.PAGE);
        assertThat(bytes.length).isGreaterThan(4 * (int) pages.capacityBytes());
        MemberIndex paged = MemberIndex.open(pages.open(file, bytes.length), "index", MemberIndex.NO_PARTS);
        assertThat(paged.retainedBytes()).isLessThan(1024);
        assertThat(paged.size()).isEqualTo(20_000);
        Random r = new Random(5);
        for (int k = 0; k < 2000; k++) {
            int i = r.nextInt(paths.size());
            assertThat(paged.find(heap.path(i))).isEqualTo(i);
            assertThat(paged.offset(i)).isEqualTo(heap.offset(i));
            assertThat(paged.length(i)).isEqualTo(heap.length(i));
        }
        assertThat(paged.childDirectoryCount("")).isEqualTo(50);
        List<String> names = new ArrayList<>();
        paged.forEachChild("class_007", (name, directory, from, to) -> names.add(name));
        assertThat(names).hasSize(400).startsWith("sample_002800.jpg");
    }

    @Test
    void aFileThatDoesNotHoldAnIndexIsRefusedAsCorrupted() throws IOException {
        Path file = dir.resolve("junk");
        byte[] junk = ByteBuffer.allocate(64).putInt(0x574D4958).putInt(1).putInt(1_000_000).array();
        Files.write(file, junk);
        IndexPages pages = new IndexPages(1 << 20);
        assertThatThrownBy(() -> MemberIndex.open(pages.open(file, junk.length), "junk", MemberIndex.NO_PARTS))
                .isInstanceOf(ManifestCorruptedException.class).hasMessageContaining("count");
    }
}
