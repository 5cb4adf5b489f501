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
 * @param next   the shard a scan of this member's shard goes on into (the next shard of its
 *               artifact, whose members follow this shard's in the artifact's order), or null:
 *               read ahead from its start once a scan's read-ahead reaches this shard's end
 *               (ReadAhead.SCAN_ENDS)
 */
public record BlobMember(BlobRef blob, long offset, long length, BlobId hash, boolean lookup, BlobRef next) {
    /**
     * Smallest blob whose lookups are fetched on their own: 64 MiB. A smaller one is read through
     * its blocks whatever its lookups (measured on issue 26's bench, 1,000 random tensors of 1 KiB
     * in a 21 MiB shard: 617 tensors/s cold through its 21 blocks, 346 when the first ~100 were
     * each fetched on their own before the blocks took over; 29 against 176 on an S3-like link
     * fetching every one on its own): the blocks cost at most 64 GETs, and bring the tensors read
     * next.
     */
    public static final long LOOKUP_MIN_BLOB_BYTES = 64L << 20;

    /** A member (a file of an archive). */
    public BlobMember(BlobRef blob, long offset, long length, BlobId hash) {
        this(blob, offset, length, hash, false, null);
    }

    /** A member whose shard a scan goes on from into {@code next} ({@link #next}; null: none). */
    public BlobMember(BlobRef blob, long offset, long length, BlobId hash, BlobRef next) {
        this(blob, offset, length, hash, false, next);
    }

    /** A range looked up inside a file, whose SHA-256 is {@code hash} ({@link #lookup}). */
    public static BlobMember lookup(BlobRef blob, long offset, long length, BlobId hash) {
        return new BlobMember(blob, offset, length, hash, true, null);
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
