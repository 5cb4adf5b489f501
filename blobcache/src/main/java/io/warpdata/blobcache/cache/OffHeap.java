package io.warpdata.blobcache.cache;

import java.util.Objects;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Pointer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A zeroed block of memory outside the Java heap (libc's {@code calloc}), for a table whose size
 * follows what the cache holds rather than the heap ({@link SpareMembers}): warpd's heap is
 * bounded (384 MiB by default) and G1 keeps it full whatever is live, so a table of a million
 * entries there would either not fit or raise every user's resident memory; here it costs what
 * is in use.
 *
 * <p>Every access is checked against the block's size and throws {@link IndexOutOfBoundsException}
 * as an array's would, and {@link #free} makes later accesses throw too: a bug is an exception,
 * never a write to memory that is not ours. Not thread-safe: its owner accesses and frees it under
 * its own lock.
 */
final class OffHeap {
    private static final Logger LOG = LoggerFactory.getLogger(OffHeap.class);

    /** The two libc calls. */
    public interface LibC {
        Pointer calloc(long count, long size);

        void free(Pointer p);
    }

    /** Loads libc at the first allocation of the process (the JVM's lazy class init). */
    private static final class Shared {
        static final LibC LIBC = load();

        private static LibC load() {
            try {
                return LibraryLoader.create(LibC.class).failImmediately().load("c");
            } catch (LinkageError | RuntimeException e) {
                LOG.warn("Memory outside the heap is not available (libc's calloc: {}); members past the disk index's"
                        + " bound are not kept", e.toString());
                return null;
            }
        }
    }

    private Pointer p;
    private final long size;

    private OffHeap(Pointer p, long size) {
        this.p = p;
        this.size = size;
    }

    /** A zeroed block of {@code bytes}, or null where libc is not there or the allocation failed. */
    static OffHeap allocate(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("bytes " + bytes);
        }
        LibC libc = Shared.LIBC;
        if (libc == null) {
            return null;
        }
        Pointer p = libc.calloc(1, bytes);
        if (p == null || p.address() == 0) {
            return null;
        }
        return new OffHeap(p, bytes);
    }

    /** Whether blocks can be allocated at all here (libc loaded). */
    static boolean available() {
        return Shared.LIBC != null;
    }

    long size() {
        return size;
    }

    long getLong(long offset) {
        return pointer(offset, 8).getLong(offset);
    }

    void putLong(long offset, long value) {
        pointer(offset, 8).putLong(offset, value);
    }

    int getInt(long offset) {
        return pointer(offset, 4).getInt(offset);
    }

    void putInt(long offset, int value) {
        pointer(offset, 4).putInt(offset, value);
    }

    /** Gives the memory back; later accesses throw. Idempotent. */
    void free() {
        if (p != null) {
            Shared.LIBC.free(p);
            p = null;
        }
    }

    private Pointer pointer(long offset, int width) {
        Objects.checkFromIndexSize(offset, width, size);
        Pointer q = p;
        if (q == null) {
            throw new IllegalStateException("freed");
        }
        return q;
    }
}
