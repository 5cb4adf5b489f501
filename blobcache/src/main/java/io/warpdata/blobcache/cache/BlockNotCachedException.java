package io.warpdata.blobcache.cache;

import io.warpdata.store.StoreException;

/** In {@link CacheMode#LOCAL} a read needed bytes that are not in the disk cache. */
public final class BlockNotCachedException extends StoreException {
    /**
     * @param what the missing thing, e.g. {@code "Block 3 of blob ab12..."}
     */
    public BlockNotCachedException(String what) {
        super(what + " is not in the disk cache, and the cache is in local (offline) mode",
                "Restart warpd with --mode auto (it reads from the store, and 'warpctl warm DATASET' then"
                        + " caches what a later --mode local run serves).",
                null);
    }

    @Override
    public String type() {
        return "NotCached";
    }
}
