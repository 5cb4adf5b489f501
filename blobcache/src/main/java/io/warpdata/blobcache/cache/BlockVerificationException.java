package io.warpdata.blobcache.cache;

import io.warpdata.store.StoreException;
import io.warpdata.store.StoreLayout;

import io.warpdata.manifest.BlobId;

/** Bytes fetched for a block (or a small blob read whole) did not match their recorded SHA-256, also after a refetch. */
public final class BlockVerificationException extends StoreException {
    /** The block that failed, or -1 for a blob read whole. */
    private final int block;

    public BlockVerificationException(BlobId blob, int block) {
        super("Block " + block + " of blob " + blob + " failed SHA-256 verification twice", nextStep(blob), null);
        this.block = block;
    }

    /** Block {@code block}, which failed twice {@code times} times, the last {@code secondsAgo} s ago: not fetched again yet. */
    public BlockVerificationException(BlobId blob, int block, int times, long secondsAgo, long waitSeconds) {
        super("Block " + block + " of blob " + blob + " failed SHA-256 verification twice in a row, " + times
                + (times == 1 ? " time" : " times") + " in all, the last " + secondsAgo + " s ago: it is served wrong,"
                + " and it is not fetched again until " + waitSeconds + " s after that", nextStep(blob), null);
        this.block = block;
    }

    /** A small blob read whole (a member index) whose bytes did not hash to its id, twice. */
    public BlockVerificationException(BlobId blob) {
        super("Blob " + blob + " read whole failed SHA-256 verification twice", nextStep(blob), null);
        this.block = -1;
    }

    /** The block that failed, or -1 for a blob read whole. */
    public int block() {
        return block;
    }

    /**
     * What to check, then what repairs it. The bytes came wrong twice, but from the store's copy
     * or changed on the way (a proxy, a mirror, the network) cannot be told here: advice to
     * delete the object, given for both, would have deleted a good one (audit 45: a proxy that
     * flipped a byte in transit). Publishing again alone does not repair a damaged copy: a
     * publish uploads only the objects the store lacks, and this one is there.
     */
    private static String nextStep(BlobId blob) {
        return "Its bytes arrived wrong twice: " + repair(blob);
    }

    /** How to tell a damaged object from bytes damaged on the way, and how to put each right. */
    static String repair(BlobId blob) {
        return "check the store's own copy of object " + StoreLayout.blob(blob) + " where it is kept, not through"
                + " the endpoint, proxy, mirror or cache warpd reads it by (any of them can be what changes the bytes):"
                + " on the storage side (the object's file, sha256sum DIR/" + StoreLayout.blob(blob) + " for a file://"
                + " store), or from a machine that reaches the store's own endpoint with no proxy, mirror or cache"
                + " in between ('aws s3 cp s3://BUCKET/PREFIX/" + StoreLayout.blob(blob) + " - | sha256sum', plus"
                + " --endpoint-url for a server other than AWS). Its SHA-256 must be "
                + blob.hex() + ". If it is not, the copy is damaged: save a copy of it there, delete it (or restore it"
                + " from a backup), then publish the version again from its source, which uploads what the store"
                + " lacks. If it is, the bytes were changed on the way (an endpoint that is a proxy, a mirror or"
                + " cache in front of the store, the network): fix that, and leave the store as it is.";
    }

    @Override
    public String type() {
        return "VerificationFailed";
    }
}
