package io.warpdata.store;

import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;

/**
 * A test wrapper that passes every call to another store; subclasses override what they change.
 * New tests use {@link FaultStore}, which does what the subclasses here do with rules; this stays
 * only for blobcache's cache tests (FaultyStore, GatedStore, PacedStore and two private stores)
 * until they move to it.
 */
public abstract class ForwardingBlobStore implements BlobStore {
    protected final BlobStore inner;

    protected ForwardingBlobStore(BlobStore inner) {
        this.inner = inner;
    }

    @Override
    public OptionalLong length(String key) {
        return inner.length(key);
    }

    @Override
    public void read(String key, long offset, byte[] dst, int dstOff, int len) {
        inner.read(key, offset, dst, dstOff, len);
    }

    @Override
    public byte[] get(String key) {
        return inner.get(key);
    }

    @Override
    public byte[] get(String key, int maxBytes) {
        return inner.get(key, maxBytes);
    }

    @Override
    public Versioned getIfChanged(String key, String ifNoneMatch, int maxBytes) {
        return inner.getIfChanged(key, ifNoneMatch, maxBytes);
    }

    @Override
    public String putIfUnchanged(String key, byte[] data, String expectedTag) {
        return inner.putIfUnchanged(key, data, expectedTag);
    }

    @Override
    public void deleteIfUnchanged(String key, String expectedTag) {
        inner.deleteIfUnchanged(key, expectedTag);
    }

    @Override
    public void delete(String key) {
        inner.delete(key);
    }

    @Override
    public void put(String key, byte[] data) {
        inner.put(key, data);
    }

    @Override
    public boolean putIfAbsent(String key, byte[] data) {
        return inner.putIfAbsent(key, data);
    }

    @Override
    public boolean putIfAbsent(String key, Path source) {
        return inner.putIfAbsent(key, source);
    }

    @Override
    public List<String> list(String prefix) {
        return inner.list(prefix);
    }

    @Override
    public String describe() {
        return inner.describe();
    }

    @Override
    public void close() {
        inner.close();
    }
}
