package io.warpdata.store;

import org.junit.jupiter.api.AfterEach;

class InMemoryBlobStoreTest extends BlobStoreContract {
    private final InMemoryBlobStore store = new InMemoryBlobStore();

    @Override
    protected BlobStore store() {
        return store;
    }

    @AfterEach
    void close() {
        store.close();
    }
}
