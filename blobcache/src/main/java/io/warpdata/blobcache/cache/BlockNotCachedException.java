package io.warpdata.blobcache.cache;

import io.warpdata.store.StoreException;

/** In {@link CacheMode#LOCAL} a read needed bytes that are not in the disk cache. */
public final class BlockNotCachedException extends StoreException {
    /**
     * @param what the missing thing, e.g. {@code "Block 3 of blob ab12..."}
     */
    public BlockNotCachedException(String what) {
        super(what + " is not in the disk cache, and the cache is in local (offline) mode",
                "Run 'warpctl warm DATASET' while the store is reachable, or restart warpd with"
                        + " --mode auto to read from the store.",
                null);
    }

    @Override
    public String type() {
        return "NotCached";
    }
}
