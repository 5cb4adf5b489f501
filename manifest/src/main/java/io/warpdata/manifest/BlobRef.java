package io.warpdata.manifest;

import java.util.Objects;

/**
 * A blob as a manifest refers to it: its content id, its size, and the id of its block hash
 * list (a side blob, see {@link BlockHashList}) that lets readers verify any block on its own.
 */
public record BlobRef(BlobId id, long size, BlobId blocks) {
    public BlobRef {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(blocks, "blocks");
        Names.requireNonNegative("byte_size", size);
    }
}
