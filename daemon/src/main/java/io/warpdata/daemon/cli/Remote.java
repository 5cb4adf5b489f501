package io.warpdata.daemon.cli;

import io.warpdata.store.BlobStore;
import io.warpdata.catalog.Catalog;

/** An opened store and its catalog, closed after the command. */
final class Remote implements AutoCloseable {
    final BlobStore store;
    private Catalog catalog;

    Remote(BlobStore store) {
        this.store = store;
    }

    /** The catalog, made on first use (publish writes through the store alone). */
    Catalog catalog() {
        if (catalog == null) {
            catalog = new Catalog(store);
        }
        return catalog;
    }

    @Override
    public void close() {
        store.close();
    }
}
