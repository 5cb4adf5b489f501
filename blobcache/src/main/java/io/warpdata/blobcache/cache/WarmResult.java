package io.warpdata.blobcache.cache;

/**
 * Outcome of {@link BlockCache#warm}.
 *
 * @param blocksFetched      blocks fetched by this call
 * @param bytesFetched       their bytes
 * @param blocksCached       blocks that were already cached (or being fetched by a reader)
 * @param bytesCached        their bytes
 * @param complete           whether every block of the whole blob is now cached or on its way
 *                           (false after a partial warm, a stop at the size limit, or cancel)
 * @param cancelled          whether the caller cancelled before the end
 */
public record WarmResult(long blocksFetched, long bytesFetched, long blocksCached, long bytesCached,
        boolean complete, boolean cancelled) {

    /** Bytes of the blob now cached: already there plus fetched. */
    public long bytesCovered() {
        return bytesFetched + bytesCached;
    }
}
