package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlobId;
import java.util.Objects;

/**
 * A cached block, by content: the blob, the block size its hash list uses, and the index. The
 * block size is part of the key because the same blob published with another block size has
 * different blocks under the same indexes.
 */
record BlockKey(BlobId blob, int blockSize, int index) {
    BlockKey {
        Objects.requireNonNull(blob, "blob");
        if (blockSize <= 0 || index < 0) {
            throw new IllegalArgumentException("bad block key " + blob + " size " + blockSize + " index " + index);
        }
    }

    /** File name in the cache: {@code <blob hex>.<block size>.<index>}. */
    String fileName() {
        return blob.hex() + "." + blockSize + "." + index;
    }

    /** Parses {@link #fileName()}, or returns null. */
    static BlockKey parse(String name) {
        String[] parts = name.split("\\.");
        if (parts.length != 3 || parts[0].length() != 64) {
            return null;
        }
        try {
            return new BlockKey(new BlobId(parts[0]), Integer.parseInt(parts[1]), Integer.parseInt(parts[2]));
        } catch (RuntimeException e) {
            return null;
        }
    }

    @Override
    public String toString() {
        return "block " + index + " of blob " + blob;
    }
}
