package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.store.StoreException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** Whole-blob copies: made at a blob's second open, byte for byte, within a budget and the disk's floor. */
class LocalCopiesTest {
    @TempDir
    Path root;
    private LocalCopies copies;
    private long usable = Long.MAX_VALUE / 2;
    private final AtomicInteger reads = new AtomicInteger();
    private volatile boolean failReads;
    private volatile boolean wholeCached = true;
    /** Holds every read until counted down (0: none held). */
    private volatile java.util.concurrent.CountDownLatch hold = new java.util.concurrent.CountDownLatch(0);

    private final DiskSpace space = TestSpace.of(() -> usable, Long.MAX_VALUE / 2);

    private static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static BlobRef ref(byte[] b) {
        return new BlobRef(BlobId.of(b), b.length, BlobId.of(("list" + b.length).getBytes()));
    }

    private LocalCopies open(long budget, long floor, byte[]... blobs) throws IOException {
        return open(new WriteGate(), budget, floor, blobs);
    }

    private LocalCopies open(WriteGate writes, long budget, long floor, byte[]... blobs) throws IOException {
        Path tmp = Files.createDirectories(root.resolve("tmp"));
        return new LocalCopies(root, tmp, writes, budget, floor, space, new LocalCopies.Source() {
            @Override
            public boolean cached(BlobRef blob) {
                return wholeCached;
            }

            @Override
            public void read(BlobRef blob, long offset, ByteBuffer dst, int at, int len) {
                try {
                    hold.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
                reads.incrementAndGet();
                if (failReads) {
                    throw new StoreException("the store is down", null, null);
                }
                for (byte[] b : blobs) {
                    if (BlobId.of(b).equals(blob.id())) {
                        dst.put(at, b, (int) offset, len);
                        return;
                    }
                }
                throw new IllegalStateException("unknown blob");
            }
        });
    }

    @AfterEach
    void close() {
        if (copies != null) {
            copies.close();
        }
    }

    private long tmpFiles() throws IOException {
        try (var tmp = Files.list(root.resolve("tmp"))) {
            return tmp.count();
        }
    }

    /** Opens {@code blob} until its copy is ready (the copier runs in the background). */
    private Path openUntilReady(BlobRef blob) throws InterruptedException {
        for (int i = 0; i < 500; i++) {
            Path p = copies.open(blob);
            if (p != null) {
                return p;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("no copy of " + blob.id());
    }

    @Test
    void aBlobOpenedTwiceIsCopiedByteForByteAndOnceOnly() throws Exception {
        byte[] b = bytes(3 * (1 << 20) + 12_345, 1);
        BlobRef blob = ref(b);
        copies = open(1L << 30, 0, b);
        assertThat(copies.open(blob)).isNull();
        assertThat(reads.get()).isZero(); // one open is not a reason to copy
        Path copy = openUntilReady(blob);
        assertThat(copy).isEqualTo(root.resolve("copies").resolve(blob.id().toString()));
        assertThat(Files.readAllBytes(copy)).isEqualTo(b);
        assertThat(copies.made()).isEqualTo(1);
        assertThat(copies.bytes()).isEqualTo(b.length);
        assertThat(reads.get()).isEqualTo(4); // 1 MiB at a time
        assertThat(copies.open(blob)).isEqualTo(copy);
        assertThat(copies.made()).isEqualTo(1);
        try (var tmp = Files.list(root.resolve("tmp"))) {
            assertThat(tmp).isEmpty();
        }
    }

    /**
     * The cache directory closing waits for a copy under way (it ends whole, renamed into place,
     * its temp file gone) and lets none start after: nothing appears in the folder once it is
     * closed (BlockCacheTest has the same for blocks and hash lists).
     */
    @Test
    void aCopyUnderWayWhenTheDirectoryClosesEndsFirstAndNoneStartsAfter() throws Exception {
        byte[] b = bytes(2 * (1 << 20) + 7, 3);
        byte[] other = bytes(1 << 20, 4);
        WriteGate writes = new WriteGate();
        hold = new java.util.concurrent.CountDownLatch(1);
        copies = open(writes, 1L << 30, 0, b, other);
        BlobRef blob = ref(b);
        copies.open(blob);
        copies.open(blob);
        for (int i = 0; i < 500 && tmpFiles() == 0; i++) {
            Thread.sleep(10);
        }
        assertThat(tmpFiles()).as("the copy has begun").isEqualTo(1);
        Thread release = Thread.ofPlatform().start(() -> {
            try {
                Thread.sleep(300);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            hold.countDown();
        });
        assertThat(writes.close()).as("closed after the copy ended").isTrue();
        release.join();
        assertThat(tmpFiles()).isZero();
        assertThat(Files.readAllBytes(root.resolve("copies").resolve(blob.id().toString()))).isEqualTo(b);
        List<Path> closedWith;
        try (var all = Files.walk(root)) {
            closedWith = all.sorted().toList();
        }
        copies.open(ref(other));
        copies.open(ref(other));
        Thread.sleep(300);
        try (var all = Files.walk(root)) {
            assertThat(all.sorted().toList()).as("nothing made after close").isEqualTo(closedWith);
        }
        assertThat(copies.made()).isEqualTo(1);
    }

    @Test
    void aBlobNotWhollyCachedIsNotCopiedSoACopyNeverCostsAGet() throws Exception {
        byte[] b = bytes(500_000, 9);
        copies = open(1L << 30, 0, b);
        wholeCached = false; // a sparse reader: DuckDB read 2 columns of 8, twice
        for (int i = 0; i < 3; i++) {
            assertThat(copies.open(ref(b))).isNull();
        }
        Thread.sleep(100);
        assertThat(reads.get()).isZero();
        wholeCached = true; // warpctl warm, or a reader of the whole file, cached the rest
        assertThat(Files.readAllBytes(openUntilReady(ref(b)))).isEqualTo(b);
    }

    @Test
    void aFileClosedWithEveryBlockCachedIsCopiedForItsNextOpen() throws Exception {
        byte[] b = bytes(700_000, 10);
        copies = open(1L << 30, 0, b);
        wholeCached = false;
        assertThat(copies.open(ref(b))).isNull();
        copies.closed(ref(b)); // read in part: nothing to copy from
        Thread.sleep(100);
        assertThat(reads.get()).isZero();
        wholeCached = true; // read whole, then closed
        copies.closed(ref(b));
        for (int i = 0; i < 200 && copies.made() == 0; i++) {
            Thread.sleep(10);
        }
        Path copy = copies.open(ref(b)); // the second open finds it
        assertThat(copy).isNotNull();
        assertThat(Files.readAllBytes(copy)).isEqualTo(b);
        copies.closed(ref(b));
        Thread.sleep(50);
        assertThat(copies.made()).as("a blob is copied once").isEqualTo(1);
    }

    @Test
    void aCopyUnderWayWhenTheCopiesAreClearedIsNotKept() throws Exception {
        byte[] b = bytes(300_000, 11);
        copies = open(1L << 30, 0, b);
        hold = new java.util.concurrent.CountDownLatch(1);
        copies.closed(ref(b)); // begins a copy, held at its first read
        Thread.sleep(50);
        copies.clear(); // cache gc --limit 0, or cache verify
        hold.countDown();
        for (int i = 0; i < 100 && reads.get() == 0; i++) {
            Thread.sleep(10);
        }
        Thread.sleep(100);
        assertThat(copies.made()).isZero();
        assertThat(copies.open(ref(b))).isNull();
        try (var made = Files.list(root.resolve("copies")); var tmp = Files.list(root.resolve("tmp"))) {
            assertThat(made).isEmpty();
            assertThat(tmp).isEmpty();
        }
    }

    @Test
    void smallBlobsAndBlobsOverHalfTheBudgetAreNeverCopied() throws Exception {
        byte[] small = bytes((int) LocalCopies.MIN_BYTES - 1, 2);
        byte[] big = bytes(600_000, 3);
        copies = open(1_000_000, 0, small, big);
        for (int i = 0; i < 3; i++) {
            assertThat(copies.open(ref(small))).isNull();
            assertThat(copies.open(ref(big))).isNull();
        }
        Thread.sleep(100);
        assertThat(reads.get()).isZero();
        assertThat(copies.made()).isZero();
    }

    @Test
    void theLeastRecentlyOpenedCopiesGoFirstToStayWithinTheBudget() throws Exception {
        byte[] a = bytes(400_000, 4);
        byte[] b = bytes(400_000, 5);
        byte[] c = bytes(400_000, 6);
        copies = open(1_000_000, 0, a, b, c);
        copies.open(ref(a));
        Path pa = openUntilReady(ref(a));
        copies.open(ref(b));
        openUntilReady(ref(b));
        copies.open(ref(a)); // a is now the most recently opened
        copies.open(ref(c));
        openUntilReady(ref(c));
        assertThat(copies.bytes()).isEqualTo(800_000);
        assertThat(copies.evicted()).isEqualTo(1);
        assertThat(Files.exists(root.resolve("copies").resolve(ref(b).id().toString()))).isFalse();
        assertThat(copies.open(ref(a))).isEqualTo(pa);
        assertThat(Files.readAllBytes(pa)).isEqualTo(a);
    }

    @Test
    void noCopyTakesTheDiskUnderTheFloorAndAFailedReadLeavesNothing() throws Exception {
        byte[] a = bytes(300_000, 7);
        copies = open(1L << 30, 1_000_000, a);
        usable = 1_200_000; // 300 KB more would leave 900 KB: under the floor
        copies.open(ref(a));
        copies.open(ref(a));
        Thread.sleep(200);
        assertThat(reads.get()).isZero();
        assertThat(copies.made()).isZero();

        usable = Long.MAX_VALUE / 2;
        failReads = true;
        copies.open(ref(a));
        for (int i = 0; i < 200 && (copies.failed() == 0 || tmpFiles() > 0); i++) {
            Thread.sleep(10);
        }
        assertThat(copies.failed()).isEqualTo(1);
        assertThat(tmpFiles()).as("the failed copy's temp file is deleted").isZero();
        try (var made = Files.list(root.resolve("copies"))) {
            assertThat(made).isEmpty();
        }
        assertThat(copies.open(ref(a))).isNull();
        failReads = false;
        assertThat(Files.readAllBytes(openUntilReady(ref(a)))).isEqualTo(a); // tried again on a later open
    }

    @Test
    void aCopyKeptFromAnEarlierRunIsServedOnceItHashesToItsNameAndADamagedOneIsDeleted() throws Exception {
        byte[] good = bytes(200_000, 12);
        byte[] damaged = bytes(200_000, 13);
        copies = open(1L << 30, 0, good, damaged);
        Path made = openUntilReady(ref(good)); // the first run: copied at the second open
        copies.open(ref(damaged));
        Path other = openUntilReady(ref(damaged));
        copies.close();
        byte[] bad = damaged.clone();
        bad[100_000] ^= 1;
        Files.setPosixFilePermissions(other, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        Files.write(other, bad); // the disk changed it while warpd was stopped

        reads.set(0);
        copies = open(1L << 30, 0, good, damaged); // warpd starts again on the same directory
        Path again = openUntilReady(ref(good));
        assertThat(again).isEqualTo(made);
        assertThat(Files.readAllBytes(again)).isEqualTo(good);
        for (int i = 0; i < 200 && copies.adoptFailed() == 0; i++) {
            Thread.sleep(10);
        }
        assertThat(copies.adopted()).isEqualTo(1);
        assertThat(copies.adoptFailed()).isEqualTo(1);
        assertThat(Files.exists(other)).as("a copy whose bytes do not hash to its name is deleted").isFalse();
        assertThat(copies.open(ref(damaged))).isNull();
        assertThat(reads.get()).as("the kept copy was served without reading the blob again").isZero();
    }

    @Test
    void verifyDeletesACopyAlteredOnDiskAndKeepsTheOthers() throws Exception {
        byte[] good = bytes(150_000, 14);
        byte[] bad = bytes(150_000, 15);
        copies = open(1L << 30, 0, good, bad);
        Path keep = openUntilReady(ref(good));
        copies.open(ref(bad));
        Path alter = openUntilReady(ref(bad));
        byte[] altered = bad.clone();
        altered[7] ^= 1;
        Files.setPosixFilePermissions(alter, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        Files.write(alter, altered);

        assertThat(copies.verify()).isEqualTo(1);
        assertThat(copies.damaged()).isEqualTo(1);
        assertThat(Files.exists(alter)).isFalse();
        assertThat(copies.open(ref(good))).isEqualTo(keep);
        assertThat(copies.bytes()).isEqualTo(good.length);
        assertThat(Files.readAllBytes(openUntilReady(ref(bad)))).as("made again from the source").isEqualTo(bad);
    }

    @Test
    void discardDeletesEveryCopyThoseOfAnEarlierRunUnhashedAndMakesNoMore() throws Exception {
        byte[] a = bytes(120_000, 16);
        copies = open(1L << 30, 0, a);
        Path made = openUntilReady(ref(a));
        copies.close();
        reads.set(0);
        copies = open(1L << 30, 0, a); // a warpd without passthrough starts on the same directory
        copies.discard();
        Thread.sleep(100);
        assertThat(Files.exists(made)).isFalse();
        assertThat(copies.adopted()).isZero();
        for (int i = 0; i < 3; i++) {
            assertThat(copies.open(ref(a))).isNull();
            copies.closed(ref(a));
        }
        Thread.sleep(100);
        assertThat(reads.get()).isZero();
        try (var left = Files.list(root.resolve("copies"))) {
            assertThat(left).isEmpty();
        }
    }

    @Test
    void filesInTheCopiesDirectoryNotNamedForABlobAreDeletedAtStartAndClearDeletesAll() throws Exception {
        Files.createDirectories(root.resolve("copies"));
        Files.write(root.resolve("copies").resolve("stale"), new byte[10]);
        byte[] a = bytes(100_000, 8);
        copies = open(1L << 30, 0, a);
        assertThat(Files.exists(root.resolve("copies").resolve("stale"))).isFalse();
        copies.open(ref(a));
        Path p = openUntilReady(ref(a));
        copies.clear();
        assertThat(Files.exists(p)).isFalse();
        assertThat(copies.bytes()).isZero();
        assertThat(copies.open(ref(a))).isNull(); // counted again: the next open copies it anew
    }
}
