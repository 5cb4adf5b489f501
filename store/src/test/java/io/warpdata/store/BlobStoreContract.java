package io.warpdata.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The behaviour every {@link BlobStore} must have. Subclasses provide a fresh, empty store per
 * test through {@link #store()}.
 */
public abstract class BlobStoreContract {
    @TempDir
    protected Path tmp;

    /** An empty store (the same instance for the whole test method). */
    protected abstract BlobStore store();

    protected static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void rangedReadsReturnExactBytesAtStartMiddleAndEnd() {
        byte[] data = bytes(10_000, 1);
        store().put("blobs/a", data);
        byte[] dst = new byte[100];
        store().read("blobs/a", 0, dst, 0, 100);
        assertThat(dst).isEqualTo(java.util.Arrays.copyOfRange(data, 0, 100));
        store().read("blobs/a", 4_321, dst, 10, 50);
        assertThat(java.util.Arrays.copyOfRange(dst, 10, 60)).isEqualTo(java.util.Arrays.copyOfRange(data, 4_321, 4_371));
        store().read("blobs/a", 9_900, dst, 0, 100);
        assertThat(dst).isEqualTo(java.util.Arrays.copyOfRange(data, 9_900, 10_000));
        byte[] one = new byte[1];
        store().read("blobs/a", 9_999, one, 0, 1);
        assertThat(one[0]).isEqualTo(data[9_999]);
    }

    @Test
    void readBeyondEndFails() {
        store().put("k", bytes(100, 2));
        byte[] dst = new byte[20];
        assertThatThrownBy(() -> store().read("k", 90, dst, 0, 20)).isInstanceOf(StoreException.class)
                .isNotInstanceOf(BlobNotFoundException.class);
        assertThatThrownBy(() -> store().read("k", 100, dst, 0, 1)).isInstanceOf(StoreException.class)
                .isNotInstanceOf(BlobNotFoundException.class);
    }

    @Test
    void missingKeyIsBlobNotFound() {
        assertThat(store().length("nope/x")).isEmpty();
        assertThatThrownBy(() -> store().get("nope/x")).isInstanceOf(BlobNotFoundException.class)
                .hasMessageContaining("nope/x");
        assertThatThrownBy(() -> store().read("nope/x", 0, new byte[4], 0, 4))
                .isInstanceOf(BlobNotFoundException.class);
    }

    @Test
    void lengthAndGetReturnWhatWasPut() {
        byte[] data = "hello".getBytes(StandardCharsets.UTF_8);
        store().put("d/e/f.json", data);
        assertThat(store().length("d/e/f.json")).hasValue(5);
        assertThat(store().get("d/e/f.json")).isEqualTo(data);
    }

    @Test
    void emptyObjectRoundTrips() {
        store().put("empty", new byte[0]);
        assertThat(store().length("empty")).hasValue(0);
        assertThat(store().get("empty")).isEmpty();
    }

    @Test
    void aConditionalGetOfAnUnchangedObjectReturnsNothingAndAChangedOneItsNewTag() {
        store().put("p/latest.json", "one".getBytes(StandardCharsets.UTF_8));
        Versioned first = store().getIfChanged("p/latest.json", null, 1024);
        assertThat(first.data()).asString(StandardCharsets.UTF_8).isEqualTo("one");
        assertThat(first.tag()).isNotBlank();
        assertThat(store().getIfChanged("p/latest.json", first.tag(), 1024)).isNull();

        store().put("p/latest.json", "two".getBytes(StandardCharsets.UTF_8));
        Versioned second = store().getIfChanged("p/latest.json", first.tag(), 1024);
        assertThat(second.data()).asString(StandardCharsets.UTF_8).isEqualTo("two");
        assertThat(second.tag()).isNotEqualTo(first.tag());
        assertThatThrownBy(() -> store().getIfChanged("p/none.json", first.tag(), 1024))
                .isInstanceOf(BlobNotFoundException.class);
    }

    @Test
    void aPointerMovesOnlyFromWhereTheWriterSawItAndExactlyOneOfTwoRacingWritersWins() throws Exception {
        String key = "datasets/ws/n/branches/dev.json";
        String created = store().putIfUnchanged(key, "v1".getBytes(StandardCharsets.UTF_8), null);
        assertThatThrownBy(() -> store().putIfUnchanged(key, "again".getBytes(StandardCharsets.UTF_8), null))
                .isInstanceOf(PointerMovedException.class);
        String moved = store().putIfUnchanged(key, "v2".getBytes(StandardCharsets.UTF_8), created);
        assertThat(moved).isNotEqualTo(created);
        assertThatThrownBy(() -> store().putIfUnchanged(key, "v3".getBytes(StandardCharsets.UTF_8), created))
                .isInstanceOf(PointerMovedException.class).hasMessageContaining("moved by someone else");
        assertThat(store().get(key)).asString(StandardCharsets.UTF_8).isEqualTo("v2");

        // Many writers, each having read the same state: exactly one moves the pointer.
        int writers = 8;
        java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(writers);
        java.util.concurrent.atomic.AtomicInteger won = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger lost = new java.util.concurrent.atomic.AtomicInteger();
        List<Thread> threads = new java.util.ArrayList<>();
        for (int i = 0; i < writers; i++) {
            byte[] mine = ("writer-" + i).getBytes(StandardCharsets.UTF_8);
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                    store().putIfUnchanged(key, mine, moved);
                    won.incrementAndGet();
                } catch (PointerMovedException e) {
                    lost.incrementAndGet();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        if (atomicConditionalWrites()) {
            assertThat(won.get()).isEqualTo(1);
            assertThat(lost.get()).isEqualTo(writers - 1);
        } else {
            // A server that ignores the conditions: the check before and the read back after
            // catch every loser but those whose write and read back both fell between two
            // others' writes. Every writer got an answer (won or "moved by someone else").
            assertThat(won.get()).isPositive();
            assertThat(won.get() + lost.get()).isEqualTo(writers);
        }
        assertThat(store().get(key)).asString(StandardCharsets.UTF_8).startsWith("writer-");
    }

    /**
     * Whether the store compares and writes a pointer atomically. S3Proxy 2.6.0, the test server,
     * ignores If-Match and If-None-Match on PUT (AWS S3, MinIO and R2 honour them).
     */
    protected boolean atomicConditionalWrites() {
        return true;
    }

    @Test
    void aPointerIsDeletedOnlyIfUnchanged() {
        String key = "datasets/ws/n/tags/t.json";
        String tag = store().putIfUnchanged(key, "v1".getBytes(StandardCharsets.UTF_8), null);
        assertThatThrownBy(() -> store().deleteIfUnchanged(key, "\"other\""))
                .isInstanceOf(PointerMovedException.class);
        store().deleteIfUnchanged(key, tag);
        assertThat(store().length(key)).isEmpty();
        // A reader that knew the deleted pointer's tag learns that it is gone, not "unchanged".
        assertThatThrownBy(() -> store().getIfChanged(key, tag, 1024)).isInstanceOf(BlobNotFoundException.class);
        assertThatThrownBy(() -> store().deleteIfUnchanged(key, tag)).isInstanceOf(PointerMovedException.class)
                .hasMessageContaining("gone");
    }

    @Test
    void anObjectLargerThanASmallObjectMayBeIsRefusedUnread() {
        store().put("datasets/ws/n/latest.json", bytes(100_000, 3));
        assertThatThrownBy(() -> store().get("datasets/ws/n/latest.json", 1000))
                .isInstanceOf(ObjectTooLargeException.class).hasMessageContaining("1000");
        assertThatThrownBy(() -> store().getIfChanged("datasets/ws/n/latest.json", null, 1000))
                .isInstanceOf(ObjectTooLargeException.class);
        assertThat(store().get("datasets/ws/n/latest.json", 100_000)).hasSize(100_000);
        store().put("small", "{}".getBytes(StandardCharsets.UTF_8));
        assertThat(store().get("small", 2)).hasSize(2);
        assertThatThrownBy(() -> store().get("none", 10)).isInstanceOf(BlobNotFoundException.class);
    }

    @Test
    void putOverwrites() {
        store().put("latest.json", "one".getBytes(StandardCharsets.UTF_8));
        store().put("latest.json", "second".getBytes(StandardCharsets.UTF_8));
        assertThat(new String(store().get("latest.json"), StandardCharsets.UTF_8)).isEqualTo("second");
        assertThat(store().length("latest.json")).hasValue(6);
    }

    @Test
    void putIfAbsentWritesOnceAndNeverReplaces() {
        assertThat(store().putIfAbsent("v/1.json", "first".getBytes(StandardCharsets.UTF_8))).isTrue();
        assertThat(store().putIfAbsent("v/1.json", "other".getBytes(StandardCharsets.UTF_8))).isFalse();
        assertThat(new String(store().get("v/1.json"), StandardCharsets.UTF_8)).isEqualTo("first");
    }

    @Test
    void putIfAbsentFromFileWritesOnceAndNeverReplaces() throws Exception {
        Path f = tmp.resolve("src.bin");
        byte[] data = bytes(300_000, 3);
        Files.write(f, data);
        assertThat(store().putIfAbsent("blobs/sha256/ab/abc", f)).isTrue();
        Files.write(f, bytes(10, 4));
        assertThat(store().putIfAbsent("blobs/sha256/ab/abc", f)).isFalse();
        assertThat(store().get("blobs/sha256/ab/abc")).isEqualTo(data);
    }

    @Test
    void listGivesSortedChildrenWithDirectoriesMarked() {
        byte[] x = {1};
        store().put("datasets/ws/b/latest.json", x);
        store().put("datasets/ws/a/versions/1.json", x);
        store().put("datasets/ws/a/latest.json", x);
        store().put("datasets/ws/c.json", x);
        store().put("datasets/other/z/latest.json", x);
        assertThat(store().list("datasets/ws/")).containsExactly("a/", "b/", "c.json");
        assertThat(store().list("datasets/")).containsExactly("other/", "ws/");
        assertThat(store().list("datasets/ws/a/")).containsExactly("latest.json", "versions/");
        assertThat(store().list("datasets/none/")).isEmpty();
    }

    @Test
    void describeNamesTheStore() {
        assertThat(store().describe()).isNotBlank();
    }
}
