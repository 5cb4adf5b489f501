package io.warpdata.blobcache.cache;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The block cache's directory, {@code <dir>/v1/}, held locked while open:
 * <pre>
 * v1/lock                        held (flock) while a cache is open: one warpd per directory
 * v1/blocks/ab/&lt;blob&gt;.&lt;block size&gt;.&lt;index&gt;   block files, ab = first byte of the blob id
 * v1/lists/&lt;list id&gt;              block hash lists, named by their own SHA-256
 * v1/tmp/                        files being written; emptied at start
 * </pre>
 * At start it recovers what a crash left: temp files are deleted, and every block file whose
 * header ({@link BlockFile}) is valid and matches its name and shard is found again; anything
 * else under {@code blocks/} is deleted.
 */
final class CacheDirectory implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CacheDirectory.class);
    static final String FORMAT_DIR = BlockCache.FOLDER;

    private final Path root;
    private final Path blocksDir;
    private final Path listsDir;
    private final Path tmpDir;
    private FileChannel lockChannel;
    private FileLock lock;
    /** The identity of the lock file {@link #lock} is on (see {@link #stillLocked}). */
    private Object lockFile;
    private final AtomicLong tmpCounter = new AtomicLong();
    /** The writes under way here: {@link #close} waits for them and refuses more. */
    private final WriteGate writes = new WriteGate();
    /** Which of the 256 block subdirectories are known to exist (made on first use). */
    private final AtomicIntegerArray shardMade = new AtomicIntegerArray(256);
    /**
     * How long {@code blocks/} must be left alone before a block folder deleted under warpd is
     * made again: 5 s, as {@code v1/} ({@code DiskBlocks.REMAKE_AFTER_NANOS}). A folder made again
     * while an {@code rm -rf} is under way makes the rm fail ("Directory not empty").
     */
    static final long SHARD_REMAKE_QUIET_MILLIS = 5_000;
    /** {@code blocks/}'s modification time after warpd last made a folder in it: its own change, not a deletion. */
    private FileTime blocksChangedHere;

    /** A valid block file found at start. */
    record Found(BlockKey key, BlockFile.Header header, Path path, FileTime mtime) {
    }

    /**
     * Opens (creating if needed) the directory under {@code dir} and locks it.
     *
     * @throws CacheDirectoryException if the directory is unusable or in use by another process
     */
    CacheDirectory(Path dir) {
        this.root = dir.resolve(FORMAT_DIR);
        this.blocksDir = root.resolve("blocks");
        this.listsDir = root.resolve("lists");
        this.tmpDir = root.resolve("tmp");
        try {
            lockChannel = makeFolders();
        } catch (AccessDeniedException e) {
            throw new CacheDirectoryException(dir, "is not writable", "Give warpd's user write access to it, or pass"
                    + " another --cache-dir.", e);
        } catch (IOException e) {
            if (e instanceof java.nio.file.FileSystemException f && String.valueOf(f.getReason()).contains("Read-only")) {
                throw new CacheDirectoryException(dir, "is on a read-only file system", "warpd writes its cache there"
                        + " (blocks, hash lists, a lock): pass a --cache-dir on a writable file system (or set"
                        + " WARP_CACHE_DIR).", e);
            }
            throw new CacheDirectoryException(dir, "cannot be created: " + e, "Check the path and the disk, or pass"
                    + " another --cache-dir.", e);
        }
        try {
            FileLock l = lockChannel.tryLock();
            if (l == null) {
                throw new OverlappingFileLockException();
            }
            this.lock = l;
            this.lockFile = fileKey();
        } catch (OverlappingFileLockException | IOException e) {
            closeQuietly(lockChannel);
            throw new CacheDirectoryException(dir, "is in use by another warpd", "Stop the other warpd, or give"
                    + " each warpd its own --cache-dir.", e);
        }
    }

    /**
     * Makes the directory again if it was deleted under a running warpd ({@code rm -rf} of its
     * {@code v1/}): its folders, and its lock, taken again so that no other warpd opens it
     * meanwhile. Not when the cache directory itself is gone: that was deleted on purpose.
     *
     * @return true if it was gone and is made again; false if it is there (or cannot be made: the
     *         writes that follow fail and are counted as before)
     */
    synchronized boolean remakeIfGone() {
        if (!broken() || !Files.isDirectory(root.getParent())) {
            // Whole, or the cache directory itself is gone (deleted on purpose): not made again.
            return false;
        }
        try {
            for (int i = 0; i < shardMade.length(); i++) {
                shardMade.set(i, 0);
            }
            FileChannel ch = makeFolders();
            FileLock l = ch.tryLock();
            if (l == null) {
                closeQuietly(ch);
                LOG.warn("The cache directory {} was made again, but another process holds its lock", root);
                return false;
            }
            closeQuietly(lockChannel);
            lockChannel = ch;
            lock = l;
            lockFile = fileKey();
            return true;
        } catch (IOException | OverlappingFileLockException e) {
            LOG.debug("cannot make the cache directory {} again: {}", root, e.toString());
            return false;
        }
    }

    /**
     * Makes the three folders (those missing, and {@code v1/} itself: its owner's only, 0700,
     * as warpd makes them at start; audit 31 found them remade readable by every user) and opens
     * the lock file, not yet locked.
     */
    private FileChannel makeFolders() throws IOException {
        java.nio.file.attribute.FileAttribute<?> ownerOnly = java.nio.file.attribute.PosixFilePermissions
                .asFileAttribute(java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
        Files.createDirectories(blocksDir, ownerOnly);
        Files.createDirectories(listsDir, ownerOnly);
        Files.createDirectories(tmpDir, ownerOnly);
        return FileChannel.open(root.resolve("lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    }

    /** The identity (device and inode) of the lock file in place now, or null if there is none. */
    private Object fileKey() {
        try {
            return Files.readAttributes(root.resolve("lock"), java.nio.file.attribute.BasicFileAttributes.class).fileKey();
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * Whether the lock file in place is still the one this process locked. After {@code v1/} was
     * deleted, another warpd may start on the directory before this one makes it again, and take
     * a new lock file (audit 31): both then wrote blocks into one directory and evicted each
     * other's. A process whose lock was taken over so keeps off the disk.
     */
    synchronized boolean stillLocked() {
        Object now = fileKey();
        return now == null || now.equals(lockFile);
    }

    /** Whether a folder of the cache is missing (deleted under a running warpd). */
    boolean broken() {
        return !(Files.isDirectory(blocksDir) && Files.isDirectory(tmpDir) && Files.isDirectory(listsDir));
    }

    /** {@code v1/}: what the cache's free space is measured on, and what its messages name. */
    Path root() {
        return root;
    }

    /** Where block hash lists are kept. */
    Path listsDir() {
        return listsDir;
    }

    /** Where files are written before they are renamed into place. */
    Path tmpDir() {
        return tmpDir;
    }

    /** Every file made here is made between {@link WriteGate#begin} and {@link WriteGate#end} of this gate. */
    WriteGate writes() {
        return writes;
    }

    /**
     * Deletes temp files left by a crash and finds every valid block file, oldest first;
     * invalid ones are deleted.
     *
     * @throws CacheDirectoryException if the directory cannot be read
     */
    List<Found> recover() {
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
                        if (h == null || !h.key().equals(key) || !p.getFileName().toString().equals(key.fileName())
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
            bytes += f.header().fileLength();
        }
        if (tmpDeleted + invalid > 0 || !found.isEmpty()) {
            LOG.info("Block cache {}: {} blocks ({} bytes) found; removed {} temp files and {} invalid block files",
                    root, found.size(), bytes, tmpDeleted, invalid);
        }
        return found;
    }

    /** The block's file under its real name. */
    Path path(BlockKey key) {
        return blocksDir.resolve(key.blob().hex().substring(0, 2)).resolve(key.fileName());
    }

    /** A new, unique temp file name for writing {@code key}. */
    Path tmpFile(BlockKey key) {
        return tmpDir.resolve(key.fileName() + "." + tmpCounter.incrementAndGet() + ".tmp");
    }

    /**
     * Makes the subdirectory {@link #path} puts {@code key} in, once per directory.
     *
     * @throws IOException if it cannot be made
     */
    void makeShard(BlockKey key) throws IOException {
        int shard = shardOf(key);
        if (shardMade.get(shard) == 0) {
            Path folder = path(key).getParent();
            if (!Files.isDirectory(folder)) {
                makeFolder(folder); // not blocks/ itself: gone, remakeIfGone makes it again, after its wait
            }
            shardMade.set(shard, 1);
        }
    }

    /**
     * Makes the subdirectory of {@code key} again, found gone at a rename: a user freeing space
     * deleted {@code blocks/*} under a running warpd, and every block of the shards not made again
     * was served without being cached, for good, until a restart (audit 35). Only once
     * {@code blocks/} has been left alone {@link #SHARD_REMAKE_QUIET_MILLIS} (its modification time
     * that old, or warpd's own last change): until then a deletion may be under way, and a
     * folder made again in it makes a user's {@code rm -rf} of the cache stop with "Directory not
     * empty" (session 44's CI).
     *
     * @throws IOException if it cannot be made, or not yet
     */
    synchronized void remakeShard(BlockKey key) throws IOException {
        Path shard = path(key).getParent();
        FileTime changed;
        try {
            changed = Files.getLastModifiedTime(blocksDir);
        } catch (java.nio.file.NoSuchFileException e) {
            // blocks/ itself is gone: remakeIfGone makes the cache's folders again, after its wait
            throw new java.nio.file.NoSuchFileException(blocksDir.toString(), null, "the cache's blocks folder is gone");
        }
        long age = System.currentTimeMillis() - changed.toMillis();
        if (!changed.equals(blocksChangedHere) && Math.abs(age) < SHARD_REMAKE_QUIET_MILLIS) {
            throw new java.nio.file.NoSuchFileException(shard.toString(), null, "deleted, and the cache's blocks folder"
                    + " changed " + age + " ms ago (a deletion under way?): made again once it is left alone "
                    + SHARD_REMAKE_QUIET_MILLIS / 1000 + " s");
        }
        makeFolder(shard);
        shardMade.set(shardOf(key), 1);
    }

    /** Makes a block folder (not its parents) and notes {@code blocks/}'s new modification time as warpd's own. */
    private synchronized void makeFolder(Path shard) throws IOException {
        try {
            Files.createDirectory(shard);
        } catch (java.nio.file.FileAlreadyExistsException e) {
            // another writer made it first
        }
        blocksChangedHere = Files.getLastModifiedTime(blocksDir);
    }

    /** The subdirectory number of {@code key}: its blob id's first byte. */
    private static int shardOf(BlockKey key) {
        return Integer.parseInt(key.blob().hex().substring(0, 2), 16);
    }

    /**
     * Refuses new writes, waits (up to {@link WriteGate#CLOSE_WAIT_NANOS}) for those under way,
     * and releases the lock: another warpd may open the directory.
     */
    @Override
    public void close() {
        // Not holding this object's lock while waiting: a write under way may need it (a folder made
        // again, the lock file looked at).
        if (!writes.close()) {
            LOG.warn("Closing the cache at {}: writes still under way after {} s; they may land after warpd stopped",
                    root, TimeUnit.NANOSECONDS.toSeconds(WriteGate.CLOSE_WAIT_NANOS));
        }
        synchronized (this) {
            try {
                lock.release();
            } catch (IOException e) {
                LOG.debug("releasing cache lock", e);
            }
            closeQuietly(lockChannel);
        }
    }

    static void deleteFile(Path p) {
        HashLists.deleteQuietly(p);
    }

    static void closeQuietly(AutoCloseable c) {
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
