package io.warpdata.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warpdata.manifest.BlobId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Member index blobs kept as files to be read in place: streamed in, verified, found again. */
class LastKnownGoodBlobFileTest {
    @TempDir
    Path dir;

    private static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void aStreamedBlobIsKeptAsAFileAndFoundAfterARestart() throws IOException {
        byte[] data = bytes(3 << 20, 1);
        BlobId id = BlobId.of(data);
        LastKnownGood known = LastKnownGood.onDisk(dir);
        Optional<Path> kept = known.keepBlob(id, data.length, out -> {
            for (int at = 0; at < data.length; at += 100_000) {
                out.write(data, at, Math.min(100_000, data.length - at));
            }
        });
        assertThat(kept).isPresent();
        assertThat(Files.readAllBytes(kept.get())).isEqualTo(data);
        assertThat(known.keptBlobFile(id)).contains(kept.get());
        LastKnownGood again = LastKnownGood.onDisk(dir);
        assertThat(again.keptBlobFile(id)).contains(kept.get());
        assertThat(again.blob(id)).hasValueSatisfying(b -> assertThat(b).isEqualTo(data));
    }

    /**
     * A member index still being written when warpd stops lands whole before close returns, and
     * nothing is written after (a user may then delete the cache directory).
     */
    @Test
    void aBlobBeingWrittenWhenTheStateClosesLandsFirstAndNothingIsWrittenAfter() throws Exception {
        byte[] data = bytes(1 << 20, 4);
        BlobId id = BlobId.of(data);
        LastKnownGood known = LastKnownGood.onDisk(dir);
        java.util.concurrent.CountDownLatch writing = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            java.util.concurrent.Future<Optional<Path>> kept = threads.submit(() -> known.keepBlob(id, data.length, out -> {
                out.write(data, 0, 1000);
                writing.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    throw new java.io.InterruptedIOException();
                }
                out.write(data, 1000, data.length - 1000);
            }));
            assertThat(writing.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            java.util.concurrent.Future<?> closed = threads.submit(known::close);
            Thread.sleep(300);
            assertThat(closed).as("close waits for the write under way").isNotDone();
            release.countDown();
            closed.get(10, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(kept.get(10, java.util.concurrent.TimeUnit.SECONDS)).hasValueSatisfying(
                    p -> assertThat(p).hasBinaryContent(data));
        } finally {
            release.countDown();
            threads.shutdownNow();
        }
        java.util.List<Path> before = filesUnder(dir);
        byte[] later = bytes(1000, 5);
        assertThat(known.keepBlob(BlobId.of(later), later, later.length)).isFalse();
        assertThat(known.keepBlob(BlobId.of(later), later.length, out -> out.write(later))).isEmpty();
        known.keepManifest("datasets/ws/a/versions/abc.json", "{}".getBytes(), 1);
        known.listed("datasets/", java.util.List.of("ws"), java.time.Instant.now());
        assertThat(filesUnder(dir)).as("nothing written after close").isEqualTo(before);
        assertThat(known.blob(id)).as("what was kept is still read").isPresent();
    }

    private static java.util.List<Path> filesUnder(Path root) throws IOException {
        try (java.util.stream.Stream<Path> s = Files.walk(root)) {
            return s.sorted().toList();
        }
    }

    @Test
    void trimmingDeletesTheLeastRecentlyUsedIndexesDownToTheBudgetAndKeepsManifests() throws IOException {
        LastKnownGood first = LastKnownGood.onDisk(dir);
        BlobId[] ids = new BlobId[4];
        for (int i = 0; i < ids.length; i++) {
            byte[] data = bytes(1000, 10 + i);
            ids[i] = BlobId.of(data);
            first.keepBlob(ids[i], data);
            // kept at day i: blob 0 the least recently used
            Files.setLastModifiedTime(dir.resolve("v1/blobs").resolve(ids[i].hex()),
                    java.nio.file.attribute.FileTime.fromMillis(86_400_000L * (i + 1)));
        }
        first.keepManifest("datasets/ws/a/versions/abc.json", "{}".getBytes(), 1);

        // A later process opens blob 1: it becomes the most recently used.
        LastKnownGood later = LastKnownGood.onDisk(dir);
        assertThat(later.keptBlobFile(ids[1])).isPresent();
        assertThat(later.trimBlobs(4000)).as("under budget: nothing").isZero();

        LastKnownGood restarted = LastKnownGood.onDisk(dir);
        assertThat(restarted.trimBlobs(2500)).isEqualTo(2000);
        assertThat(restarted.keptBlobFile(ids[0])).isEmpty();
        assertThat(restarted.keptBlobFile(ids[2])).isEmpty();
        assertThat(restarted.keptBlobFile(ids[1])).isPresent();
        assertThat(restarted.keptBlobFile(ids[3])).isPresent();
        assertThat(restarted.manifest("datasets/ws/a/versions/abc.json")).isPresent();
        assertThat(restarted.trimBlobs(0)).isEqualTo(2000);
        assertThat(Files.list(dir.resolve("v1/blobs")).count()).isZero();
        assertThat(LastKnownGood.inMemory().trimBlobs(0)).isZero();
    }

    @Test
    void bytesThatDoNotMatchTheIdAreNotKept() {
        byte[] data = bytes(1000, 2);
        BlobId other = BlobId.of(bytes(1000, 3));
        LastKnownGood known = LastKnownGood.onDisk(dir);
        assertThatThrownBy(() -> known.keepBlob(other, data.length, out -> out.write(data)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining(other.toString());
        assertThat(known.keptBlobFile(other)).isEmpty();
    }

    /**
     * Its reader verifies a kept file (warpd's page cache of index files) and asks for it to be
     * forgotten when it does not match: deleted then, unless a good copy is in its place by then.
     */
    @Test
    void aDamagedFileIsDeletedWhenItsReaderForgetsItAndAGoodOneIsNot() throws IOException {
        byte[] data = bytes(5000, 4);
        BlobId id = BlobId.of(data);
        LastKnownGood.onDisk(dir).keepBlob(id, data);
        Path file = dir.resolve("v1/blobs").resolve(id.hex());
        assertThat(file).exists();
        byte[] damaged = data.clone();
        damaged[4000] ^= 1;
        Files.write(file, damaged);
        LastKnownGood again = LastKnownGood.onDisk(dir);
        assertThat(again.keptBlobFile(id)).as("not hashed here: its reader checks it").contains(file);
        again.forgetBlobFile(id);
        assertThat(file).doesNotExist();
        assertThat(again.keptBlobFile(id)).isEmpty();

        // Another reader put a good copy back before this one forgot it: that copy stays.
        again.keepBlob(id, data);
        again.forgetBlobFile(id);
        assertThat(file).exists();
        assertThat(Files.readAllBytes(file)).isEqualTo(data);
    }

    @Test
    void aBlobKeptFromTheStartOfALargerReusedBufferIsExactlyItsBytes() throws IOException {
        byte[] data = bytes(700_000, 6);
        byte[] buffer = bytes(1 << 20, 7); // a pooled buffer: what follows the blob is someone else's
        System.arraycopy(data, 0, buffer, 0, data.length);
        BlobId id = BlobId.of(data);
        LastKnownGood known = LastKnownGood.onDisk(dir);

        assertThat(known.keepBlob(id, buffer, data.length)).isTrue();
        Optional<Path> file = known.keptBlobFile(id);
        assertThat(file).isPresent();
        assertThat(Files.readAllBytes(file.get())).isEqualTo(data);
        assertThat(known.keepBlob(id, buffer, data.length)).as("kept already").isTrue();
        assertThat(LastKnownGood.inMemory().keepBlob(id, buffer, data.length)).as("nowhere to keep it").isFalse();
    }

    @Test
    void inMemoryStateKeepsNoFiles() {
        byte[] data = bytes(100, 5);
        LastKnownGood known = LastKnownGood.inMemory();
        assertThat(known.keepBlob(BlobId.of(data), data.length, out -> out.write(data))).isEmpty();
        assertThat(known.keptBlobFile(BlobId.of(data))).isEmpty();
    }

    @Test
    void aDiskUnderItsFreeSpaceFloorKeepsNoMemberIndexButStillKeepsManifests() {
        byte[] data = bytes(5000, 8);
        BlobId id = BlobId.of(data);
        long[] asked = {0};
        LastKnownGood known = LastKnownGood.onDisk(dir, bytes -> {
            asked[0] = bytes;
            return false;
        });
        assertThat(known.keepBlob(id, data, data.length)).isFalse();
        assertThat(known.keepBlob(id, data.length, out -> out.write(data))).isEmpty();
        assertThat(asked[0]).isEqualTo(data.length);
        assertThat(dir.resolve("v1/blobs").resolve(id.hex())).doesNotExist();
        assertThat(known.blobsNotKeptForRoom()).isEqualTo(2);
        known.keepManifest("datasets/ws/a/versions/x.json", new byte[] {'{', '}'}, 1);
        assertThat(known.manifest("datasets/ws/a/versions/x.json")).isPresent();
    }
}
