package io.warpdata.store;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.function.IntConsumer;
import java.util.function.Supplier;

/**
 * A store that reports every call's outcome to a {@link StoreHealth}, and fails reads at once
 * while the store is known to be unreachable (see there). Writes are always tried: a publish is
 * something a person asked for just now, typically right after bringing the store back. Wraps
 * the real store in warpd for the catalog and publish; the block cache reads the bare store and
 * tells the same {@link StoreHealth} of each attempt itself, so all share one view of whether the
 * store answers.
 */
public final class HealthCheckedStore implements BlobStore {
    private final BlobStore delegate;
    private final StoreHealth health;

    public HealthCheckedStore(BlobStore delegate, StoreHealth health) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.health = Objects.requireNonNull(health, "health");
    }

    public StoreHealth health() {
        return health;
    }

    private <T> T call(Supplier<T> op) {
        return attempt(health.enter(), op);
    }

    /** Writes are always tried: told to the health, never failed at once. */
    private <T> T tried(Supplier<T> op) {
        return attempt(health.now(), op);
    }

    private <T> T attempt(long started, Supplier<T> op) {
        T result;
        try {
            result = op.get();
        } catch (RuntimeException e) {
            // Not found, denied, a bad range: the store is there and said so (an answer).
            health.ended(started, e);
            throw e;
        }
        health.ended(started, null);
        return result;
    }

    private void run(Runnable op) {
        call(() -> {
            op.run();
            return null;
        });
    }

    @Override
    public OptionalLong length(String key) {
        return call(() -> delegate.length(key));
    }

    @Override
    public void read(String key, long offset, byte[] dst, int dstOff, int len) {
        run(() -> delegate.read(key, offset, dst, dstOff, len));
    }

    @Override
    public void read(String key, long offset, byte[] dst, int dstOff, int len, IntConsumer arrived) {
        run(() -> delegate.read(key, offset, dst, dstOff, len, arrived));
    }

    @Override
    public byte[] get(String key) {
        return call(() -> delegate.get(key));
    }

    @Override
    public byte[] get(String key, int maxBytes) {
        return call(() -> delegate.get(key, maxBytes));
    }

    @Override
    public Versioned getIfChanged(String key, String ifNoneMatch, int maxBytes) {
        return call(() -> delegate.getIfChanged(key, ifNoneMatch, maxBytes));
    }

    @Override
    public void put(String key, byte[] data) {
        tried(() -> {
            delegate.put(key, data);
            return null;
        });
    }

    @Override
    public boolean putIfAbsent(String key, byte[] data) {
        return tried(() -> delegate.putIfAbsent(key, data));
    }

    @Override
    public boolean putIfAbsent(String key, Path source) {
        return tried(() -> delegate.putIfAbsent(key, source));
    }

    @Override
    public String putIfUnchanged(String key, byte[] data, String expectedTag) {
        return tried(() -> delegate.putIfUnchanged(key, data, expectedTag));
    }

    @Override
    public void deleteIfUnchanged(String key, String expectedTag) {
        tried(() -> {
            delegate.deleteIfUnchanged(key, expectedTag);
            return null;
        });
    }

    @Override
    public void delete(String key) {
        tried(() -> {
            delegate.delete(key);
            return null;
        });
    }

    @Override
    public List<String> list(String prefix) {
        return call(() -> delegate.list(prefix));
    }

    @Override
    public String describe() {
        return delegate.describe();
    }

    @Override
    public long clientRetries() {
        return delegate.clientRetries();
    }

    @Override
    public void close() {
        delegate.close();
    }
}
