package io.warpdata.daemon.cli;

import io.warpdata.blobcache.cache.BlobReader;
import io.warpdata.store.BlobStore;
import io.warpdata.store.BlobStores;
import io.warpdata.blobcache.cache.DirectBlobReader;

import java.util.Optional;

/** The real stores and reader, used outside tests. */
public final class DefaultStores {
    private DefaultStores() {
    }

    public static BlobStore open(String remote, String endpoint) {
        return BlobStores.open(remote, Optional.ofNullable(endpoint));
    }

    /** Verified reads without a disk cache: the CLI reads little and once. */
    public static BlobReader reader(BlobStore store) {
        return new DirectBlobReader(store);
    }
}
