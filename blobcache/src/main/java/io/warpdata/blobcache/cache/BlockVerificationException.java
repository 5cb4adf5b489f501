package io.warpdata.blobcache.cache;

import io.warpdata.store.StoreException;

import io.warpdata.manifest.BlobId;

/** Bytes fetched for a block (or a small blob read whole) did not match their recorded SHA-256, also after a refetch. */
public final class BlockVerificationException extends StoreException {
    private static final String NEXT_STEP = "The store holds bad bytes for this blob: re-publish the version from"
            + " its source (or restore the object), then read again.";

    public BlockVerificationException(BlobId blob, int block) {
        super("Block " + block + " of blob " + blob + " failed SHA-256 verification twice", NEXT_STEP, null);
    }

    /** A small blob read whole (a member index) whose bytes did not hash to its id, twice. */
    public BlockVerificationException(BlobId blob) {
        super("Blob " + blob + " read whole failed SHA-256 verification twice", NEXT_STEP, null);
    }

    @Override
    public String type() {
        return "VerificationFailed";
    }
}
