package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import java.util.Objects;

/**
 * An archive member as the read path sees it: bytes {@code [offset, offset + length)} of
 * {@code blob} (its tar shard), whose own SHA-256 is {@code hash} (from the member index). The
 * hash lets a reader serve the member from wherever the same bytes are cached, and fetch it on
 * its own and check it.
 */
public record BlobMember(BlobRef blob, long offset, long length, BlobId hash) {
    public BlobMember {
        Objects.requireNonNull(blob, "blob");
        Objects.requireNonNull(hash, "hash");
        if (offset < 0 || length < 0 || offset > blob.size() - length) {
            throw new IllegalArgumentException("member [" + offset + ", +" + length + ") of blob " + blob.id()
                    + " of " + blob.size() + " bytes");
        }
    }
}
