package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlobId;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static io.warpdata.blobcache.cache.CacheDirectory.deleteFile;

/**
 * Writing block files for {@link DiskBlocks}, up to the rename: room above the free-space floor
 * ({@link FreeSpaceFloor}), then the whole file (header and data) assembled in one direct buffer
 * and written with one {@code write} to {@code tmp/}. Renaming it into place is the index's
 * ({@link DiskBlocks}), under its per-key lock. A write that cannot be made (no room, ENOSPC, a
 * read-only or deleted directory) is not an error for the reader: it is counted
 * ({@code cache_writes_skipped}) and logged at most every 10 s, and the block is served without
 * being kept.
 */
final class DiskWrites {
    private static final Logger LOG = LoggerFactory.getLogger(DiskWrites.class);
    /** Rate limit for repeated write-failure warnings (a full disk would otherwise log per block). */
    private static final long WARN_EVERY_NANOS = 10_000_000_000L;
    /**
     * Bytes of idle write buffers kept: four block files' worth, or 68 small members' (each
     * buffer as long as its file, in 64 KiB steps: {@link DiskScratch.Write}).
     */
    static final long IDLE_WRITE_BYTES = 4L * DiskScratch.Write.BLOCK_FILE;

    /** A block file written to {@code tmp/}, with its chunk checksums, to be renamed into place. */
    record Written(Path tmp, int[] crcs) {
    }

    /**
     * What {@link #toTemp} answers when the file system refused the file for want of space (ENOSPC)
     * though the floor had found the bytes free: the disk is out of inodes (a file per block), which
     * evicting cached blocks cures. Not counted or logged: the caller evicts and tries once more.
     */
    static final Written NO_SPACE = new Written(null, null);

    private final CacheDirectory dir;
    private final FreeSpaceFloor floor;
    private final ReadMetrics metrics;
    /**
     * Write buffers (direct, each as long as the files it was made for), shared rather than one
     * per thread: with 32 fetch workers and member fetches, per-thread buffers held 32+ MiB of
     * direct memory for writes that take a millisecond each. Idle ones are kept up to
     * {@link #IDLE_WRITE_BYTES}, more are made when needed. Kept by count (four, of 1 MiB + header
     * whatever the file), a shuffled epoch of 14 KB members made 6.5 new 1 MiB buffers a second:
     * more than four of its writes were often under way at once, and every buffer made and dropped
     * is memory resident until a collection frees it.
     */
    private final ConcurrentLinkedQueue<DiskScratch.Write> writeScratch = new ConcurrentLinkedQueue<>();
    private final AtomicLong idleWriteBytes = new AtomicLong();
    /**
     * When each cause of skipped writes was last logged: no room above the floor, and a write
     * that failed. Apart, so that a new cause (the disk full of inodes right after it was short
     * of bytes) is logged at once, not hidden behind the other's 10 s.
     */
    private final AtomicLong lastFloorWarn = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);
    private final AtomicLong lastFailureWarn = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);

    DiskWrites(CacheDirectory dir, FreeSpaceFloor floor, ReadMetrics metrics) {
        this.dir = dir;
        this.floor = floor;
        this.metrics = metrics;
    }

    /**
     * Reserves room for a file of {@code bytes} above the floor (evicting if need be); give it
     * back with {@link #release} once the file has landed or was given up.
     *
     * @return false if there is no room (counted and logged): write nothing
     */
    boolean reserve(BlockKey key, long bytes) {
        boolean reserved;
        try {
            reserved = floor.reserve(bytes);
        } catch (UncheckedIOException e) {
            // The file system cannot even be asked for its free space (the directory was
            // deleted under us): the write would fail too.
            failed(key, e.getCause());
            return false;
        }
        if (!reserved) {
            // A file system that is full (by other files: the cache evicted all it could) is not
            // an error for the reader: the block is served from memory, just not kept.
            metrics.writeSkipped();
            warnSkipped(lastFloorWarn, () -> LOG.warn("The cache at {} has no room above its free-space floor ({} bytes free, floor {});"
                    + " serving {} and what follows without caching until space returns", dir.root(),
                    floor.usableBytes(), floor.bytes(), key));
        }
        return reserved;
    }

    void release(long bytes) {
        floor.release(bytes);
    }

    /**
     * Writes the block's file to {@code tmp/} (its shard directory made, ready for the rename).
     *
     * @return the file, or null if it could not be written (counted and logged, nothing left behind)
     */
    Written toTemp(BlockKey key, BlobId listId, byte[] data, int off, int len, int headerLength, boolean lastTry) {
        DiskScratch.Write w = writeScratch.poll();
        if (w == null) {
            w = new DiskScratch.Write(headerLength + len);
        } else {
            idleWriteBytes.addAndGet(-w.capacity());
        }
        try {
            return toTemp(key, listId, data, off, len, headerLength, lastTry, w);
        } finally {
            long capacity = w.capacity();
            if (idleWriteBytes.addAndGet(capacity) <= IDLE_WRITE_BYTES) {
                writeScratch.offer(w);
            } else {
                idleWriteBytes.addAndGet(-capacity);
            }
        }
    }

    private Written toTemp(BlockKey key, BlobId listId, byte[] data, int off, int len, int headerLength,
                           boolean lastTry, DiskScratch.Write w) {
        int[] crcs = BlockFile.chunkCrcs(data, off, len, w.crc);
        // The whole file in one direct buffer, written with one write(): a heap buffer would be
        // copied into a temporary direct one by the JDK anyway (two, header and data, for a
        // gathering write), and this copy is the only one on our side.
        ByteBuffer file = w.buffer(headerLength + len);
        BlockFile.encodeHeader(file, key, listId, len, crcs, w.crc);
        file.put(data, off, len).flip();
        Path tmp = dir.tmpFile(key);
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            while (file.hasRemaining()) {
                ch.write(file);
            }
        } catch (IOException e) {
            deleteFile(tmp);
            return notWritten(key, e, lastTry);
        }
        try {
            dir.makeShard(key);
        } catch (IOException e) {
            deleteFile(tmp);
            return notWritten(key, e, lastTry);
        }
        return new Written(tmp, crcs);
    }

    private Written notWritten(BlockKey key, IOException e, boolean lastTry) {
        if (!lastTry && noSpace(e)) {
            return NO_SPACE;
        }
        failed(key, e);
        return null;
    }

    /** Whether the file system refused for want of space (ENOSPC: blocks or inodes). */
    static boolean noSpace(IOException e) {
        String reason = e instanceof java.nio.file.FileSystemException f ? f.getReason() : e.getMessage();
        return reason != null && reason.contains("No space left on device");
    }

    /** A write of {@code key} that failed: counted, logged at most every 10 s. */
    void failed(BlockKey key, IOException e) {
        metrics.writeSkipped();
        warnSkipped(lastFailureWarn, () -> LOG.warn("Could not write {} to the cache at {} ({}); serving it without caching",
                key, dir.root(), e.toString()));
    }

    /** Logs a skipped cache write at most once per {@link #WARN_EVERY_NANOS} per cause, not once per block. */
    private static void warnSkipped(AtomicLong lastWarn, Runnable log) {
        long now = System.nanoTime();
        long last = lastWarn.get();
        if (now - last >= WARN_EVERY_NANOS && lastWarn.compareAndSet(last, now)) {
            log.run();
        }
    }
}
