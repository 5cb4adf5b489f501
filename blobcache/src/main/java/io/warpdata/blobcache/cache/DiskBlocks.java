package io.warpdata.blobcache.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import io.warpdata.blobcache.ReadMetrics;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlockHashList;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Blocks on disk, one file per block ({@link BlockFile}), under {@code <dir>/v1/}:
 * <pre>
 * v1/lock                        held (flock) while a cache is open: one warpd per directory
 * v1/blocks/ab/&lt;blob&gt;.&lt;block size&gt;.&lt;index&gt;   block files, ab = first byte of the blob id
 * v1/lists/&lt;list id&gt;              block hash lists, named by their own SHA-256
 * v1/tmp/                        files being written; emptied at start
 * </pre>
 * A block is written to {@code tmp/} and renamed into place only when complete, so a crash
 * (kill -9) never leaves a torn block under its real name; a power loss may, but then the file
 * size, header checksum or chunk CRC32C gives it away and it is treated as a miss. Hence no
 * fsync per block.
 *
 * <p>The index of what is cached lives in memory and is rebuilt at start by reading every
 * block file's header. Eviction is Caffeine's W-TinyLFU over a byte weigher: a small recency
 * window plus frequency-based admission. ML training reads the same dataset once per epoch;
 * when the dataset is larger than the cache, LRU evicts every block just before its next use
 * (hit rate 0), while TinyLFU keeps a stable, frequently used part resident. An evicted block's
 * file is deleted inside the index's per-key lock, as are renames into place, so a delete never
 * races a rewrite of the same block.
 *
 * <p>Readers use a bounded cache of open FileChannels. A block being read is pinned: eviction
 * unlinks its file at once (an open file stays readable on Linux) but closes its channel only
 * when the last reader leaves. A read that still loses a race (its channel closed by the
 * open-file bound or by an interrupt) reopens the file; if the file is gone, the block is a miss
 * and is fetched again: never an error, never wrong bytes.
 */
final class DiskBlocks implements BlockStorage {
    private static final Logger LOG = LoggerFactory.getLogger(DiskBlocks.class);
    static final String FORMAT_DIR = "v1";
    /** Rate limit for repeated write-failure warnings (a full disk would otherwise log per block). */
    private static final long WARN_EVERY_NANOS = 10_000_000_000L;

    private static final class Entry {
        final Path path;
        final int headerLength;
        final int length;
        final int[] crcs;
        final BlobId listId;
        /** The read-ahead credit shared with the fetch (see {@link BlockStorage#put}); null if not read ahead. */
        final AtomicBoolean prefetchCredit;
        /** Reads in progress: while positive, eviction leaves the block's open channel alone. */
        final AtomicInteger readers = new AtomicInteger();
        volatile boolean evicted;

        Entry(Path path, int headerLength, int length, int[] crcs, BlobId listId, AtomicBoolean prefetchCredit) {
            this.path = path;
            this.headerLength = headerLength;
            this.length = length;
            this.crcs = crcs;
            this.listId = listId;
            this.prefetchCredit = prefetchCredit;
        }

        int weight() {
            return headerLength + length;
        }
    }

    /** Per-thread read state: no allocation on the hit path. */
    private static final class Scratch {
        ByteBuffer buffer = ByteBuffer.allocateDirect(BlockHashList.DEFAULT_BLOCK_SIZE);
        final CRC32C crc = new CRC32C();

        ByteBuffer buffer(int len) {
            if (buffer.capacity() < len) {
                buffer = ByteBuffer.allocateDirect(len);
            }
            buffer.clear().limit(len);
            return buffer;
        }
    }

    /** Per-thread write state: a block file is assembled in one reused direct buffer. */
    private static final class WriteScratch {
        ByteBuffer buffer = ByteBuffer.allocateDirect(BlockFile.headerLength(BlockHashList.DEFAULT_BLOCK_SIZE)
                + BlockHashList.DEFAULT_BLOCK_SIZE);
        final CRC32C crc = new CRC32C();

        ByteBuffer buffer(int len) {
            if (buffer.capacity() < len) {
                buffer = ByteBuffer.allocateDirect(len);
            }
            return buffer.clear().limit(len);
        }
    }

    private final Path root;
    private final Path blocksDir;
    private final Path listsDir;
    private final Path tmpDir;
    private final ReadMetrics metrics;
    private final DiskSpace space;
    private final long limit;
    private final long floor;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final Cache<BlockKey, Entry> index;
    private final Cache<BlockKey, FileChannel> channels;
    private final ThreadLocal<Scratch> scratch = ThreadLocal.withInitial(Scratch::new);
    private final ThreadLocal<WriteScratch> writeScratch = ThreadLocal.withInitial(WriteScratch::new);
    private final AtomicLong tmpCounter = new AtomicLong();
    /** Which of the 256 block subdirectories are known to exist (made on first use). */
    private final AtomicIntegerArray shardMade = new AtomicIntegerArray(256);
    /**
     * Bytes being written right now: counted against the free-space floor before they land.
     * Guarded by {@link #reserveLock}, as is every check of them against the free space.
     */
    private long pendingWrites;
    private final Object reserveLock = new Object();
    private final AtomicLong lastWriteWarn = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);
    private final Object gcLock = new Object();
    private volatile boolean closed;

    /**
     * Opens (creating if needed) the cache under {@code dir}, deletes temp files and rebuilds
     * the index by scanning block headers.
     *
     * @param minFreeBytes free-space floor, or {@link CacheConfig#AUTO_FREE_FLOOR}
     * @throws CacheDirectoryException if the directory is unusable or in use by another process
     */
    DiskBlocks(Path dir, long limitBytes, long minFreeBytes, int maxOpenFiles, ReadMetrics metrics, DiskSpace space) {
        this.root = dir.resolve(FORMAT_DIR);
        this.blocksDir = root.resolve("blocks");
        this.listsDir = root.resolve("lists");
        this.tmpDir = root.resolve("tmp");
        this.metrics = metrics;
        this.limit = limitBytes;
        try {
            Files.createDirectories(blocksDir);
            Files.createDirectories(listsDir);
            Files.createDirectories(tmpDir);
            lockChannel = FileChannel.open(root.resolve("lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        } catch (AccessDeniedException e) {
            throw new CacheDirectoryException(dir, "is not writable", "Give warpd's user write access to it, or pass"
                    + " another --cache-dir.", e);
        } catch (IOException e) {
            throw new CacheDirectoryException(dir, "cannot be created: " + e, "Check the path and the disk, or pass"
                    + " another --cache-dir.", e);
        }
        try {
            FileLock l = lockChannel.tryLock();
            if (l == null) {
                throw new OverlappingFileLockException();
            }
            this.lock = l;
        } catch (OverlappingFileLockException | IOException e) {
            closeQuietly(lockChannel);
            throw new CacheDirectoryException(dir, "is in use by another warpd", "Stop the other warpd, or give"
                    + " each warpd its own --cache-dir.", e);
        }
        this.space = space == null ? DiskSpace.of(root) : space;
        this.floor = minFreeBytes == CacheConfig.AUTO_FREE_FLOOR
                ? Math.max(this.space.totalBytes() / 20, 1L << 30) : minFreeBytes;
        this.channels = Caffeine.newBuilder()
                .maximumSize(maxOpenFiles)
                .executor(Runnable::run)
                .removalListener((BlockKey k, FileChannel ch, RemovalCause c) -> closeQuietly(ch))
                .build();
        this.index = Caffeine.newBuilder()
                .maximumWeight(limitBytes)
                .weigher((BlockKey k, Entry e) -> e.weight())
                .executor(Runnable::run)
                .evictionListener(this::onEvicted)
                .build();
        rebuild();
    }

    Path listsDir() {
        return listsDir;
    }

    Path tmpDir() {
        return tmpDir;
    }

    private void onEvicted(BlockKey key, Entry e, RemovalCause cause) {
        if (e == null) {
            return;
        }
        // Unlinking is safe under a reader (an open file stays readable on Linux); closing its
        // channel is not, so a block being read keeps its channel until the last reader leaves.
        e.evicted = true;
        deleteFile(e.path);
        if (e.readers.get() == 0) {
            channels.invalidate(key);
        }
        metrics.evictions.increment();
        metrics.evictedBytes.add(e.weight());
        if (e.prefetchCredit != null && e.prefetchCredit.compareAndSet(false, true)) {
            metrics.prefetchWastedBytes.add(e.length);
        }
    }

    /** Deletes temp files left by a crash and indexes every valid block file, oldest first. */
    private void rebuild() {
        int tmpDeleted = 0;
        int invalid = 0;
        try (DirectoryStream<Path> tmps = Files.newDirectoryStream(tmpDir)) {
            for (Path p : tmps) {
                deleteFile(p);
                tmpDeleted++;
            }
        } catch (IOException e) {
            throw new CacheDirectoryException(root, "cannot be read: " + e, "Check the disk, or delete the directory.", e);
        }
        record Found(BlockKey key, BlockFile.Header header, Path path, FileTime mtime) {
        }
        List<Found> found = new ArrayList<>();
        try (DirectoryStream<Path> shards = Files.newDirectoryStream(blocksDir)) {
            for (Path shard : shards) {
                if (!Files.isDirectory(shard)) {
                    deleteFile(shard);
                    continue;
                }
                try (DirectoryStream<Path> files = Files.newDirectoryStream(shard)) {
                    for (Path p : files) {
                        BlockKey key = BlockKey.parse(p.getFileName().toString());
                        BlockFile.Header h = null;
                        if (key != null) {
                            try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
                                h = BlockFile.readHeader(ch);
                            } catch (IOException e) {
                                h = null;
                            }
                        }
                        if (h == null || !h.key().equals(key)
                                || !shard.getFileName().toString().equals(key.blob().hex().substring(0, 2))) {
                            deleteFile(p);
                            invalid++;
                            continue;
                        }
                        found.add(new Found(key, h, p, Files.getLastModifiedTime(p)));
                    }
                }
            }
        } catch (IOException e) {
            throw new CacheDirectoryException(root, "cannot be scanned: " + e, "Check the disk, or delete the directory.", e);
        }
        found.sort(Comparator.comparing(Found::mtime));
        long bytes = 0;
        for (Found f : found) {
            BlockFile.Header h = f.header();
            index.put(f.key(), new Entry(f.path(), h.headerLength(), h.dataLength(), h.crcs(), h.listId(), null));
            bytes += h.fileLength();
        }
        index.cleanUp();
        if (tmpDeleted + invalid > 0 || !found.isEmpty()) {
            LOG.info("Block cache {}: {} blocks ({} bytes) found; removed {} temp files and {} invalid block files",
                    root, found.size(), bytes, tmpDeleted, invalid);
        }
    }

    @Override
    public boolean read(BlockKey key, int offInBlock, ByteBuffer dst, int dstIndex, int len) {
        Entry e = index.getIfPresent(key);
        if (e == null) {
            return false;
        }
        int c0 = offInBlock / BlockFile.CHUNK;
        int c1 = (offInBlock + len - 1) / BlockFile.CHUNK;
        int start = c0 * BlockFile.CHUNK;
        int span = Math.min((c1 + 1) * BlockFile.CHUNK, e.length) - start;
        e.readers.incrementAndGet();
        try {
            return read(key, e, offInBlock, dst, dstIndex, len, c0, c1, start, span);
        } finally {
            if (e.readers.decrementAndGet() == 0 && e.evicted) {
                channels.invalidate(key);
            }
        }
    }

    /**
     * Reads the 64 KiB chunks the range touches and checks their CRC32C. A chunk-aligned range
     * into a direct buffer (a FUSE read of a whole-block-aligned file: the kernel asks for
     * 128 KiB-aligned pieces) is read straight into the caller's buffer and checked there; any
     * other range goes through the thread's scratch buffer and is copied out once.
     */
    private boolean read(BlockKey key, Entry e, int offInBlock, ByteBuffer dst, int dstIndex, int len, int c0, int c1,
            int start, int span) {
        Scratch s = scratch.get();
        boolean direct = dst.isDirect() && offInBlock == start && len == span;
        ByteBuffer buf = direct ? dst.slice(dstIndex, len) : s.buffer(span);
        for (int attempt = 0; ; attempt++) {
            FileChannel ch = channels.getIfPresent(key);
            if (ch == null) {
                try {
                    FileChannel opened = FileChannel.open(e.path, StandardOpenOption.READ);
                    ch = channels.asMap().putIfAbsent(key, opened);
                    if (ch == null) {
                        ch = opened;
                    } else {
                        closeQuietly(opened);
                    }
                } catch (IOException ex) {
                    if (!e.evicted) {
                        drop(key, e, "cannot be opened (" + ex + ")");
                    }
                    // else: evicted while we looked it up, an ordinary miss.
                    return false;
                }
            }
            buf.clear().limit(span);
            try {
                if (!BlockFile.readFully(ch, buf, (long) e.headerLength + start)) {
                    drop(key, e, "is truncated");
                    return false;
                }
                break;
            } catch (ClosedChannelException ex) {
                // Evicted (or closed by an interrupt) under us: reopen; a deleted file is then a miss.
                channels.asMap().remove(key, ch);
                if (attempt >= 2 || Thread.currentThread().isInterrupted()) {
                    return false;
                }
            } catch (IOException ex) {
                drop(key, e, "cannot be read (" + ex + ")");
                return false;
            }
        }
        for (int c = c0; c <= c1; c++) {
            int from = (c - c0) * BlockFile.CHUNK;
            buf.limit(Math.min(from + BlockFile.CHUNK, span)).position(from);
            s.crc.reset();
            s.crc.update(buf);
            if ((int) s.crc.getValue() != e.crcs[c]) {
                drop(key, e, "fails its CRC32C in chunk " + c);
                return false;
            }
        }
        if (!direct) {
            dst.put(dstIndex, buf, offInBlock - start, len);
        }
        if (e.prefetchCredit != null && !e.prefetchCredit.get() && e.prefetchCredit.compareAndSet(false, true)) {
            metrics.prefetchHitBlocks.increment();
        }
        return true;
    }

    /** Removes a damaged block (if still the indexed one): it becomes a miss and is refetched. */
    private void drop(BlockKey key, Entry e, String why) {
        index.asMap().computeIfPresent(key, (k, v) -> {
            if (v != e || v.evicted) {
                return v;
            }
            // Logged only when the block really was bad, not when eviction won a race.
            LOG.warn("Cached {} {}; deleting it, it will be fetched again", key, why);
            v.evicted = true;
            deleteFile(v.path);
            channels.invalidate(k);
            return null;
        });
    }

    @Override
    public boolean contains(BlockKey key) {
        return index.asMap().containsKey(key);
    }

    @Override
    public void put(BlockKey key, BlobId listId, byte[] data, int off, int len, AtomicBoolean prefetchCredit) {
        if (closed || index.asMap().containsKey(key)) {
            return;
        }
        int headerLength = BlockFile.headerLength(len);
        long bytes = (long) headerLength + len;
        if (!reserve(bytes)) {
            return;
        }
        try {
            write(key, listId, data, off, len, prefetchCredit, headerLength);
        } finally {
            // Only now, with the block renamed into place (or given up), so that a reservation
            // that no longer sees these bytes pending sees them in the free space instead.
            synchronized (reserveLock) {
                pendingWrites -= bytes;
            }
        }
    }

    private void write(BlockKey key, BlobId listId, byte[] data, int off, int len, AtomicBoolean prefetchCredit,
            int headerLength) {
        WriteScratch w = writeScratch.get();
        int[] crcs = BlockFile.chunkCrcs(data, off, len, w.crc);
        // The whole file in one direct buffer, written with one write(): a heap buffer would be
        // copied into a temporary direct one by the JDK anyway (two, header and data, for a
        // gathering write), and this copy is the only one on our side.
        ByteBuffer file = w.buffer(headerLength + len);
        BlockFile.encodeHeader(file, key, listId, len, crcs, w.crc);
        file.put(data, off, len).flip();
        Path tmp = tmpDir.resolve(key.fileName() + "." + tmpCounter.incrementAndGet() + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            while (file.hasRemaining()) {
                ch.write(file);
            }
        } catch (IOException e) {
            warnWrite(key, e);
            deleteFile(tmp);
            return;
        }
        Path target = path(key);
        int shard = Integer.parseInt(key.blob().hex().substring(0, 2), 16);
        if (shardMade.get(shard) == 0) {
            try {
                Files.createDirectories(target.getParent());
                shardMade.set(shard, 1);
            } catch (IOException e) {
                warnWrite(key, e);
                deleteFile(tmp);
                return;
            }
        }
        Entry fresh = new Entry(target, headerLength, len, crcs, listId, prefetchCredit);
        index.asMap().compute(key, (k, old) -> {
            if (old != null) {
                deleteFile(tmp);
                return old;
            }
            try {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (IOException e) {
                warnWrite(key, e);
                deleteFile(tmp);
                return null;
            }
            return fresh;
        });
    }

    private Path path(BlockKey key) {
        return blocksDir.resolve(key.blob().hex().substring(0, 2)).resolve(key.fileName());
    }

    /**
     * Keeps the free-space floor: reserves {@code bytes} for a write if, counting the other
     * writes in progress, they fit above the floor, evicting cached blocks to make room.
     *
     * <p>The check reads the reservations first and the free space second, under the same lock
     * that writers take to give a reservation back (after their rename): a write either is still
     * reserved when the check looks, or had already landed before the free space was read. Read
     * the other way round (or without the lock), a write finishing between the two reads was
     * counted in neither and the floor was overshot by a block.
     *
     * @return false if they do not fit even after evicting (then nothing is written)
     */
    private boolean reserve(long bytes) {
        for (int attempt = 0; attempt < 3; attempt++) {
            long shortBy;
            synchronized (reserveLock) {
                long pending = pendingWrites;
                shortBy = floor + pending + bytes - space.usableBytes();
                if (shortBy <= 0) {
                    pendingWrites = pending + bytes;
                    return true;
                }
            }
            synchronized (gcLock) {
                if (evictTo(Math.max(0, sizeBytes() - shortBy)) == 0 && sizeBytes() == 0) {
                    return false;
                }
            }
        }
        return false;
    }

    private void warnWrite(BlockKey key, IOException e) {
        long now = System.nanoTime();
        long last = lastWriteWarn.get();
        if (now - last >= WARN_EVERY_NANOS && lastWriteWarn.compareAndSet(last, now)) {
            LOG.warn("Could not write {} to the cache at {} ({}); serving it without caching", key, root, e.toString());
        }
    }

    @Override
    public long sizeBytes() {
        return index.policy().eviction().orElseThrow().weightedSize().orElse(0);
    }

    @Override
    public long blockCount() {
        return index.estimatedSize();
    }

    @Override
    public long limitBytes() {
        return limit;
    }

    @Override
    public long freeFloorBytes() {
        return floor;
    }

    @Override
    public long gc(long limitBytes) {
        synchronized (gcLock) {
            return evictTo(Math.max(0, limitBytes));
        }
    }

    /** Evicts (by the normal policy) down to {@code target} bytes; caller holds gcLock. */
    private long evictTo(long target) {
        long before = sizeBytes();
        if (before <= target) {
            return 0;
        }
        var eviction = index.policy().eviction().orElseThrow();
        eviction.setMaximum(target);
        index.cleanUp();
        eviction.setMaximum(limit);
        return before - sizeBytes();
    }

    @Override
    public VerifyResult verify(HashLists lists, LongConsumer progress, BooleanSupplier cancelled) {
        long checked = 0;
        long checkedBytes = 0;
        boolean stopped = false;
        long removed = 0;
        long removedBytes = 0;
        long withoutList = 0;
        Map<BlobId, BlockHashList> listCache = new HashMap<>();
        byte[] buf = new byte[0];
        for (Map.Entry<BlockKey, Entry> me : List.copyOf(index.asMap().entrySet())) {
            if (cancelled.getAsBoolean() || closed) {
                stopped = true;
                break;
            }
            BlockKey key = me.getKey();
            Entry e = me.getValue();
            if (buf.length < e.length) {
                buf = new byte[e.length];
            }
            boolean ok;
            try (FileChannel ch = FileChannel.open(e.path, StandardOpenOption.READ)) {
                ok = BlockFile.readFully(ch, ByteBuffer.wrap(buf, 0, e.length), e.headerLength)
                        && ch.size() == (long) e.headerLength + e.length;
            } catch (IOException ex) {
                ok = false;
            }
            if (ok) {
                ok = java.util.Arrays.equals(BlockFile.chunkCrcs(buf, 0, e.length), e.crcs);
            }
            if (ok) {
                BlockHashList list = listCache.computeIfAbsent(e.listId, lists::readFromDisk);
                if (list == null || list.blockSize() != key.blockSize() || key.index() >= list.blockCount()) {
                    withoutList++;
                } else {
                    ok = list.blockLength(key.index()) == e.length && list.verify(key.index(), buf, 0, e.length);
                }
            }
            checked++;
            checkedBytes += e.length;
            if (!ok) {
                removed++;
                removedBytes += e.weight();
                drop(key, e, "fails verification");
            }
            progress.accept(checkedBytes);
        }
        return new VerifyResult(checked, checkedBytes, removed, removedBytes, withoutList, stopped);
    }

    @Override
    public void close() {
        closed = true;
        channels.invalidateAll();
        channels.cleanUp();
        try {
            lock.release();
        } catch (IOException e) {
            LOG.debug("releasing cache lock", e);
        }
        closeQuietly(lockChannel);
    }

    private static void deleteFile(Path p) {
        HashLists.deleteQuietly(p);
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception e) {
            LOG.debug("close", e);
        }
    }
}
