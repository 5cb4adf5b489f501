package io.warpdata.blobcache;

import io.warpdata.manifest.BlobId;

/** Bytes fetched for a block did not match its recorded SHA-256, also after a refetch. */
public final class BlockVerificationException extends StoreException {
    public BlockVerificationException(BlobId blob, int block) {
        super("Block " + block + " of blob " + blob + " failed SHA-256 verification twice",
                "The store holds bad bytes for this blob: re-publish the version from its source"
                        + " (or restore the object), then read again.", null);
    }

    @Override
    public String type() {
        return "VerificationFailed";
    }
}
