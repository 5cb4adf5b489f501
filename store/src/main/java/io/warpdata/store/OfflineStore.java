package io.warpdata.store;

import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;

/**
 * The store of {@code --mode local}: never contacted. Every call fails at once with
 * {@link StoreUnreachableException}, so the catalog answers from its last known good state and
 * the block cache serves only cached blocks, and no request leaves the machine.
 */
public final class OfflineStore implements BlobStore {
    private final String remote;

    /** @param remote the store warpd would otherwise use, for messages */
    public OfflineStore(String remote) {
        this.remote = remote;
    }

    private StoreUnreachableException offline() {
        return StoreUnreachableException.offline("warpd runs in --mode local and does not contact the store " + remote
                + "; only cached data and the datasets known from earlier runs are served");
    }

    @Override
    public OptionalLong length(String key) {
        throw offline();
    }

    @Override
    public void read(String key, long offset, byte[] dst, int dstOff, int len) {
        throw offline();
    }

    @Override
    public byte[] get(String key) {
        throw offline();
    }

    @Override
    public void put(String key, byte[] data) {
        throw offline();
    }

    @Override
    public boolean putIfAbsent(String key, byte[] data) {
        throw offline();
    }

    @Override
    public boolean putIfAbsent(String key, Path source) {
        throw offline();
    }

    @Override
    public List<String> list(String prefix) {
        throw offline();
    }

    @Override
    public String describe() {
        return remote + " (offline: --mode local)";
    }

    @Override
    public void close() {
    }
}
