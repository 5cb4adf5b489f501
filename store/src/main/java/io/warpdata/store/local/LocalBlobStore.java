package io.warpdata.store.local;

import io.warpdata.store.BlobNotFoundException;
import io.warpdata.store.BlobStore;
import io.warpdata.store.InvalidRemoteException;
import io.warpdata.store.ObjectTooLargeException;
import io.warpdata.store.PermissionDeniedException;
import io.warpdata.store.PointerMovedException;
import io.warpdata.store.StoreException;
import io.warpdata.store.StoreUnreachableException;
import io.warpdata.store.Versioned;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.AccessDeniedException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.TreeSet;

/**
 * A {@link BlobStore} on a local directory ({@code file:///srv/warp-store}), with the same layout
 * as a bucket: key {@code a/b/c} is the file {@code root/a/b/c}. Writes go to a temporary file in
 * the target's directory and are then renamed into place, so a reader sees the old object or the
 * new one, never a partial file; temporary files start with {@code .warp-tmp-} and are never
 * listed. Works on NFS shares too (rename within a directory is atomic there).
 */
public final class LocalBlobStore implements BlobStore {
    /** The most one read call asks of the file system (see {@link #read(String, long, byte[], int, int)}). */
    static final int READ_PIECE = 1 << 20;

    private static final String TMP_PREFIX = ".warp-tmp-";

    private final Path root;
    /**
     * Set by {@link #requireRoot}, for a store that is read: its directory vanishing later (an
     * NFS share unmounted, a disk gone) is an outage, not a store that holds nothing.
     */
    private volatile boolean rootRequired;
    /** One monitor per pointer being updated (few: pointers only). */
    private final java.util.concurrent.ConcurrentHashMap<Path, Object> monitors = new java.util.concurrent.ConcurrentHashMap<>();

    public LocalBlobStore(Path root) {
        this.root = root.toAbsolutePath().normalize();
    }

    /**
     * Refuses a store directory that does not exist, for those who only read it (warpd, doctor,
     * list-remote): a typo in {@code --remote} gave an empty, healthy-looking mount. A publish
     * makes the directory instead.
     *
     * @throws NoSuchBucketException if {@link #root} is not a directory
     */
    public void requireRoot() {
        rootRequired = true;
        if (!Files.isDirectory(root)) {
            throw new io.warpdata.store.NoSuchBucketException("The store directory " + root + " does not exist",
                    "Check --remote (or WARP_REMOTE) for a typo; a new store is made by publishing into it"
                            + " (warpctl publish --remote " + describe() + " ...) or by mkdir -p " + root + ".", null);
        }
    }

    /** Opens {@code file:///abs/dir}. */
    public static LocalBlobStore open(String remote) {
        URI uri;
        try {
            uri = URI.create(remote);
        } catch (IllegalArgumentException e) {
            throw new InvalidRemoteException(remote, "not a URI: " + e.getMessage());
        }
        if ("file".equals(uri.getScheme()) && ("~".equals(uri.getAuthority())
                || (uri.getPath() != null && uri.getPath().startsWith("/~")))) {
            // file://~/store: no shell expands ~ inside a URI (audit 27).
            String rest = remote.substring(remote.indexOf('~') + 1);
            throw new InvalidRemoteException(remote, "~ is not expanded in a URI: write the home directory out, file://"
                    + System.getProperty("user.home") + (rest.startsWith("/") ? rest : "/" + rest));
        }
        if (!"file".equals(uri.getScheme()) || uri.getPath() == null || !uri.getPath().startsWith("/")
                || (uri.getAuthority() != null && !uri.getAuthority().isEmpty())) {
            throw new InvalidRemoteException(remote, "a local store is file:///absolute/dir (three slashes)");
        }
        return new LocalBlobStore(Path.of(uri.getPath()));
    }

    public Path root() {
        return root;
    }

    private Path path(String key) {
        if (key.isEmpty() || key.startsWith("/") || key.contains("\\") || key.contains("\0")) {
            throw new IllegalArgumentException("bad store key '" + key + "'");
        }
        for (String part : key.split("/", -1)) {
            if (part.equals("..") || part.equals(".")) {
                throw new IllegalArgumentException("bad store key '" + key + "'");
            }
        }
        return root.resolve(key);
    }

    /**
     * Called where a key was not found: when the store's directory itself is gone, says so
     * ({@link StoreUnreachableException}: callers answer from what they know) rather than that
     * the key is absent, which would make every dataset vanish from the mount.
     */
    private void requireRootStill() {
        if (rootRequired && !Files.isDirectory(root)) {
            throw new StoreUnreachableException("The store directory " + root + " is gone (unmounted, moved or"
                    + " deleted?)", null);
        }
    }

    @Override
    public OptionalLong length(String key) {
        Path p = path(key);
        try {
            BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class);
            return a.isRegularFile() ? OptionalLong.of(a.size()) : OptionalLong.empty();
        } catch (NoSuchFileException e) {
            requireRootStill();
            return OptionalLong.empty();
        } catch (IOException e) {
            throw translate(e, "read the length of", key);
        }
    }

    @Override
    public void read(String key, long offset, byte[] dst, int dstOff, int len) {
        if (offset < 0 || len < 0 || dstOff < 0 || dstOff + len > dst.length) {
            throw new IllegalArgumentException("bad range " + offset + "+" + len + " into " + dst.length
                    + "-byte buffer at " + dstOff);
        }
        try (FileChannel ch = FileChannel.open(path(key), StandardOpenOption.READ)) {
            long size = ch.size();
            if (offset + len > size) {
                throw new StoreException("Range " + offset + "+" + len + " lies beyond the end of " + describe(key)
                        + " (" + size + " bytes)", "The manifest and the stored object disagree: re-publish the"
                        + " version, or report a bug if the manifest is right.", null);
            }
            // In pieces of at most READ_PIECE: a read into a heap array goes through a temporary
            // direct buffer of its size, which NIO keeps per thread; whole 32 MiB reads on a pool
            // whose threads come and go left warpd at 1.1 GB of RSS (glibc arenas) in a soak.
            ByteBuffer buf = ByteBuffer.wrap(dst, dstOff, len);
            long pos = offset;
            int end = dstOff + len;
            while (buf.position() < end) {
                buf.limit(Math.min(end, buf.position() + READ_PIECE));
                int n = ch.read(buf, pos);
                if (n < 0) {
                    throw new StoreException("Object " + describe(key) + " shrank while being read at offset " + pos,
                            "Something rewrote a content-addressed object in the store: check the store directory.",
                            null);
                }
                pos += n;
            }
        } catch (IOException e) {
            throw translate(e, "read", key);
        }
    }

    @Override
    public byte[] get(String key) {
        try {
            return Files.readAllBytes(path(key));
        } catch (IOException e) {
            throw translate(e, "read", key);
        }
    }

    /** Checks the file's size before reading it. */
    @Override
    public byte[] get(String key, int maxBytes) {
        OptionalLong size = length(key);
        if (size.isEmpty()) {
            throw new BlobNotFoundException(describe(), key);
        }
        if (size.getAsLong() > maxBytes) {
            throw new ObjectTooLargeException(describe(key), size.getAsLong(), maxBytes);
        }
        byte[] data = get(key);
        if (data.length > maxBytes) {
            // Grew between the two calls.
            throw new ObjectTooLargeException(describe(key), data.length, maxBytes);
        }
        return data;
    }

    @Override
    public void put(String key, byte[] data) {
        Path target = path(key);
        Path tmp = writeTemp(key, target, data);
        try {
            try {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
            }
            syncDirectory(target.getParent());
        } catch (IOException e) {
            deleteQuietly(tmp);
            throw translate(e, "write", key);
        }
    }

    /**
     * Compare and swap under an exclusive lock on a hidden lock file next to the object (never
     * listed): the current content's tag is compared, the new content written to a temp file and
     * renamed into place, all while the lock is held, so writers on this machine, or on several
     * machines sharing the directory where the file system supports locks, serialize.
     */
    @Override
    public String putIfUnchanged(String key, byte[] data, String expectedTag) {
        Path target = path(key);
        return locked(key, target, () -> {
            String now = tagOf(target);
            if (!java.util.Objects.equals(now, expectedTag)) {
                throw new PointerMovedException(describe(key), now == null ? "it is gone" : "it was rewritten");
            }
            put(key, data);
            return Versioned.ofContent(data).tag();
        });
    }

    @Override
    public void deleteIfUnchanged(String key, String expectedTag) {
        Path target = path(key);
        locked(key, target, () -> {
            String now = tagOf(target);
            if (now == null || !now.equals(expectedTag)) {
                throw new PointerMovedException(describe(key), now == null ? "it is gone" : "it was rewritten");
            }
            delete(key);
            return null;
        });
    }

    @Override
    public void delete(String key) {
        try {
            Files.deleteIfExists(path(key));
        } catch (IOException e) {
            throw translate(e, "delete", key);
        }
    }

    private String tagOf(Path target) throws IOException {
        try {
            return Versioned.ofContent(Files.readAllBytes(target)).tag();
        } catch (NoSuchFileException e) {
            requireRootStill();
            return null;
        }
    }

    private interface Locked<T> {
        T run() throws IOException;
    }

    /**
     * Runs {@code body} holding the object's lock: a monitor per object for the threads of this
     * store, and an OS file lock for other processes (file locks belong to the whole JVM, so
     * threads must not rely on them; another store over the same directory in this JVM waits).
     */
    private <T> T locked(String key, Path target, Locked<T> body) {
        Object monitor = monitors.computeIfAbsent(target, t -> new Object());
        synchronized (monitor) {
            try {
                Files.createDirectories(target.getParent());
                Path lockFile = target.resolveSibling(TMP_PREFIX + "lock-" + target.getFileName());
                try (FileChannel ch = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
                    FileLock lock = null;
                    while (lock == null) {
                        try {
                            lock = ch.lock();
                        } catch (java.nio.channels.OverlappingFileLockException sameJvm) {
                            Thread.onSpinWait();
                        }
                    }
                    try (FileLock held = lock) {
                        return body.run();
                    }
                }
            } catch (IOException e) {
                throw translate(e, "update", key);
            }
        }
    }

    @Override
    public boolean putIfAbsent(String key, byte[] data) {
        Path target = path(key);
        if (Files.exists(target)) {
            return false;
        }
        return publish(key, target, writeTemp(key, target, data));
    }

    @Override
    public boolean putIfAbsent(String key, Path source) {
        Path target = path(key);
        if (Files.exists(target)) {
            return false;
        }
        Path tmp = createTemp(key, target);
        try (InputStream in = Files.newInputStream(source);
             OutputStream out = Files.newOutputStream(tmp, StandardOpenOption.WRITE)) {
            in.transferTo(out);
        } catch (NoSuchFileException e) {
            deleteQuietly(tmp);
            if (e.getFile() != null && Path.of(e.getFile()).equals(source)) {
                throw new StoreException("Cannot upload " + source + ": the file does not exist",
                        "Check that the file was not moved or deleted during the publish.", e);
            }
            throw translate(e, "write", key);
        } catch (IOException e) {
            deleteQuietly(tmp);
            throw translate(e, "write", key);
        }
        force(tmp, key);
        return publish(key, target, tmp);
    }

    /**
     * Moves a complete temp file into place without ever replacing an existing object: a hard
     * link fails if the target exists (atomic on POSIX and NFS); where links are not supported a
     * move without REPLACE_EXISTING does the same check (also atomic on Linux for files).
     */
    private boolean publish(String key, Path target, Path tmp) {
        try {
            Files.createLink(target, tmp);
            deleteQuietly(tmp);
            syncDirectory(target.getParent());
            return true;
        } catch (FileAlreadyExistsException e) {
            deleteQuietly(tmp);
            return false;
        } catch (UnsupportedOperationException | IOException linkFailed) {
            // Some file systems (FAT, some FUSE and SMB mounts) refuse hard links: move instead.
            try {
                Files.move(tmp, target);
                syncDirectory(target.getParent());
                return true;
            } catch (FileAlreadyExistsException e) {
                deleteQuietly(tmp);
                return false;
            } catch (IOException e) {
                deleteQuietly(tmp);
                throw translate(e, "write", key);
            }
        }
    }

    /**
     * A new temp file beside {@code target}, with the permissions the umask gives any new file
     * (not {@code createTempFile}'s 0600: objects are read by other users, such as a warpd
     * running as its own user over a directory an administrator publishes to).
     */
    private Path createTemp(String key, Path target) {
        try {
            if (!Files.isDirectory(target.getParent())) {
                Files.createDirectories(target.getParent());
                // The new folders' own names, durable before anything is named in them.
                for (Path d = target.getParent().getParent(); d != null && d.startsWith(root); d = d.getParent()) {
                    syncDirectory(d);
                }
            }
            while (true) {
                Path tmp = target.resolveSibling(TMP_PREFIX + Long.toUnsignedString(
                        java.util.concurrent.ThreadLocalRandom.current().nextLong(), 36) + ".tmp");
                try {
                    return Files.createFile(tmp);
                } catch (FileAlreadyExistsException taken) {
                    // another writer's name: draw again
                }
            }
        } catch (IOException e) {
            throw translate(e, "write", key);
        }
    }

    private Path writeTemp(String key, Path target, byte[] data) {
        Path tmp = createTemp(key, target);
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
            ByteBuffer buf = ByteBuffer.wrap(data);
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            // Durable before it becomes visible: a crash must not leave a visible empty object.
            ch.force(true);
        } catch (IOException e) {
            deleteQuietly(tmp);
            throw translate(e, "write", key);
        }
        return tmp;
    }

    /**
     * Makes the names in {@code dir} durable ({@code fsync} of the directory). Without it a crash
     * or power loss could keep a pointer renamed after the version manifest or blob it names while
     * losing their own names, on file systems that do not keep metadata changes in order (some
     * NFS servers); a file system that cannot sync a directory is left as it is.
     */
    private static void syncDirectory(Path dir) {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException e) {
            // EINVAL on file systems without directory sync: nothing more can be done here.
        }
    }

    private void force(Path tmp, String key) {
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
            ch.force(true);
        } catch (IOException e) {
            deleteQuietly(tmp);
            throw translate(e, "write", key);
        }
    }

    private static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException ignored) {
            // A leftover .warp-tmp- file is harmless: it is never listed or read.
        }
    }

    @Override
    public List<String> list(String prefix) {
        if (!prefix.isEmpty() && !prefix.endsWith("/")) {
            throw new IllegalArgumentException("list prefix must end with '/': '" + prefix + "'");
        }
        Path dir = prefix.isEmpty() ? root : path(prefix.substring(0, prefix.length() - 1));
        TreeSet<String> out = new TreeSet<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path child : ds) {
                String name = child.getFileName().toString();
                if (name.startsWith(TMP_PREFIX)) {
                    continue;
                }
                out.add(Files.isDirectory(child) ? name + "/" : name);
            }
        } catch (NoSuchFileException | NotDirectoryException e) {
            requireRootStill();
            return List.of();
        } catch (IOException e) {
            throw translate(e, "list", prefix);
        }
        return new ArrayList<>(out);
    }

    @Override
    public String describe() {
        // file:///data/store, without the slash a directory's URI ends with: callers append "/" + key
        String uri = root.toUri().toString();
        return uri.endsWith("/") && uri.length() > "file:///".length() ? uri.substring(0, uri.length() - 1) : uri;
    }

    private String describe(String key) {
        return root.resolve(key).toString();
    }

    @Override
    public void close() {
    }

    private StoreException translate(IOException e, String op, String key) {
        String what = "Failed to " + op + " " + describe(key);
        if (e instanceof NoSuchFileException) {
            requireRootStill();
            return new BlobNotFoundException(describe(), key);
        }
        if (e instanceof AccessDeniedException) {
            return new PermissionDeniedException(what + ": permission denied on " + e.getMessage(),
                    "Give this user read access to " + root + " and everything in it (write access to publish),"
                            + " e.g. chmod -R a+rX " + root + " (earlier Warp releases wrote objects"
                            + " readable by their writer only).", e);
        }
        String msg = String.valueOf(e.getMessage());
        if (msg.contains("No space left") || msg.contains("Disk quota exceeded")) {
            return new StoreException(what + ": the disk is full (" + msg + ")",
                    "Free space on the file system holding " + root + ", or publish to another store.", e);
        }
        return new StoreException(what + ": " + e, "Check that " + root + " exists, is mounted and readable"
                + " (and writable to publish).", e);
    }
}
