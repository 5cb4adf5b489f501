package io.warpdata.blobcache.cache;

/** Progress of {@link BlockCache#warm}. Called from the warming thread. */
@FunctionalInterface
public interface WarmListener {
    WarmListener NONE = (done, total) -> {
    };

    /**
     * @param doneBytes  bytes of the blob now cached (already cached plus fetched so far)
     * @param totalBytes size of the blob
     */
    void progress(long doneBytes, long totalBytes);
}
