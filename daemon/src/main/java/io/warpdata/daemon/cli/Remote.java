package io.warpdata.daemon.cli;

import io.warpdata.blobcache.BlobStore;
import io.warpdata.blobcache.Catalog;

/** An opened store and its catalog, closed after the command. */
final class Remote implements AutoCloseable {
    final BlobStore store;
    final Catalog catalog;

    Remote(BlobStore store) {
        this.store = store;
        this.catalog = new Catalog(store);
    }

    @Override
    public void close() {
        store.close();
    }
}
