package io.warpdata.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;

/** A fast fake store for unit tests; counts the operations it sees. */
public final class InMemoryBlobStore implements BlobStore {
    private final ConcurrentSkipListMap<String, byte[]> objects = new ConcurrentSkipListMap<>();
    public final AtomicLong reads = new AtomicLong();
    public final AtomicLong bytesRead = new AtomicLong();
    public final AtomicLong gets = new AtomicLong();
    public final AtomicLong puts = new AtomicLong();
    public final AtomicLong bytesPut = new AtomicLong();

    @Override
    public OptionalLong length(String key) {
        byte[] b = objects.get(key);
        return b == null ? OptionalLong.empty() : OptionalLong.of(b.length);
    }

    @Override
    public void read(String key, long offset, byte[] dst, int dstOff, int len) {
        byte[] b = objects.get(key);
        if (b == null) {
            throw new BlobNotFoundException(describe(), key);
        }
        if (offset < 0 || offset + len > b.length) {
            throw new StoreException("Range " + offset + "+" + len + " beyond end of " + key + " (" + b.length + " bytes)",
                    "This is a bug in the caller.", null);
        }
        reads.incrementAndGet();
        bytesRead.addAndGet(len);
        System.arraycopy(b, (int) offset, dst, dstOff, len);
    }

    @Override
    public byte[] get(String key) {
        byte[] b = objects.get(key);
        if (b == null) {
            throw new BlobNotFoundException(describe(), key);
        }
        gets.incrementAndGet();
        return b.clone();
    }

    @Override
    public void put(String key, byte[] data) {
        puts.incrementAndGet();
        bytesPut.addAndGet(data.length);
        objects.put(key, data.clone());
    }

    @Override
    public boolean putIfAbsent(String key, byte[] data) {
        if (objects.containsKey(key)) {
            return false;
        }
        puts.incrementAndGet();
        bytesPut.addAndGet(data.length);
        return objects.putIfAbsent(key, data.clone()) == null;
    }

    @Override
    public boolean putIfAbsent(String key, Path source) {
        if (objects.containsKey(key)) {
            return false;
        }
        try {
            return putIfAbsent(key, Files.readAllBytes(source));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Atomic: the compare and the write happen under this store's lock. */
    @Override
    public synchronized String putIfUnchanged(String key, byte[] data, String expectedTag) {
        byte[] now = objects.get(key);
        String tag = now == null ? null : Versioned.ofContent(now).tag();
        if (!java.util.Objects.equals(tag, expectedTag)) {
            throw new PointerMovedException(describe() + "/" + key, now == null ? "it is gone" : "it was rewritten");
        }
        put(key, data);
        return Versioned.ofContent(data).tag();
    }

    @Override
    public synchronized void deleteIfUnchanged(String key, String expectedTag) {
        byte[] now = objects.get(key);
        if (now == null || !Versioned.ofContent(now).tag().equals(expectedTag)) {
            throw new PointerMovedException(describe() + "/" + key, now == null ? "it is gone" : "it was rewritten");
        }
        objects.remove(key);
    }

    @Override
    public void delete(String key) {
        objects.remove(key);
    }

    @Override
    public List<String> list(String prefix) {
        TreeSet<String> out = new TreeSet<>();
        for (String k : objects.tailMap(prefix).keySet()) {
            if (!k.startsWith(prefix)) {
                break;
            }
            String rest = k.substring(prefix.length());
            int slash = rest.indexOf('/');
            out.add(slash < 0 ? rest : rest.substring(0, slash + 1));
        }
        return new ArrayList<>(out);
    }

    /** Direct access for tests that corrupt or inspect objects. */
    public ConcurrentSkipListMap<String, byte[]> objects() {
        return objects;
    }

    @Override
    public String describe() {
        return "memory://test";
    }

    @Override
    public void close() {
    }
}
