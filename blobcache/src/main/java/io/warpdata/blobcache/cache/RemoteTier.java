package io.warpdata.blobcache.cache;

/**
 * A remote tier between the local tiers and the store: a mirror (issue 25: a read-through HTTP
 * cache or an S3-compatible bucket) that serves the store's own keys with ranged GETs. It is
 * not trusted: {@link Remotes} checks every byte it returns against the block or member hashes
 * before anyone sees it, and a failure or a wrong byte sends the same range to the next tier,
 * then to the store, inside the same read.
 *
 * <p>The slot: the tiers are handed to {@link BlockCache#open(io.warpdata.store.BlobStore,
 * CacheConfig, java.util.List)} in the order they are tried; warpd passes none today.
 */
public interface RemoteTier {
    /** For logs and counters: where this tier is (a URL without credentials). */
    String describe();

    /**
     * Reads {@code len} bytes at {@code offset} of the store key {@code key} into
     * {@code dst[dstOff, dstOff + len)}. Fails by throwing (any runtime exception); the bytes
     * need not be right, they are checked.
     */
    void read(String key, long offset, byte[] dst, int dstOff, int len);
}
