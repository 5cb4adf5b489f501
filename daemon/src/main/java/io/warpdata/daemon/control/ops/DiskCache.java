package io.warpdata.daemon.control.ops;

import io.warpdata.blobcache.cache.BlockCache;
import io.warpdata.daemon.control.ControlException;

/** What the cache operations share: they need the disk cache, which remote mode does not keep. */
final class DiskCache {
    private DiskCache() {
    }

    /**
     * The cache, if it keeps blocks on disk.
     *
     * @throws ControlException of type UNSUPPORTED in remote mode
     */
    static BlockCache require(BlockCache cache, String what) {
        if (!cache.config().mode().usesDisk()) {
            throw new ControlException(ControlException.UNSUPPORTED, "warpd keeps no disk cache (mode remote), so there is"
                    + " nothing to " + what, "restart warpd with --mode auto or hybrid to use the disk cache");
        }
        return cache;
    }
}
