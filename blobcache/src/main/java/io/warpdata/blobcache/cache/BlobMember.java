package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import java.util.Objects;

/**
 * An archive member as the read path sees it: bytes {@code [offset, offset + length)} of
 * {@code blob} (its tar shard), whose own SHA-256 is {@code hash} (from the member index). The
 * hash lets a reader serve the member from wherever the same bytes are cached, and fetch it on
 * its own and check it.
 *
 * @param lookup a range looked up inside a file rather than a file (a tensor of a safetensors
 *               member, its header, its tensor hashes): fetched on its own up to 1 MiB while
 *               the blob's lookups are sparse (ReadAhead.LOOKUP_SPARSE_MIN), and its fetches
 *               make the blob dense (read whole) only once they have read half of it
 *               (ReadAhead.LOOKUP_DENSE_FRACTION)
 */
public record BlobMember(BlobRef blob, long offset, long length, BlobId hash, boolean lookup) {
    /** A member (a file of an archive). */
    public BlobMember(BlobRef blob, long offset, long length, BlobId hash) {
        this(blob, offset, length, hash, false);
    }

    /** A range looked up inside a file, whose SHA-256 is {@code hash} ({@link #lookup}). */
    public static BlobMember lookup(BlobRef blob, long offset, long length, BlobId hash) {
        return new BlobMember(blob, offset, length, hash, true);
    }

    public BlobMember {
        Objects.requireNonNull(blob, "blob");
        Objects.requireNonNull(hash, "hash");
        if (offset < 0 || length < 0 || offset > blob.size() - length) {
            throw new IllegalArgumentException("member [" + offset + ", +" + length + ") of blob " + blob.id()
                    + " of " + blob.size() + " bytes");
        }
    }
}
