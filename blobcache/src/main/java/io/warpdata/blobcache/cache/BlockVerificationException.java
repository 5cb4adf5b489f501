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
        super("Block " + block + " of blob " + blob + " failed SHA-256 verification twice, " + times + " times, the last "
                + secondsAgo + " s ago: the store serves it wrong, and it is not fetched again until " + waitSeconds
                + " s after that", nextStep(blob), null);
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
     * What repairs it. Publishing again alone does not: a publish uploads only the objects the
     * store lacks, and this one is there, damaged.
     */
    private static String nextStep(BlobId blob) {
        return "The store holds bad bytes for this blob: " + repair(blob);
    }

    /** How to put a damaged object right: delete it, then publish again. */
    static String repair(BlobId blob) {
        return "delete its object " + StoreLayout.blob(blob) + " from the store (or restore it from a copy), then"
                + " publish the version again from its source, which uploads what the store lacks, and read again.";
    }

    @Override
    public String type() {
        return "VerificationFailed";
    }
}
