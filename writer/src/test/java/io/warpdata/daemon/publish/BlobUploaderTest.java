package io.warpdata.daemon.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warpdata.store.BlobStore;
import io.warpdata.store.InMemoryBlobStore;
import io.warpdata.store.StoreLayout;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A file uploaded from where it is must still be the bytes its hash was taken from: else the
 * store would hold other bytes under that hash for good (a later publish skips the object as
 * present). Tables and tar shards are uploaded from the user's paths, read again after hashing.
 */
class BlobUploaderTest {
    @TempDir
    Path tmp;

    private final InMemoryBlobStore memory = new InMemoryBlobStore();

    @Test
    void aFileRewrittenAfterItWasHashedIsNotUploaded() throws IOException {
        Path file = tmp.resolve("part-0.parquet");
        Files.write(file, new byte[] {1, 2, 3, 4});
        // An input: stamped once its clock tick has passed, so that the rewrite below gets a time of its own.
        StagedBlob blob = StagedBlob.ofFile(file, FileStamp.read(file));
        Files.write(file, new byte[] {9, 9, 9, 9}); // the same size, other bytes: a writer not done yet
        assertThatThrownBy(() -> new BlobUploader(memory, 1, PublishProgress.NONE).uploadMissing(List.of(blob)))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining(file + " changed after it was hashed, before its upload (it was written to)")
                .hasMessageContaining("nothing of it was kept");
        assertThat(memory.length(StoreLayout.blob(blob.id()))).isEmpty();
    }

    @Test
    void aLinkMovedToAnotherFileAfterHashingIsNamedAsSuch() throws IOException {
        Path a = Files.write(tmp.resolve("a.tar"), new byte[] {1, 2, 3});
        Path b = Files.write(tmp.resolve("b.tar"), new byte[] {1, 2, 3, 4});
        Path link = Files.createSymbolicLink(tmp.resolve("shard-0.tar"), a);
        StagedBlob blob = StagedBlob.ofStagedFile(link);
        Files.delete(link);
        Files.createSymbolicLink(link, b);
        assertThatThrownBy(() -> new BlobUploader(memory, 1, PublishProgress.NONE).uploadMissing(List.of(blob)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("it is another file now");
        // The same size and times under another inode number alone (a FUSE source renumbering an
        // untouched file) is no change: only a stamp's bytes and times count (the review).
        FileStamp first = FileStamp.of(a);
        FileStamp renumbered = new FileStamp(first.identity() + 1, first.size(), first.modified(), first.changed());
        org.assertj.core.api.Assertions.assertThatCode(() -> renumbered.requireSame(a, "later")).doesNotThrowAnyException();
        assertThat(memory.length(StoreLayout.blob(blob.id()))).isEmpty();
    }

    /** Rewritten while the store reads it: the object made is deleted again, and the publish fails. */
    @Test
    void anObjectMadeFromAFileThatChangedDuringItsUploadIsDeleted() throws IOException {
        Path file = Files.write(tmp.resolve("part-0.parquet"), new byte[] {1, 2, 3, 4});
        StagedBlob blob = StagedBlob.ofStagedFile(file);
        BlobStore rewriting = new Delegating(memory) {
            @Override
            public boolean putIfAbsent(String key, Path source) {
                try {
                    Files.write(source, new byte[] {5, 6, 7, 8});
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                return memory.putIfAbsent(key, source);
            }
        };
        assertThatThrownBy(() -> new BlobUploader(rewriting, 1, PublishProgress.NONE).uploadMissing(List.of(blob)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("changed during its upload");
        assertThat(memory.length(StoreLayout.blob(blob.id()))).as("the object of other bytes is gone").isEmpty();
    }

    @Test
    void aFileThatStaysPutUploads() throws IOException {
        Path file = Files.write(tmp.resolve("part-0.parquet"), new byte[] {1, 2, 3, 4});
        StagedBlob blob = StagedBlob.ofStagedFile(file);
        assertThat(new BlobUploader(memory, 1, PublishProgress.NONE).uploadMissing(List.of(blob)).uploaded()).isEqualTo(2);
        assertThat(memory.length(StoreLayout.blob(blob.id()))).isEqualTo(OptionalLong.of(4));
    }

    /** Every call to {@code to}. */
    private static class Delegating implements BlobStore {
        private final BlobStore to;

        Delegating(BlobStore to) {
            this.to = to;
        }

        @Override
        public OptionalLong length(String key) {
            return to.length(key);
        }

        @Override
        public void read(String key, long offset, byte[] dst, int dstOff, int len) {
            to.read(key, offset, dst, dstOff, len);
        }

        @Override
        public byte[] get(String key) {
            return to.get(key);
        }

        @Override
        public void put(String key, byte[] data) {
            to.put(key, data);
        }

        @Override
        public boolean putIfAbsent(String key, byte[] data) {
            return to.putIfAbsent(key, data);
        }

        @Override
        public boolean putIfAbsent(String key, Path source) {
            return to.putIfAbsent(key, source);
        }

        @Override
        public void delete(String key) {
            to.delete(key);
        }

        @Override
        public List<String> list(String prefix) {
            return to.list(prefix);
        }

        @Override
        public String describe() {
            return to.describe();
        }

        @Override
        public void close() {
            to.close();
        }
    }
}
