package io.warpdata.manifest;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * The bytes of a stored member index (or one part of one), read by position, big-endian: a
 * byte array on the heap ({@link #of}), or a file in the cache read through a bounded page
 * cache (vfs), so that an index of any size is read without holding it on the heap. Reads past
 * the end throw {@link ManifestCorruptedException}: a valid index never makes one.
 * Implementations are safe to share between threads.
 */
public interface IndexBytes {
    long length();

    byte get(long pos);

    int getInt(long pos);

    long getLong(long pos);

    /** Copies {@code len} bytes at {@code pos} into {@code dst[off, off + len)}. */
    void get(long pos, byte[] dst, int off, int len);

    /** Heap bytes retained by this view (for cache weights): the array, or nothing for a file. */
    long retainedBytes();

    /** A view of a byte array (not copied). */
    static IndexBytes of(byte[] bytes) {
        return new Heap(Objects.requireNonNull(bytes, "bytes"));
    }

    /** Bytes on the heap. */
    final class Heap implements IndexBytes {
        private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
        private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
        private final byte[] b;

        private Heap(byte[] b) {
            this.b = b;
        }

        /** The array itself. */
        public byte[] array() {
            return b;
        }

        @Override
        public long length() {
            return b.length;
        }

        @Override
        public byte get(long pos) {
            return b[check(pos, 1)];
        }

        @Override
        public int getInt(long pos) {
            return (int) INT.get(b, check(pos, 4));
        }

        @Override
        public long getLong(long pos) {
            return (long) LONG.get(b, check(pos, 8));
        }

        @Override
        public void get(long pos, byte[] dst, int off, int len) {
            System.arraycopy(b, check(pos, len), dst, off, len);
        }

        @Override
        public long retainedBytes() {
            return 16 + b.length;
        }

        private int check(long pos, int n) {
            if (pos < 0 || n < 0 || pos > b.length - (long) n) {
                throw pastEnd(pos, n, b.length);
            }
            return (int) pos;
        }
    }

    /** The error for a read outside the bytes: the index's offsets do not fit its length. */
    static ManifestCorruptedException pastEnd(long pos, long n, long length) {
        return new ManifestCorruptedException("member index", "length", "a read of " + n + " bytes at " + pos
                + " falls outside its " + length + " bytes");
    }
}
