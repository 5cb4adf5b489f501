package io.warpdata.daemon.cli;

import io.warpdata.blobcache.BlobReader;
import io.warpdata.blobcache.BlobStore;

/** The real stores and reader, used outside tests. */
final class DefaultStores {
    private DefaultStores() {
    }

    static BlobStore open(String remote, String endpoint) {
        throw new UsageException("Stores are not available in this build", "Wait for the stores module.");
    }

    static BlobReader reader(BlobStore store) {
        throw new UsageException("Readers are not available in this build", "Wait for the blockcache module.");
    }
}
