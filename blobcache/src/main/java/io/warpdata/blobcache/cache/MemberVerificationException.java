package io.warpdata.blobcache.cache;

import io.warpdata.store.StoreException;

import io.warpdata.manifest.BlobId;

/**
 * The bytes of an archive member fetched on its own did not match the SHA-256 its member index
 * records, also after a refetch.
 */
public final class MemberVerificationException extends StoreException {
    public MemberVerificationException(BlobId blob, long offset, long length, BlobId hash) {
        super("Member " + hash + " (" + length + " bytes at offset " + offset + " of blob " + blob
                        + ") failed SHA-256 verification twice",
                "The shard's bytes or the member index's are wrong, in the store or on the way: for the shard's, "
                        + BlockVerificationException.repair(blob), null);
    }

    @Override
    public String type() {
        return "VerificationFailed";
    }
}
