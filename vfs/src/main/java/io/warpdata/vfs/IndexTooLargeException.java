package io.warpdata.vfs;

import io.warpdata.store.StoreException;

/**
 * An artifact's member index holds more members than warpd may keep indexed with its heap: it
 * would be evicted as soon as it loaded, and parsed again at every lookup. The artifact's
 * directory answers EIO and the log says to raise the heap.
 */
public final class IndexTooLargeException extends StoreException {
    public IndexTooLargeException(String index, long members, long maxMembers) {
        super(index + " holds " + members + " members; warpd keeps at most " + maxMembers
                + " members indexed with its heap", "Start warpd with a larger heap: WARP_HEAP=1g holds about 1.3"
                + " million members, 4g about 5 million (scripts/warpd, or /etc/warp/warpd.env).", null);
    }

    @Override
    public String type() {
        return "IndexTooLarge";
    }
}
