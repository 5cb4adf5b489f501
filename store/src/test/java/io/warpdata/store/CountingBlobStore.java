package io.warpdata.store;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Wraps any {@link BlobStore} and counts what its callers asked of it: tests assert "one ranged
 * read, then N cache hits" against the real stores without reaching into them.
 */
public final class CountingBlobStore implements BlobStore {
    private final BlobStore delegate;
    public final LongAdder lengths = new LongAdder();
    public final LongAdder reads = new LongAdder();
    public final LongAdder bytesRead = new LongAdder();
    public final LongAdder gets = new LongAdder();
    public final LongAdder bytesGot = new LongAdder();
    public final LongAdder puts = new LongAdder();
    public final LongAdder putIfAbsents = new LongAdder();
    /** putIfAbsent calls that wrote (returned true). */
    public final LongAdder writes = new LongAdder();
    public final LongAdder bytesPut = new LongAdder();
    public final LongAdder lists = new LongAdder();
    public final LongAdder failures = new LongAdder();

    public CountingBlobStore(BlobStore delegate) {
        this.delegate = delegate;
    }

    public BlobStore delegate() {
        return delegate;
    }

    @Override
    public OptionalLong length(String key) {
        lengths.increment();
        try {
            return delegate.length(key);
        } catch (RuntimeException e) {
            failures.increment();
            throw e;
        }
    }

    @Override
    public void read(String key, long offset, byte[] dst, int dstOff, int len) {
        reads.increment();
        try {
            delegate.read(key, offset, dst, dstOff, len);
            bytesRead.add(len);
        } catch (RuntimeException e) {
            failures.increment();
            throw e;
        }
    }

    @Override
    public byte[] get(String key) {
        gets.increment();
        try {
            byte[] b = delegate.get(key);
            bytesGot.add(b.length);
            return b;
        } catch (RuntimeException e) {
            failures.increment();
            throw e;
        }
    }

    @Override
    public void put(String key, byte[] data) {
        puts.increment();
        try {
            delegate.put(key, data);
            bytesPut.add(data.length);
        } catch (RuntimeException e) {
            failures.increment();
            throw e;
        }
    }

    @Override
    public boolean putIfAbsent(String key, byte[] data) {
        putIfAbsents.increment();
        try {
            boolean wrote = delegate.putIfAbsent(key, data);
            if (wrote) {
                writes.increment();
                bytesPut.add(data.length);
            }
            return wrote;
        } catch (RuntimeException e) {
            failures.increment();
            throw e;
        }
    }

    @Override
    public boolean putIfAbsent(String key, Path source) {
        putIfAbsents.increment();
        try {
            boolean wrote = delegate.putIfAbsent(key, source);
            if (wrote) {
                writes.increment();
                bytesPut.add(source.toFile().length());
            }
            return wrote;
        } catch (RuntimeException e) {
            failures.increment();
            throw e;
        }
    }

    @Override
    public List<String> list(String prefix) {
        lists.increment();
        try {
            return delegate.list(prefix);
        } catch (RuntimeException e) {
            failures.increment();
            throw e;
        }
    }

    @Override
    public String describe() {
        return delegate.describe();
    }

    @Override
    public void close() {
        delegate.close();
    }

    public void reset() {
        for (LongAdder a : new LongAdder[] {lengths, reads, bytesRead, gets, bytesGot, puts, putIfAbsents, writes,
                bytesPut, lists, failures}) {
            a.reset();
        }
    }

    public Map<String, Long> snapshot() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("lengths", lengths.sum());
        m.put("reads", reads.sum());
        m.put("bytes_read", bytesRead.sum());
        m.put("gets", gets.sum());
        m.put("bytes_got", bytesGot.sum());
        m.put("puts", puts.sum());
        m.put("put_if_absents", putIfAbsents.sum());
        m.put("writes", writes.sum());
        m.put("bytes_put", bytesPut.sum());
        m.put("lists", lists.sum());
        m.put("failures", failures.sum());
        return m;
    }

    @Override
    public String toString() {
        return "CountingBlobStore" + snapshot();
    }
}
