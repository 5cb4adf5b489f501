package io.warpdata.vfs;

import io.warpdata.manifest.IndexBytes;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The page cache of member index files: member indexes are read in place from their verified
 * files in the cache directory, a page at a time, and at most {@link #capacityBytes()} of pages
 * are held on the heap at once, whatever the number and size of the indexes: warpd's memory does
 * not grow with the member count. Direct-mapped (a page goes to one slot, chosen by its file and
 * number; a newcomer replaces the slot's page): no lock, no per-read allocation, and the bound is
 * exact. At most {@link #OPEN_FILES} index files are held open (the least recently read are
 * closed), so many open indexes do not exhaust file descriptors. Thread-safe; racing readers of
 * one slot at worst read a page twice.
 */
final class IndexPages {
    static final int PAGE_SHIFT = 14;
    static final int PAGE = 1 << PAGE_SHIFT;
    static final int OPEN_FILES = 128;

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

    /** Pages read from disk so far (for tests and gauges). */
    long pageReads() {
        return reads.get();
    }

    /** The index file at {@code file}, {@code length} bytes, read through this cache. */
    IndexBytes open(Path file, long length) {
        return new PagedFile(file, length, nextFile.incrementAndGet());
    }

    private byte[] page(PagedFile f, long number) {
        int slot = (int) (mix(f.id * 0x9E3779B97F4A7C15L + number)) & mask;
        Page p = slots.get(slot);
        if (p != null && p.file == f.id && p.number == number) {
            return p.bytes;
        }
        byte[] bytes = f.read(number);
        reads.incrementAndGet();
        slots.set(slot, new Page(f.id, number, bytes));
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
        private final Path path;
        private final long length;
        private final long id;

        PagedFile(Path path, long length, long id) {
            this.path = Objects.requireNonNull(path, "path");
            this.length = length;
            this.id = id;
        }

        byte[] read(long number) {
            long at = number << PAGE_SHIFT;
            int n = (int) Math.min(PAGE, length - at);
            byte[] bytes = new byte[n];
            ByteBuffer buf = ByteBuffer.wrap(bytes);
            try {
                for (int attempt = 0; ; attempt++) {
                    FileChannel ch = channels.get(id, k -> open());
                    try {
                        while (buf.hasRemaining()) {
                            if (ch.read(buf, at + buf.position()) < 0) {
                                throw new IOException("the file ends at " + (at + buf.position()) + " of " + length + " bytes");
                            }
                        }
                        break;
                    } catch (java.nio.channels.ClosedChannelException e) {
                        // closed by eviction, or by an interrupt of another reader: reopen once
                        channels.asMap().remove(id, ch);
                        if (attempt > 0) {
                            throw e;
                        }
                    }
                }
            } catch (UncheckedIOException e) {
                throw e;
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the member index file " + path + " (" + e.getMessage()
                        + "); check the cache directory's disk, or remove the file so that warpd fetches it again", e);
            }
            return bytes;
        }

        private FileChannel open() {
            try {
                return FileChannel.open(path, StandardOpenOption.READ);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot open the member index file " + path + " (" + e.getMessage()
                        + "); check the cache directory's disk, or remove the file so that warpd fetches it again", e);
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
            return 64;
        }

        @Override
        public String toString() {
            return "PagedFile[" + path + ", " + length + " bytes]";
        }
    }
}
