package io.warpdata.blobcache.cache;

import io.warpdata.store.StoreException;
import java.nio.file.Path;

/** The cache directory cannot be used: not writable, or in use by another warpd. */
public final class CacheDirectoryException extends StoreException {
    public CacheDirectoryException(Path dir, String problem, String nextStep, Throwable cause) {
        super("Cache directory " + dir + " " + problem, nextStep, cause);
    }

    @Override
    public String type() {
        return "CacheDirectory";
    }
}
