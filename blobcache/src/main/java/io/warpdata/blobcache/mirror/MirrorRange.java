package io.warpdata.blobcache.mirror;

import java.util.Objects;

/**
 * A range of a store key that a mirror is asked for: whole blocks of the blob, so that an HTTP
 * cache slicing objects at the block size (nginx {@code slice}) holds exactly what is asked.
 *
 * @param key the store key ({@link io.warpdata.store.StoreLayout}), e.g. {@code blobs/sha256/ab/ab12..}
 * @param offset first byte, a multiple of {@code blockSize}
 * @param length bytes: whole blocks, except that the last block of a blob may be short
 * @param blockSize the blob's block size (recorded in its hash list; 1 MiB by default)
 */
public record MirrorRange(String key, long offset, int length, int blockSize) {
    public MirrorRange {
        Objects.requireNonNull(key, "key");
        if (key.isEmpty() || key.startsWith("/") || key.contains("..") || key.contains("?") || key.contains("#")) {
            throw new IllegalArgumentException("not a store key: '" + key + "'");
        }
        if (blockSize <= 0 || offset < 0 || length <= 0) {
            throw new IllegalArgumentException("bad range of " + key + ": offset " + offset + ", length " + length
                    + ", block size " + blockSize);
        }
        if (offset % blockSize != 0) {
            throw new IllegalArgumentException("range of " + key + " at " + offset + " does not start on a block boundary ("
                    + blockSize + ")");
        }
    }

    /** The last byte, inclusive, as an HTTP Range names it. */
    public long last() {
        return offset + length - 1;
    }

    /** Index of the first block. */
    public long firstBlock() {
        return offset / blockSize;
    }

    /** Number of blocks the range touches. */
    public int blocks() {
        return (int) ((length + (long) blockSize - 1) / blockSize);
    }

    /** {@code bytes=offset-last}. */
    public String httpRange() {
        return "bytes=" + offset + "-" + last();
    }

    @Override
    public String toString() {
        return key + " [" + offset + ", " + (offset + length) + ")";
    }
}
