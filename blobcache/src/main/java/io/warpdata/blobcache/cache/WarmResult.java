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
 * @param bytesNotKept       of the bytes fetched or cached, those only in memory because the disk
 *                           refused them (below its free-space floor, read-only, full): they do
 *                           not outlive warpd, and a warm that has some is not complete
 */
public record WarmResult(long blocksFetched, long bytesFetched, long blocksCached, long bytesCached,
        boolean complete, boolean cancelled, long bytesNotKept) {

    /** A warm whose blocks are all kept on disk. */
    public WarmResult(long blocksFetched, long bytesFetched, long blocksCached, long bytesCached, boolean complete,
                      boolean cancelled) {
        this(blocksFetched, bytesFetched, blocksCached, bytesCached, complete, cancelled, 0);
    }

    /** Bytes of the blob now cached on disk: already there plus fetched, less what the disk refused. */
    public long bytesCovered() {
        return bytesFetched + bytesCached - bytesNotKept;
    }
}
