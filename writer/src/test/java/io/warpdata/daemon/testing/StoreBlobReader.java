package io.warpdata.daemon.testing;

import io.warpdata.blobcache.cache.BlobReader;
import io.warpdata.store.BlobStore;
import io.warpdata.blobcache.cache.ReadMetrics;
import io.warpdata.store.StoreLayout;
import io.warpdata.manifest.BlobRef;

/** Test reader: plain ranged reads from the store, counting bytes (no verification, no cache). */
public final class StoreBlobReader implements BlobReader {
    private final BlobStore store;
    private final ReadMetrics metrics = new ReadMetrics();

    public StoreBlobReader(BlobStore store) {
        this.store = store;
    }

    @Override
    public int read(BlobRef blob, long offset, byte[] dst, int dstOff, int len) {
        int n = (int) Math.max(0, Math.min(len, blob.size() - offset));
        if (n > 0) {
            store.read(StoreLayout.blob(blob.id()), offset, dst, dstOff, n);
            metrics.getsIssued.increment();
            metrics.bytesFetched.add(n);
        }
        return n;
    }

    @Override
    public byte[] readAll(BlobRef blob) {
        return store.get(StoreLayout.blob(blob.id()));
    }

    @Override
    public ReadMetrics metrics() {
        return metrics;
    }

    @Override
    public void close() {
    }
}
