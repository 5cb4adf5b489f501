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
        byte[] data = random(IndexPages.PAGE * 40 + 123, 3);
        Path file = written("f", data);
        IndexPages pages = new IndexPages(16L * IndexPages.PAGE); // far smaller than the file
        IndexBytes paged = open(pages, file, data);
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
        assertReadsWhole(paged, data);
        assertThat(pages.capacityBytes()).isEqualTo(16L * IndexPages.PAGE);
        assertThatThrownBy(() -> paged.getInt(data.length - 3)).isInstanceOf(ManifestCorruptedException.class);
        assertThatThrownBy(() -> paged.get(-1)).isInstanceOf(ManifestCorruptedException.class);
    }

    /** A file of {@code data} in the test's folder. */
    private Path written(String name, byte[] data) throws IOException {
        return Files.write(dir.resolve(name), data);
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** Reads the whole file through {@code paged}: exactly {@code data}. */
    private static void assertReadsWhole(IndexBytes paged, byte[] data) {
        byte[] all = new byte[data.length];
        paged.get(0, all, 0, all.length);
        assertThat(all).isEqualTo(data);
    }

    /** The index file {@code file} of {@code data}, put back whole by each refetch, whose reason is added to {@code refetched}. */
    private static IndexBytes refetching(IndexPages pages, Path file, byte[] data, List<String> refetched) {
        return pages.open(file, BlobId.of(data), data.length, why -> {
            refetched.add(why);
            Files.write(file, data); // what the store gives: the verified bytes, again
            return file;
        });
    }

    /** A file of {@code bytes} that no store can give again. */
    private static IndexBytes open(IndexPages pages, Path file, byte[] bytes) {
        return pages.open(file, BlobId.of(bytes), bytes.length, why -> {
            throw new IOException("no store in this test (" + why + ")");
        });
    }

    /** Audit 34: a kept index part damaged while warpd ran was served (a wrong name listed), a cut one gave EIO until a restart. */
    @Test
    void aFileDamagedOrCutOnDiskAfterItWasOpenedIsFetchedAgainNeverServed() throws IOException {
        byte[] data = random(IndexPages.PAGE * 40 + 123, 6);
        Path file = written("part", data);
        List<String> refetched = new ArrayList<>();
        IndexPages pages = new IndexPages(16L * IndexPages.PAGE); // pages leave the heap and are read again
        IndexBytes paged = refetching(pages, file, data, refetched);
        assertReadsWhole(paged, data);

        // One byte flipped in page 5 on disk, after the page left the heap: not served, fetched again.
        byte[] damaged = data.clone();
        damaged[5 * IndexPages.PAGE + 77] ^= 0x20;
        Files.write(file, damaged);
        pages.clear();
        assertReadsWhole(paged, data);
        assertThat(refetched).singleElement().asString().contains("page 5 fails its CRC32C");

        // Cut short: fetched again too, not an EIO for good. Its last page is read first: the
        // message says where the file ends, not where that read began (audit 35).
        Files.write(file, java.util.Arrays.copyOf(data, 500_000));
        pages.clear();
        assertThat(paged.get(data.length - 1)).isEqualTo(data[data.length - 1]);
        assertReadsWhole(paged, data);
        assertThat(refetched).hasSize(2).last().asString().contains("the file ends at 500000 of " + data.length + " bytes");
        assertThat(pages.refetches()).isEqualTo(2);

        // Deleted while open: the open file still reads, every page still checked; nothing to fetch.
        Files.delete(file);
        pages.clear();
        assertReadsWhole(paged, data);
        assertThat(pages.refetches()).isEqualTo(2);
    }

    /** A fetch's verified bytes give the page CRCs: the first open reads nothing, and damage is still caught at the page. */
    @Test
    void crcsLearnedFromAFetchOpenTheFileWithoutReadingItAndStillCatchItsDamage() throws IOException {
        byte[] data = random(IndexPages.PAGE * 10 + 5, 8);
        BlobId id = BlobId.of(data);
        Path file = dir.resolve("fetched");
        IndexPages pages = new IndexPages(1 << 20);
        pages.learn(id, data, data.length);
        List<String> refetched = new ArrayList<>();
        // The file is not there at the open: nothing reads it then.
        IndexBytes paged = refetching(pages, file, data, refetched);
        assertThat(refetched).isEmpty();
        assertThat(pages.wholeReads()).as("not read at the open").isZero();
        assertReadsWhole(paged, data);
        assertThat(refetched).singleElement().asString().contains("gone");

        // Written wrong on its way to disk (page 3): caught by the learned CRC, fetched again.
        byte[] damaged = data.clone();
        damaged[3 * IndexPages.PAGE + 9] ^= 0x40;
        Files.write(file, damaged);
        IndexPages next = new IndexPages(1 << 20);
        next.learn(id, data, data.length);
        IndexBytes again = refetching(next, file, data, refetched);
        assertReadsWhole(again, data);
        assertThat(refetched).hasSize(2).last().asString().contains("page 3 fails its CRC32C");

        // A learned list of the wrong length for the file is not used: the open reads the file whole.
        IndexPages other = new IndexPages(1 << 20);
        other.learn(id, data, IndexPages.PAGE);
        IndexBytes checked = open(other, file, data);
        assertReadsWhole(checked, data);
        assertThat(other.wholeReads()).isEqualTo(1);
        IndexPages.PageCrcs partial = new IndexPages.PageCrcs(data.length);
        partial.update(data, 0, 100);
        assertThat(partial.done()).as("not all the blob's bytes went past").isNull();
    }

    /** A file kept by an earlier process and damaged since is caught at its first open and fetched again, once. */
    @Test
    void aFileDamagedBeforeItsFirstOpenInThisProcessIsFetchedAgainAtTheOpen() throws IOException {
        byte[] data = random(IndexPages.PAGE * 6 + 100, 9);
        BlobId id = BlobId.of(data);
        Path file = dir.resolve("kept");
        byte[] damaged = data.clone();
        damaged[100] ^= 1;
        Files.write(file, damaged);
        IndexPages pages = new IndexPages(1 << 20);
        List<String> refetched = new ArrayList<>();
        IndexBytes paged = pages.open(file, id, data.length, why -> {
            refetched.add(why);
            Files.write(file, data);
            pages.learn(id, data, data.length); // as MemberIndexCache's refetch does
            return file;
        });
        assertThat(refetched).singleElement().asString().contains("it does not match its SHA-256");
        assertReadsWhole(paged, data);
        assertThat(pages.refetches()).isEqualTo(1);
    }

    /**
     * Readers on four threads while the file is damaged in place five times: each damage is
     * fetched again exactly once (the readers that met it wait for that one GET), and no reader
     * gets a wrong byte or an error.
     */
    @Test
    void readersOnManyThreadsMeetingDamageShareOneRefetchAndNeverGetAWrongByte() throws Exception {
        byte[] data = random(IndexPages.PAGE * 40 + 321, 10);
        Path file = written("busy", data);
        IndexPages pages = new IndexPages(16L * IndexPages.PAGE); // most reads go to disk
        java.util.concurrent.atomic.AtomicInteger gets = new java.util.concurrent.atomic.AtomicInteger();
        IndexBytes paged = pages.open(file, BlobId.of(data), data.length, why -> {
            gets.incrementAndGet();
            Path tmp = dir.resolve("busy.tmp");
            Files.write(tmp, data); // a fresh copy renamed into place, as the kept files are
            Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            return file;
        });
        java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
        List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        java.util.concurrent.atomic.AtomicLong sweeps = new java.util.concurrent.atomic.AtomicLong();
        List<Thread> readers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int seed = t;
            Thread reader = new Thread(() -> {
                Random r = new Random(seed);
                byte[] all = new byte[data.length];
                try {
                    while (!done.get()) {
                        int from = r.nextInt(data.length / 2);
                        paged.get(from, all, 0, data.length - from);
                        if (!java.util.Arrays.equals(all, 0, data.length - from, data, from, data.length)) {
                            throw new AssertionError("wrong bytes read from " + from);
                        }
                        sweeps.incrementAndGet();
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            });
            reader.start();
            readers.add(reader);
        }
        try {
            for (int k = 1; k <= 5; k++) {
                try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file,
                        java.nio.file.StandardOpenOption.WRITE)) { // in place: the bits of a failing disk
                    long at = (long) (k * 7) * IndexPages.PAGE + 11;
                    ch.write(ByteBuffer.wrap(new byte[] {(byte) (data[(int) at] ^ 0x04)}), at);
                }
                long deadline = System.nanoTime() + 20_000_000_000L;
                while (gets.get() < k && failures.isEmpty() && System.nanoTime() < deadline) {
                    Thread.sleep(5);
                }
                assertThat(gets).as("damage " + k + " fetched again").hasValue(k);
                Thread.sleep(100); // the readers move on to the good copy
            }
        } finally {
            done.set(true);
            for (Thread reader : readers) {
                reader.join(20_000);
            }
        }
        assertThat(failures).isEmpty();
        assertThat(gets).hasValue(5);
        assertThat(pages.refetches()).isEqualTo(5);
        assertThat(sweeps.get()).isGreaterThan(5);
        assertThat(Files.readAllBytes(file)).isEqualTo(data);
    }

    @Test
    void aDamagedFileThatCannotBeFetchedAgainFailsItsReadsAndServesNothingWrong() throws IOException {
        byte[] data = random(IndexPages.PAGE * 40, 7);
        Path file = written("p", data);
        IndexPages pages = new IndexPages(16L * IndexPages.PAGE);
        java.util.concurrent.atomic.AtomicInteger tries = new java.util.concurrent.atomic.AtomicInteger();
        IndexBytes paged = pages.open(file, BlobId.of(data), data.length, why -> {
            tries.incrementAndGet();
            throw new IOException("the store is down");
        });
        paged.get(0, new byte[data.length], 0, data.length);
        byte[] damaged = data.clone();
        damaged[3] ^= 1;
        Files.write(file, damaged);
        pages.clear();
        assertThatThrownBy(() -> paged.get(0))
                .isInstanceOf(io.warpdata.blobcache.cache.CacheDirectoryException.class)
                .hasMessageContaining("page 0 fails its CRC32C; fetching it again failed: the store is down")
                .satisfies(e -> assertThat(((io.warpdata.manifest.WarpException) e).nextStep())
                        .contains("Check the store (warpctl status)"));
        // The next reader within the back-off fails at once, without another GET.
        assertThatThrownBy(() -> paged.get(1))
                .isInstanceOf(io.warpdata.blobcache.cache.CacheDirectoryException.class)
                .hasMessageContaining("fetching it again failed moments ago: the store is down");
        assertThat(tries).hasValue(1);
        // A file damaged before it is opened (since this process verified it once) is caught at the open.
        assertThatThrownBy(() -> open(new IndexPages(1 << 20), file, data))
                .isInstanceOf(io.warpdata.blobcache.cache.CacheDirectoryException.class)
                .hasMessageContaining("it does not match its SHA-256");

        // A store that fails the refetch: its own typed error reaches the errno mapper (an I/O
        // error of unknown type before, logged as a bug), now and within the back-off.
        IndexPages other = new IndexPages(16L * IndexPages.PAGE);
        Files.write(file, data);
        IndexBytes unreachable = other.open(file, BlobId.of(data), data.length, why -> {
            throw new io.warpdata.store.StoreUnreachableException("the store at http://127.0.0.1:9 did not answer", null);
        });
        unreachable.get(0, new byte[data.length], 0, data.length);
        Files.write(file, damaged);
        other.clear();
        assertThatThrownBy(() -> unreachable.get(0))
                .isInstanceOf(io.warpdata.store.StoreUnreachableException.class)
                .hasMessageContaining("did not answer");
        // Within the back-off, each reader gets an error of its own that carries the store's (and its next step).
        assertThatThrownBy(() -> unreachable.get(0))
                .isInstanceOf(io.warpdata.blobcache.cache.CacheDirectoryException.class)
                .hasMessageContaining("fetching it again failed moments ago: the store at http://127.0.0.1:9 did not answer")
                .hasRootCauseInstanceOf(io.warpdata.store.StoreUnreachableException.class);
    }

    /** A reader interrupted while it fetches a damaged file again starts no back-off: the next reader fetches it. */
    @Test
    void anInterruptedRefetchStartsNoBackOff() throws IOException {
        byte[] data = random(IndexPages.PAGE * 8, 14);
        Path file = written("interrupted", data);
        java.util.concurrent.atomic.AtomicInteger tries = new java.util.concurrent.atomic.AtomicInteger();
        IndexPages.Refetch cutThenGood = why -> {
            if (tries.incrementAndGet() == 1) {
                throw new java.nio.channels.ClosedByInterruptException(); // as a GET the reader's interrupt cut
            }
            return Files.write(file, data);
        };
        IndexPages pages = new IndexPages(16L * IndexPages.PAGE);
        IndexBytes paged = pages.open(file, BlobId.of(data), data.length, cutThenGood);
        byte[] damaged = data.clone();
        damaged[IndexPages.PAGE + 1] ^= 1;
        Files.write(file, damaged);
        pages.clear();
        assertThatThrownBy(() -> paged.get(IndexPages.PAGE + 1)).isInstanceOf(io.warpdata.blobcache.cache.CacheDirectoryException.class);
        assertReadsWhole(paged, data);
        assertThat(tries).hasValue(2);
    }

    /**
     * A reader interrupted while it reads a page (warpd stopping, a cancelled warm) gets an error
     * that says so, not the "check the disk" of a file that cannot be read; the file is not taken
     * for damaged, and the next reader reads it.
     */
    @Test
    void aReaderInterruptedAtAPageReadIsToldSoAndTheFileStaysGood() throws Exception {
        byte[] data = random(IndexPages.PAGE * 4, 15);
        Path file = written("interruptedRead", data);
        java.util.concurrent.atomic.AtomicInteger refetches = new java.util.concurrent.atomic.AtomicInteger();
        IndexPages pages = new IndexPages(16L * IndexPages.PAGE);
        IndexBytes paged = pages.open(file, BlobId.of(data), data.length, why -> {
            refetches.incrementAndGet();
            return Files.write(file, data);
        });
        pages.clear();
        java.util.concurrent.atomic.AtomicReference<Throwable> thrown = new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.atomic.AtomicBoolean stillInterrupted = new java.util.concurrent.atomic.AtomicBoolean();
        Thread reader = new Thread(() -> {
            Thread.currentThread().interrupt();
            try {
                paged.get(IndexPages.PAGE * 2 + 3);
            } catch (Throwable t) {
                thrown.set(t);
            }
            stillInterrupted.set(Thread.currentThread().isInterrupted());
        });
        reader.start();
        reader.join(10_000);
        assertThat(thrown.get()).isInstanceOfSatisfying(io.warpdata.store.StoreUnavailableException.class,
                e -> assertThat(e.nextStep()).contains("Nothing to do: the read was cancelled").doesNotContain("dmesg"))
                .hasMessageContaining("Interrupted while reading the member index file interruptedRead");
        assertThat(stillInterrupted).isTrue();
        assertReadsWhole(paged, data);
        assertThat(refetches).hasValue(0);
    }

    /**
     * Pages that share a slot must not read each other out at every other access: direct-mapped, a
     * cold find over 1.28M members read each index page 5.7 times from disk. Eight files of a
     * working set a quarter of the cache, read side by side ten times over: about once each.
     */
    @Test
    void aWorkingSetWellUnderTheCacheIsReadFromDiskAboutOnceWhenReadSideBySide() throws IOException {
        IndexPages pages = new IndexPages(1024L * IndexPages.PAGE);
        int files = 8;
        int pagesEach = 32; // 256 pages: a quarter of the 1024
        List<IndexBytes> open = new ArrayList<>();
        for (int f = 0; f < files; f++) {
            byte[] data = random(IndexPages.PAGE * pagesEach, 100 + f);
            open.add(open(pages, written("side" + f, data), data));
        }
        for (int pass = 0; pass < 10; pass++) {
            for (int p = 0; p < pagesEach; p++) {
                for (IndexBytes b : open) {
                    b.getInt((long) p * IndexPages.PAGE + 8);
                }
            }
        }
        assertThat(pages.pageReads()).as("page reads for %d pages read ten times", files * pagesEach)
                .isLessThan((long) (files * pagesEach * 1.3));
    }

    @Test
    void aHotPageIsReadFromDiskOnce() throws IOException {
        Path file = dir.resolve("g");
        Files.write(file, new byte[IndexPages.PAGE * 4]);
        IndexPages pages = new IndexPages(1 << 20);
        IndexBytes paged = open(pages, file, new byte[IndexPages.PAGE * 4]);
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
        MemberIndex paged = MemberIndex.open(open(pages, file, bytes), "index", MemberIndex.NO_PARTS);
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
        assertThatThrownBy(() -> MemberIndex.open(open(pages, file, junk), "junk", MemberIndex.NO_PARTS))
                .isInstanceOf(ManifestCorruptedException.class).hasMessageContaining("count");
    }
}
