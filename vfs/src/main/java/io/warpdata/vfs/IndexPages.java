package io.warpdata.vfs;

import io.warpdata.blobcache.cache.CacheDirectoryException;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.IndexBytes;
import io.warpdata.manifest.WarpException;
import io.warpdata.store.StoreUnavailableException;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.zip.CRC32C;

/**
 * The page cache of member index files: member indexes are read in place from their verified
 * files in the cache directory, a page at a time, and at most {@link #capacityBytes()} of pages
 * are held on the heap at once, whatever the number and size of the indexes: warpd's memory does
 * not grow with the member count. Set-associative (a page goes to one of {@link #WAYS} slots
 * chosen by its file and number; a newcomer takes an empty one or a random one of them): no
 * lock, no per-read allocation, and the bound is exact. At most {@link #OPEN_FILES} index files
 * are held open (the least recently read are closed), so many open indexes do not exhaust file
 * descriptors. Thread-safe; racing readers of one set at worst read a page twice.
 *
 * <p>Every page read from disk is checked against its CRC32C, as the block cache checks its
 * blocks. The page CRC32Cs of a blob are kept per blob: taken from its bytes as they are fetched
 * (verified by the blob reader, {@link #learn}), or, for a file kept by an earlier process, by the
 * first open of the blob in this process, which reads the file whole and checks its SHA-256 as it
 * takes them. Either way a file is read and hashed once per process at most, and later opens cost
 * nothing. A page that fails, or a file cut
 * short or gone, is not served: the file is fetched again from the store ({@link Refetch}) and
 * the read retried, so a file damaged while warpd runs costs one GET, not a wrong name in a
 * listing nor an EIO until warpd restarts (audit 34). The refetch holds the file's monitor, so
 * that its readers wait for one GET rather than each making one; readers of other files do not
 * wait. A refetch that failed is not tried again for {@link #REFETCH_BACKOFF_NANOS}: the readers
 * of the file fail at once meanwhile.
 */
final class IndexPages {
    private static final Logger LOG = LoggerFactory.getLogger(IndexPages.class);

    /** Fetches a damaged index file again from the store, verified, into its place; returns its path. */
    @FunctionalInterface
    interface Refetch {
        Path again(String why) throws IOException;
    }

    /** How long a failed refetch of a file is not tried again. */
    static final long REFETCH_BACKOFF_NANOS = 5_000_000_000L;
    /** Page CRCs kept per blob, in ints: 1 MiB parts take 64 each; 4 MiB of them. */
    static final long KEPT_CRC_INTS = 1 << 20;

    /** A read that found the file damaged: cut short, or gone. */
    private static final class Damaged extends IOException {
        Damaged(String why) {
            super(why);
        }
    }
    static final int PAGE_SHIFT = 14;
    static final int PAGE = 1 << PAGE_SHIFT;
    static final int OPEN_FILES = 128;
    /**
     * Slots a page may take (its set): a page goes to one of {@code WAYS} slots chosen by its file
     * and number, a newcomer to an empty one or a random one of them. Direct-mapped (one slot),
     * two hot pages that shared a slot read each other out at every other access: a cold {@code
     * find} over 1.28M members read each index page 5.7 times from disk (600 MB of 16 KiB arrays
     * for a 110 MB index, and the collections they cost), as the checks of the parts read ahead
     * and the listing walked their entries and names side by side.
     */
    static final int WAYS = 4;

    private record Page(long file, long number, byte[] bytes) {
    }

    private final AtomicReferenceArray<Page> slots;
    private final int mask;
    private final AtomicLong nextFile = new AtomicLong();
    private final AtomicLong reads = new AtomicLong();
    private final com.github.benmanes.caffeine.cache.Cache<Long, FileChannel> channels =
            com.github.benmanes.caffeine.cache.Caffeine.newBuilder()
                    .maximumSize(OPEN_FILES)
                    .executor(Runnable::run)
                    .<Long, FileChannel>removalListener((id, ch, cause) -> closeQuietly(ch))
                    .build();

    private static void closeQuietly(FileChannel ch) {
        try {
            if (ch != null) {
                ch.close();
            }
        } catch (IOException e) {
            // nothing was written through it
        }
    }

    /** A cache of at most {@code capacityBytes} (rounded down to a power of two of pages, at least 16). */
    IndexPages(long capacityBytes) {
        long pages = Math.max(16, capacityBytes >> PAGE_SHIFT);
        int n = Integer.highestOneBit((int) Math.min(1 << 20, pages));
        this.slots = new AtomicReferenceArray<>(n);
        this.mask = n - 1;
    }

    /** Heap this cache may hold in pages. */
    long capacityBytes() {
        return (long) slots.length() * PAGE;
    }

    /** Forgets every page held (for tests: the next read of each goes to disk). */
    void clear() {
        for (int i = 0; i < slots.length(); i++) {
            slots.set(i, null);
        }
    }

    /** Pages read from disk so far (for tests and gauges). */
    long pageReads() {
        return reads.get();
    }

    /** Files fetched again because a page failed its CRC32C or the file was cut short or gone. */
    private final AtomicLong refetches = new AtomicLong();
    /** The page CRCs of blobs in this process: learned from their fetched bytes, or taken by a first open that checked the file's SHA-256. */
    private final Cache<BlobId, int[]> crcsByBlob = Caffeine.newBuilder()
            .maximumWeight(KEPT_CRC_INTS).weigher((BlobId id, int[] crcs) -> crcs.length).build();

    /** Files read whole at an open, their page CRCs not known here (for tests). */
    private final AtomicLong wholeReads = new AtomicLong();

    /** Files read whole at an open so far (for tests). */
    long wholeReads() {
        return wholeReads.get();
    }

    /** Index files fetched again after damage on disk (for tests and gauges). */
    long refetches() {
        return refetches.get();
    }

    /**
     * The page CRC32Cs of an index blob's bytes, taken as they stream past, a page at a time. For
     * bytes already verified against the blob's id (a fetch), and for the first open of a file.
     */
    static final class PageCrcs {
        private final CRC32C crc = new CRC32C();
        private final int[] crcs;
        private final long length;
        private long seen;
        private int page;
        private int inPage;

        PageCrcs(long length) {
            this.length = length;
            this.crcs = new int[Math.toIntExact((length + PAGE - 1) >>> PAGE_SHIFT)];
        }

        void update(byte[] b, int off, int len) {
            if (len > length - seen) {
                throw new IllegalStateException("more than the blob's " + length + " bytes");
            }
            seen += len;
            while (len > 0) {
                int n = Math.min(len, PAGE - inPage);
                crc.update(b, off, n);
                off += n;
                len -= n;
                inPage += n;
                if (inPage == PAGE) {
                    crcs[page++] = (int) crc.getValue();
                    crc.reset();
                    inPage = 0;
                }
            }
        }

        /** The CRC32C of each page, or null if not all of the blob's bytes went past. */
        int[] done() {
            if (seen != length) {
                return null;
            }
            if (inPage > 0) {
                crcs[page++] = (int) crc.getValue();
                inPage = 0;
            }
            return crcs;
        }
    }

    /**
     * Keeps the page CRC32Cs of blob {@code id}, from its bytes {@code verified[0, len)}, which the
     * caller got verified (the blob reader checks a fetch against the id, or each block against the
     * blob's block hash list): its first open in this process then reads nothing, and each page
     * read from its file is checked against them. This trusts the caller: bytes that are not the
     * blob's would make every page of the good file fail (and be fetched again), never pass.
     */
    void learn(BlobId id, byte[] verified, int len) {
        PageCrcs taken = new PageCrcs(len);
        taken.update(verified, 0, len);
        learn(id, taken.done());
    }

    /** Keeps page CRC32Cs taken from verified bytes (see {@link #learn(BlobId, byte[], int)}); null: nothing. */
    void learn(BlobId id, int[] crcs) {
        if (crcs != null) {
            crcsByBlob.put(id, crcs);
        }
    }

    /** The page CRC32Cs kept for {@code blob}, if this process has them for its {@code pages} pages. */
    private int[] keptCrcs(BlobId blob, int pages) {
        int[] kept = crcsByBlob.getIfPresent(blob);
        return kept != null && kept.length == pages ? kept : null;
    }

    /**
     * The index file at {@code file}, blob {@code id} of {@code length} bytes, read through this
     * cache. Unless this process knows its pages' CRC32Cs (from its fetch, or an earlier open), it
     * is read whole here, checked against its SHA-256 as they are taken: a file damaged before
     * then is caught here and fetched again. {@code refetch} puts it back whenever its disk copy
     * turns out damaged, now or later.
     *
     * @throws WarpException if the file is damaged and fetching it again did not mend it: the
     *     store's own error, or a {@link CacheDirectoryException}
     */
    IndexBytes open(Path file, BlobId id, long length, Refetch refetch) {
        return new PagedFile(file, id, length, nextFile.incrementAndGet(), refetch);
    }

    private byte[] page(PagedFile f, long number) {
        int set = (int) (mix(f.id * 0x9E3779B97F4A7C15L + number)) & mask & -WAYS;
        for (int i = set; i < set + WAYS; i++) {
            Page p = slots.get(i);
            if (p != null && p.file == f.id && p.number == number) {
                return p.bytes;
            }
        }
        byte[] bytes = f.verifiedPage(number);
        reads.incrementAndGet();
        int victim = set + java.util.concurrent.ThreadLocalRandom.current().nextInt(WAYS);
        for (int i = set; i < set + WAYS; i++) {
            if (slots.get(i) == null) {
                victim = i;
                break;
            }
        }
        slots.set(victim, new Page(f.id, number, bytes));
        return bytes;
    }

    private static long mix(long x) {
        x ^= x >>> 33;
        x *= 0xff51afd7ed558ccdL;
        x ^= x >>> 33;
        return x;
    }

    /** One index file. */
    private final class PagedFile implements IndexBytes {
        private volatile Path path;
        private final long length;
        private final long id;
        private final Refetch refetch;
        /** CRC32C of each page, taken when the (verified) file was opened. */
        private final int[] crcs;
        /** Bumped by each refetch: a reader that failed before another reader's refetch just reads again. */
        private volatile int generation;

        PagedFile(Path path, BlobId blob, long length, long id, Refetch refetch) {
            this.path = Objects.requireNonNull(path, "path");
            this.length = length;
            this.id = id;
            this.refetch = Objects.requireNonNull(refetch, "refetch");
            int pages = Math.toIntExact((length + PAGE - 1) >>> PAGE_SHIFT);
            int[] known = keptCrcs(blob, pages);
            try {
                if (known == null) {
                    Taken taken = takeCrcs(blob);
                    if (taken.why() != null) {
                        repair(generation, taken.why());
                        known = keptCrcs(blob, pages); // a refetch learns them from the bytes it fetched
                        if (known == null) {
                            taken = takeCrcs(blob);
                            if (taken.why() != null) {
                                throw cannotRead(new IOException(taken.why() + ", after it was fetched again"), false);
                            }
                        }
                    }
                    if (known == null) {
                        known = taken.crcs();
                        crcsByBlob.put(blob, known);
                    }
                }
            } catch (RuntimeException e) {
                channels.invalidate(id); // no handle left open for an index that did not open
                throw e;
            }
            this.crcs = known;
        }

        /** A file read whole: its pages' CRC32Cs, or why it does not match its blob. */
        private record Taken(int[] crcs, String why) {
        }

        /**
         * Reads the file whole, taking its pages' CRC32Cs and checking its SHA-256 against {@code
         * blob}. An error that says nothing of the file's bytes (an interrupt) is thrown as it is.
         */
        private Taken takeCrcs(BlobId blob) {
            wholeReads.incrementAndGet();
            PageCrcs taken = new PageCrcs(length);
            MessageDigest sha = BlobId.sha256();
            try {
                for (long i = 0, pages = (length + PAGE - 1) >>> PAGE_SHIFT; i < pages; i++) {
                    byte[] page = read(i);
                    taken.update(page, 0, page.length);
                    sha.update(page);
                }
            } catch (Damaged | NoSuchFileException e) {
                return new Taken(null, e.getMessage());
            } catch (IOException e) {
                throw interrupt(e) ? interrupted(e) : cannotRead(e, false);
            }
            return Arrays.equals(sha.digest(), blob.digest())
                    ? new Taken(taken.done(), null) : new Taken(null, "it does not match its SHA-256");
        }

        private static int crc(CRC32C crc, byte[] page) {
            crc.reset();
            crc.update(page);
            return (int) crc.getValue();
        }

        /**
         * Page {@code number}, checked against its CRC32C; a damaged file (a page that fails, the
         * file cut short or gone) is fetched again once. Other read errors (an interrupt) say
         * nothing of the file and are thrown as they are. Read from disk only when the page is
         * not on the heap (a miss of the page cache): the CRC32C is allocated there, beside the
         * page's own array and pread.
         */
        byte[] verifiedPage(long number) {
            for (int attempt = 0; ; attempt++) {
                int seen = generation;
                String why;
                try {
                    byte[] bytes = read(number);
                    if (crc(new CRC32C(), bytes) == crcs[(int) number]) {
                        return bytes;
                    }
                    why = "page " + number + " fails its CRC32C";
                } catch (Damaged | NoSuchFileException e) {
                    why = e.getMessage();
                } catch (IOException e) {
                    throw interrupt(e) ? interrupted(e) : cannotRead(e, false);
                }
                if (attempt == 2) {
                    throw cannotRead(new IOException(why + ", after it was fetched again"), true);
                }
                // A reader that began before another's refetch reads again first; one that still
                // fails after that (a damage new since the refetch) fetches it again itself.
                repair(seen, why);
            }
        }

        /** When a refetch of this file last failed (0: never), and what it threw. */
        private long failedAt;
        private Exception failure;

        /** Whether {@code e} comes of the reader's own interrupt, which says nothing of the store or the disk. */
        private static boolean interrupt(Throwable e) {
            if (Thread.currentThread().isInterrupted()) {
                return true;
            }
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof InterruptedException || t instanceof java.io.InterruptedIOException
                        || t instanceof java.nio.channels.ClosedByInterruptException) {
                    return true;
                }
            }
            return false;
        }

        /**
         * Fetches the file again, unless another reader did since this one began ({@code seen}),
         * or a refetch failed less than {@link #REFETCH_BACKOFF_NANOS} ago. The handles open on
         * the damaged file are closed once the good copy is in place, so that no reader opens the
         * damaged one in between and keeps it. A refetch that the store failed throws the store's
         * own error (StoreUnavailable, PermissionDenied...: what to do next is the store's), as
         * the block cache does; within the back-off, the same one.
         */
        private synchronized void repair(int seen, String why) {
            if (generation != seen) {
                return;
            }
            if (failure != null && System.nanoTime() - failedAt < REFETCH_BACKOFF_NANOS) {
                // A new error for this reader, carrying the one the refetch met (its next step too).
                throw cannotRead(new IOException(why + "; fetching it again failed moments ago: " + failure.getMessage(),
                        failure), true);
            }
            Path fresh;
            try {
                fresh = refetch.again(why);
            } catch (IOException | RuntimeException e) {
                if (!interrupt(e)) { // an interrupted reader's failure is its own: the next reader tries
                    failedAt = System.nanoTime();
                    failure = e;
                    LOG.warn("The member index file {} is damaged on disk ({}), and fetching it again failed: {}", path,
                            why, e.getMessage());
                }
                throw e instanceof WarpException w ? w
                        : cannotRead(new IOException(why + "; fetching it again failed: " + e.getMessage(), e), true);
            }
            path = fresh;
            channels.invalidate(id);
            failure = null;
            refetches.incrementAndGet();
            generation = seen + 1;
            LOG.warn("The member index file {} was damaged on disk ({}): fetched it again from the store", path, why);
        }

        /**
         * A read cut by the reader's own interrupt (warpd stopping, a cancelled warm): nothing
         * wrong with the file or its disk, so not {@link #cannotRead}'s "check the disk". Typed
         * as the block cache's interrupted waits are ({@code Deadlines}).
         */
        private StoreUnavailableException interrupted(IOException e) {
            Thread.currentThread().interrupt();
            return new StoreUnavailableException("Interrupted while reading the member index file " + path.getFileName(),
                    "Nothing to do: the read was cancelled (warpd stopping, or a cancelled warm); nothing is wrong with"
                            + " the file, and it is read again at the next access.", e);
        }

        /**
         * A typed error for the errno mapper: the cache directory's disk, not a bug. After a
         * refetch that failed, its next step is the store's, when the store's error gave one.
         */
        private CacheDirectoryException cannotRead(IOException e, boolean refetched) {
            String next = !refetched ? "Check the cache directory's disk (dmesg); the file is read again at the next access."
                    : e.getCause() instanceof WarpException w ? w.nextStep() + " The member index file is fetched again at"
                    + " the next read." : "Check the store (warpctl status) and the cache directory's disk (dmesg); the"
                    + " member index file is fetched again at the next read.";
            return new CacheDirectoryException(path.getParent(), "holds the member index file " + path.getFileName()
                    + ", which cannot be read (" + e.getMessage() + ")", next, e);
        }

        private byte[] read(long number) throws IOException {
            long at = number << PAGE_SHIFT;
            int n = (int) Math.min(PAGE, length - at);
            byte[] bytes = new byte[n];
            ByteBuffer buf = ByteBuffer.wrap(bytes);
            for (int attempt = 0; ; attempt++) {
                FileChannel ch;
                try {
                    ch = channels.get(id, k -> open());
                } catch (UncheckedIOException e) {
                    throw e.getCause();
                }
                try {
                    while (buf.hasRemaining()) {
                        if (ch.read(buf, at + buf.position()) < 0) { // its size, not where this read stopped (audit 35)
                            throw new Damaged("the file ends at " + ch.size() + " of " + length + " bytes");
                        }
                    }
                    return bytes;
                } catch (java.nio.channels.ClosedChannelException e) {
                    // closed by eviction, or by an interrupt of another reader: reopen once; this
                    // reader's own interrupt would close the new handle too
                    channels.asMap().remove(id, ch);
                    if (attempt > 0 || e instanceof java.nio.channels.ClosedByInterruptException) {
                        throw e;
                    }
                }
            }
        }

        private FileChannel open() {
            try {
                return FileChannel.open(path, StandardOpenOption.READ);
            } catch (NoSuchFileException e) {
                throw new UncheckedIOException(new NoSuchFileException(path.toString(), null, "it is gone"));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public long length() {
            return length;
        }

        private void check(long pos, long n) {
            if (pos < 0 || n < 0 || pos > length - n) {
                throw new io.warpdata.manifest.ManifestCorruptedException("member index file " + path, "length",
                        "a read of " + n + " bytes at " + pos + " falls outside its " + length + " bytes");
            }
        }

        @Override
        public byte get(long pos) {
            check(pos, 1);
            return page(this, pos >>> PAGE_SHIFT)[(int) (pos & (PAGE - 1))];
        }

        @Override
        public int getInt(long pos) {
            check(pos, 4);
            int off = (int) (pos & (PAGE - 1));
            if (off <= PAGE - 4) {
                byte[] p = page(this, pos >>> PAGE_SHIFT);
                return ((p[off] & 0xFF) << 24) | ((p[off + 1] & 0xFF) << 16) | ((p[off + 2] & 0xFF) << 8) | (p[off + 3] & 0xFF);
            }
            byte[] b = new byte[4];
            get(pos, b, 0, 4);
            return ((b[0] & 0xFF) << 24) | ((b[1] & 0xFF) << 16) | ((b[2] & 0xFF) << 8) | (b[3] & 0xFF);
        }

        @Override
        public long getLong(long pos) {
            check(pos, 8);
            return ((long) getInt(pos) << 32) | (getInt(pos + 4) & 0xFFFFFFFFL);
        }

        @Override
        public void get(long pos, byte[] dst, int off, int len) {
            check(pos, len);
            while (len > 0) {
                int in = (int) (pos & (PAGE - 1));
                int n = Math.min(len, PAGE - in);
                System.arraycopy(page(this, pos >>> PAGE_SHIFT), in, dst, off, n);
                pos += n;
                off += n;
                len -= n;
            }
        }

        @Override
        public long retainedBytes() {
            return 64 + 4L * crcs.length;
        }

        @Override
        public String toString() {
            return "PagedFile[" + path + ", " + length + " bytes]";
        }
    }
}
