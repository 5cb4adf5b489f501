package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.LongAdder;

/**
 * Whole blobs copied into one plain file each, byte for byte at the same offsets, so that the
 * kernel can read a file opened a second time straight from the copy (FUSE passthrough: no round
 * trip to warpd per read, mmap from the page cache of the copy). A copy is made in the
 * background, one at a time, from the verified read path, of a blob every block of which is in
 * the cache, when a file of it is closed (it was read whole) or opened a second time since warpd
 * started: a copy never costs a GET, so a sparse reader (DuckDB reading 2 columns of 8) never
 * pays for the bytes it skips. Until a copy is ready, reads go through warpd as before.
 *
 * <p>{@code <cache-dir>/v1/copies/<blob id>}: written under {@code tmp/}, synced, renamed into
 * place when whole. A copy found when warpd starts is served again only after its bytes hash to
 * its name (the blob's SHA-256), checked in the background; others are deleted. Copies are kept within
 * {@link #budgetBytes}, least recently opened deleted first, on top of the block cache's limit;
 * none is made that would take the disk under the cache's free-space floor. Deleting a copy a
 * file is open on is safe: the kernel keeps reading the file it holds.
 */
final class LocalCopies implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LocalCopies.class);
    /** Smaller blobs are not worth a file and an open round trip's bookkeeping. */
    static final long MIN_BYTES = 64 << 10;
    /** Opens of a blob before a copy is made: the second open says it is read again. */
    static final int OPENS_BEFORE_COPY = 2;
    /** Blobs whose opens are counted at most; the count restarts beyond it. */
    private static final int MAX_COUNTED = 65_536;
    private static final int CHUNK = 1 << 20;

    /** Where a copy's bytes come from: the verified read path. */
    interface Source {
        /** Whether every block of {@code blob} is in the cache now (a copy then costs no GET). */
        boolean cached(BlobRef blob);

        /** Reads verified bytes of a blob into {@code dst[at, at + len)} (absolute). */
        void read(BlobRef blob, long offset, ByteBuffer dst, int at, int len);
    }

    private final Path dir;
    private final Path tmpDir;
    private final WriteGate writes;
    private final long budgetBytes;
    private final long floorBytes;
    private final DiskSpace space;
    private final Source source;
    private final ExecutorService copier;
    /** Ready copies by blob, least recently opened first; guarded by itself. */
    private final LinkedHashMap<BlobId, Long> ready = new LinkedHashMap<>(16, 0.75f, true);
    private long readyBytes;
    private final Map<BlobId, Integer> opens = new HashMap<>();
    private final Set<BlobId> copying = ConcurrentHashMap.newKeySet();
    private final LongAdder made = new LongAdder();
    private final LongAdder failed = new LongAdder();
    private final LongAdder evicted = new LongAdder();
    private final LongAdder adopted = new LongAdder();
    private final LongAdder adoptFailed = new LongAdder();
    private final LongAdder damaged = new LongAdder();
    private volatile boolean closed;
    /** Set by {@link #discard}: no copy is made or adopted any more. */
    private volatile boolean discarded;
    /** Copies found at start, adopted from the first use on ({@link #adoptKeptOnce}). */
    private final java.util.List<Path> kept;
    private final java.util.concurrent.atomic.AtomicBoolean adoptionBegun = new java.util.concurrent.atomic.AtomicBoolean();
    /** Bumped by {@link #clear}: a copy begun before it is not kept. Guarded by {@code ready}. */
    private long generation;
    /** The copier's buffer (its thread only). */
    private ByteBuffer buffer;

    /**
     * @param root       the cache's {@code v1/} directory
     * @param floorBytes free space a copy may not take the disk under
     * @param writes     the cache directory's writes: a copy is made only while they are open
     */
    LocalCopies(Path root, Path tmpDir, WriteGate writes, long budgetBytes, long floorBytes, DiskSpace space, Source source) {
        this.dir = root.resolve("copies");
        this.tmpDir = tmpDir;
        this.writes = writes;
        this.budgetBytes = budgetBytes;
        this.floorBytes = floorBytes;
        this.space = space;
        this.source = source;
        java.util.List<Path> kept = new java.util.ArrayList<>();
        try {
            Files.createDirectories(dir);
            try (DirectoryStream<Path> old = Files.newDirectoryStream(dir)) {
                for (Path p : old) {
                    if (idOf(p) != null && Files.isRegularFile(p)) {
                        kept.add(p);
                    } else {
                        Files.deleteIfExists(p);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot prepare " + dir, e);
        }
        this.copier = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "warp-copy");
            t.setDaemon(true);
            t.setPriority(Thread.MIN_PRIORITY);
            return t;
        });
        this.kept = kept;
    }

    /**
     * Copies of an earlier run: each is hashed against its name (the blob's SHA-256) before it is
     * served, in the background; one that does not match is deleted. Begun by the owner once it
     * knows it serves copies (warpd with passthrough, at start), else by their first use; not at
     * construction: a warpd without passthrough {@link #discard}s them right after, and hashing
     * them first was work thrown away (and made that order a race).
     */
    void adoptKeptOnce() {
        if (!adoptionBegun.get() && !discarded && adoptionBegun.compareAndSet(false, true)) {
            try {
                for (Path p : kept) {
                    copier.execute(() -> adopt(p));
                }
            } catch (RejectedExecutionException e) {
                // closed meanwhile: nothing to serve them to
            }
        }
    }

    /** The blob a file under {@code copies/} is named for, or null. */
    private static BlobId idOf(Path p) {
        try {
            return new BlobId(p.getFileName().toString());
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** Serves a copy found at start once its bytes hash to its name; else deletes it. */
    private void adopt(Path p) {
        BlobId id = idOf(p);
        long begun;
        synchronized (ready) {
            begun = generation;
        }
        if (closed || discarded) {
            return;
        }
        if (!checked(p, id, buffer())) {
            if (!closed) {
                adoptFailed.increment();
            }
            return;
        }
        try {
            long size = Files.size(p);
            synchronized (ready) {
                if (generation != begun) {
                    Files.deleteIfExists(p); // cache gc or verify emptied the copies meanwhile
                    return;
                }
                if (!ready.containsKey(id)) {
                    ready.put(id, size);
                    readyBytes += size;
                    evictOver(budgetBytes);
                }
            }
            adopted.increment();
        } catch (IOException e) {
            LOG.debug("cannot adopt the copy {}: {}", p, e.toString());
        }
    }

    /**
     * Whether the copy {@code p} hashes to {@code id}, its name; one that does not, or cannot be
     * read, is deleted (and said so), unless this is closing meanwhile.
     */
    private boolean checked(Path p, BlobId id, ByteBuffer buf) {
        boolean ok;
        try {
            ok = hashesTo(p, id, buf);
        } catch (IOException e) {
            ok = false;
        }
        if (!ok && !closed) {
            LOG.warn("Deleted {}: its bytes do not hash to its name (the blob's SHA-256); it will be copied again from"
                    + " verified blocks", p);
            try {
                Files.deleteIfExists(p);
            } catch (IOException e) {
                LOG.debug("cannot delete {}: {}", p, e.toString());
            }
        }
        return ok;
    }

    /** Whether the file's bytes have SHA-256 {@code id}, read through {@code buf}. */
    private boolean hashesTo(Path p, BlobId id, ByteBuffer buf) throws IOException {
        java.security.MessageDigest md = BlobId.sha256();
        try (FileChannel in = FileChannel.open(p, StandardOpenOption.READ)) {
            while (!closed) {
                buf.clear();
                if (in.read(buf) < 0) {
                    break;
                }
                buf.flip();
                md.update(buf);
            }
        }
        return !closed && java.util.Arrays.equals(md.digest(), id.digest());
    }

    private ByteBuffer buffer() {
        if (buffer == null) {
            buffer = ByteBuffer.allocateDirect(CHUNK);
        }
        return buffer;
    }

    /** The budget a cache of {@code maxBytes} gives its copies: an eighth of it, at most 8 GiB. */
    static long budgetFor(long maxBytes) {
        return Math.min(maxBytes / 8, 8L << 30);
    }

    /**
     * The copy of {@code blob}, if one is ready (it then counts as opened now); else null, and a
     * copy is started in the background if this is the blob's second open and it fits.
     */
    Path open(BlobRef blob) {
        adoptKeptOnce();
        if (!eligible(blob)) {
            return null;
        }
        BlobId id = blob.id();
        boolean start;
        synchronized (ready) {
            if (ready.get(id) != null) {
                return dir.resolve(id.toString());
            }
            if (opens.size() >= MAX_COUNTED) {
                opens.clear();
            }
            start = opens.merge(id, 1, Integer::sum) >= OPENS_BEFORE_COPY;
        }
        if (start) {
            startIfCached(blob);
        }
        return null;
    }

    /**
     * A file of {@code blob}, read through warpd, was closed: if the reads left every block of it
     * cached (it was read whole), a copy is begun now, for the next open.
     */
    void closed(BlobRef blob) {
        adoptKeptOnce();
        if (!eligible(blob)) {
            return;
        }
        synchronized (ready) {
            if (ready.containsKey(blob.id())) {
                return;
            }
        }
        startIfCached(blob);
    }

    /** Whether copies are being made, and {@code blob} is neither too small for one nor too large for the budget. */
    private boolean eligible(BlobRef blob) {
        return !closed && !discarded && blob.size() >= MIN_BYTES && blob.size() <= budgetBytes / 2;
    }

    private void startIfCached(BlobRef blob) {
        BlobId id = blob.id();
        if (!copying.contains(id) && source.cached(blob) && copying.add(id)) {
            try {
                copier.execute(() -> copy(blob));
            } catch (RejectedExecutionException e) {
                copying.remove(id);
            }
        }
    }

    private void copy(BlobRef blob) {
        BlobId id = blob.id();
        Path tmp = tmpDir.resolve("copy-" + id + "-" + Thread.currentThread().threadId());
        long begun;
        synchronized (ready) {
            begun = generation;
            if (ready.containsKey(id)) {
                copying.remove(id); // a copy of an earlier run was adopted meanwhile (queued before this)
                return;
            }
        }
        if (!writes.begin()) {
            copying.remove(id); // the directory closed
            return;
        }
        try {
            if (closed || space.usableBytes() - blob.size() < floorBytes) {
                return;
            }
            ByteBuffer buf = buffer();
            try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                for (long off = 0; off < blob.size() && !closed; off += CHUNK) {
                    int n = (int) Math.min(CHUNK, blob.size() - off);
                    source.read(blob, off, buf, 0, n);
                    buf.clear().limit(n);
                    while (buf.hasRemaining()) {
                        out.write(buf);
                    }
                    buf.clear();
                }
                // On disk before its name is: a copy kept across a restart is whole (and is
                // hashed against its name before it is served again).
                out.force(false);
            }
            if (closed) {
                return;
            }
            try {
                Files.setPosixFilePermissions(tmp, java.nio.file.attribute.PosixFilePermissions.fromString("r--r-----"));
            } catch (UnsupportedOperationException e) {
                // not a POSIX file system: the copy keeps its mode
            }
            synchronized (ready) {
                if (generation != begun) {
                    return; // cache gc or verify emptied the copies meanwhile
                }
                Files.move(tmp, dir.resolve(id.toString()), StandardCopyOption.ATOMIC_MOVE);
                ready.put(id, blob.size());
                readyBytes += blob.size();
                opens.remove(id);
                evictOver(budgetBytes);
            }
            made.increment();
        } catch (IOException | RuntimeException e) {
            failed.increment();
            LOG.debug("no local copy of blob {}: {}", id, e.toString());
        } finally {
            copying.remove(id);
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException e) {
                LOG.debug("cannot delete {}: {}", tmp, e.toString());
            }
            writes.end();
        }
    }

    /** Deletes least recently opened copies until they hold at most {@code limit} bytes. Holds {@code ready}. */
    private void evictOver(long limit) {
        Iterator<Map.Entry<BlobId, Long>> it = ready.entrySet().iterator();
        while (readyBytes > limit && it.hasNext()) {
            Map.Entry<BlobId, Long> e = it.next();
            it.remove();
            readyBytes -= e.getValue();
            evicted.increment();
            try {
                Files.deleteIfExists(dir.resolve(e.getKey().toString()));
            } catch (IOException x) {
                LOG.debug("cannot delete the copy of {}: {}", e.getKey(), x.toString());
            }
        }
    }

    /** Bytes of the copies ready now. */
    long bytes() {
        synchronized (ready) {
            return readyBytes;
        }
    }

    /** Copies ready now. */
    int count() {
        synchronized (ready) {
            return ready.size();
        }
    }

    /** Copies made since start (some may have been deleted since). */
    long made() {
        return made.sum();
    }

    /** Copies begun but not made (a read failed, the disk refused). */
    long failed() {
        return failed.sum();
    }

    /**
     * Re-hashes every ready copy against its name ({@code cache verify}, on the caller's thread)
     * and deletes the ones that do not match; returns how many were deleted.
     */
    int verify() {
        adoptKeptOnce(); // copies of an earlier run not adopted yet are hashed by their adoption
        java.util.List<BlobId> ids;
        synchronized (ready) {
            ids = new java.util.ArrayList<>(ready.keySet());
        }
        ByteBuffer buf = ByteBuffer.allocateDirect(CHUNK);
        int bad = 0;
        for (BlobId id : ids) {
            if (checked(dir.resolve(id.toString()), id, buf) || closed) {
                continue;
            }
            bad++;
            damaged.increment();
            synchronized (ready) {
                Long size = ready.remove(id);
                if (size != null) {
                    readyBytes -= size;
                }
            }
        }
        return bad;
    }

    /** Copies deleted by {@link #verify} because their bytes did not hash to their names. */
    long damaged() {
        return damaged.sum();
    }

    /** Copies of an earlier run served again after their bytes hashed to their names. */
    long adopted() {
        return adopted.sum();
    }

    /** Copies of an earlier run deleted because their bytes did not hash to their names. */
    long adoptFailed() {
        return adoptFailed.sum();
    }

    /** Copies deleted to stay within the budget. */
    long evicted() {
        return evicted.sum();
    }

    /**
     * Makes no more copies and deletes every one there is, those of an earlier run too without
     * hashing them (warpd without passthrough has no use for them).
     */
    void discard() {
        discarded = true;
        clear();
        try (DirectoryStream<Path> left = Files.newDirectoryStream(dir)) {
            for (Path p : left) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            LOG.debug("cannot empty {}: {}", dir, e.toString());
        }
    }

    /** Deletes every copy (for {@code cache gc} to a limit below what copies hold: they are derived). */
    void clear() {
        synchronized (ready) {
            generation++;
            evictOver(0);
        }
    }

    @Override
    public void close() {
        closed = true;
        copier.shutdownNow();
    }
}
