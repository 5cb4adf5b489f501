package io.warpdata.vfs.fuse;

import io.warpdata.blobcache.DatasetNotFoundException;
import io.warpdata.vfs.Errno;
import io.warpdata.vfs.Node;
import io.warpdata.vfs.NodeAttributes;
import io.warpdata.vfs.NoSuchEntryException;
import io.warpdata.vfs.WarpTree;
import io.warpdata.vfs.WrongNodeTypeException;
import com.kenai.jffi.MemoryIO;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.Struct;
import jnr.ffi.types.dev_t;
import jnr.ffi.types.gid_t;
import jnr.ffi.types.mode_t;
import jnr.ffi.types.off_t;
import jnr.ffi.types.size_t;
import jnr.ffi.types.u_int32_t;
import jnr.ffi.types.uid_t;
import ru.serce.jnrfuse.FuseFillDir;
import ru.serce.jnrfuse.FuseStubFS;
import ru.serce.jnrfuse.NotImplemented;
import ru.serce.jnrfuse.struct.FileStat;
import ru.serce.jnrfuse.struct.Flock;
import ru.serce.jnrfuse.struct.FuseBufvec;
import ru.serce.jnrfuse.struct.FuseFileInfo;
import ru.serce.jnrfuse.struct.FusePollhandle;
import ru.serce.jnrfuse.struct.Statvfs;
import ru.serce.jnrfuse.struct.Timespec;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.atomic.LongAdder;

/**
 * The jnr-fuse adapter: converts paths, stat structs and errnos between FUSE and
 * {@link WarpTree}, nothing else. Every operation the kernel can send is overridden, because
 * {@link FuseStubFS}'s default answer is 0 (success), which must never reach a caller of a
 * read-only file system: write-like calls answer EROFS, the rest their real answer or ENOSYS.
 *
 * <p>Five overrides carry {@link NotImplemented} on purpose, which keeps jnr-fuse from
 * registering them with libfuse: {@code read_buf} and {@code write_buf} (libfuse would call them
 * instead of {@code read}/{@code write}), {@code lock}/{@code flock} (unregistered, the kernel
 * keeps POSIX and BSD locks locally, which is exactly right for immutable files), and
 * {@code ioctl} (see there).
 *
 * <p>The hot operations (getattr, fgetattr, read, readdir) reach libfuse through
 * {@link RawCallbacks}, which replaces jnr-fuse's registrations of them with callbacks that
 * skip jnr's per-call struct wrappers; the overrides here give the same answers and stay for
 * tests and for platforms whose struct layout RawCallbacks does not know. Files are opened and
 * closed without a round trip (see {@link #open} and {@link #flush}).
 *
 * <p>Every callback catches everything: an exception must never unwind into native code.
 */
public final class WarpFuse extends FuseStubFS {
    private static final int O_ACCMODE = 3;
    private static final int O_RDONLY = 0;
    private static final int O_TRUNC = 01000;
    private static final int W_OK = 2;
    private static final int X_OK = 1;
    private static final int ST_RDONLY = 1;
    private static final int ST_NOSUID = 2;
    /**
     * Block size reported to stat and statfs. Not the largest FUSE read (1 MiB): programs size
     * their I/O buffers by it (Python's {@code open()} allocates one of st_blksize bytes per
     * file), and 128 KiB is already a whole read-ahead step.
     */
    private static final int BLOCK_SIZE = 128 << 10;

    private final WarpTree tree;
    private final Errno errno;
    private final long uid;
    private final long gid;
    private static final MemoryIO MEMORY = MemoryIO.getInstance();
    private final HandleTable handles = new HandleTable();
    private volatile FuseSession session;
    /** The latest links the kernel caches, kept current (see {@link LinkWatch}). */
    private final LinkWatch links = new LinkWatch(this::linkTarget, this::invalidate);
    private final LongAdder linkReads = new LongAdder();
    /** One native stat struct per FUSE thread for readdir's d_type (libfuse copies it). */
    private final ThreadLocal<FileStat> direntStats = ThreadLocal.withInitial(() -> {
        Runtime runtime = Runtime.getSystemRuntime();
        return FileStat.of(Memory.allocateDirect(runtime, Struct.size(new FileStat(runtime)), true));
    });
    /** The same for the raw readdir, with room for the entry name. */
    private final ThreadLocal<RawCallbacks.DirentScratch> direntScratch =
            ThreadLocal.withInitial(() -> new RawCallbacks.DirentScratch(Runtime.getSystemRuntime()));
    /** The hot callbacks as libfuse calls them (null on a platform where jnr-fuse's stay). */
    private final RawCallbacks raw;
    /** Whether files are opened without a round trip to us (see {@link #open}). */
    private final boolean noOpen;

    public WarpFuse(WarpTree tree, Errno errno, long uid, long gid) {
        this(tree, errno, uid, gid, KernelVersion.running().atLeast(4, 19));
    }

    /**
     * @param noOpen answer OPEN of files with ENOSYS, so that the kernel stops sending OPEN and
     *        RELEASE for files (needs Linux 4.19 or later; see {@link #open})
     */
    WarpFuse(WarpTree tree, Errno errno, long uid, long gid, boolean noOpen) {
        this.tree = tree;
        this.errno = errno;
        this.uid = uid;
        this.gid = gid;
        this.noOpen = noOpen;
        // After jnr-fuse registered its callbacks, before libfuse ever sees the table.
        this.raw = RawCallbacks.install(fuseOperations, this);
    }

    /**
     * Mounts at {@code mountPoint} and returns once the kernel has the mount; requests are served
     * by {@link FuseSession}'s fixed pool of worker threads.
     *
     * @throws ru.serce.jnrfuse.FuseException if already mounted, or libfuse cannot mount
     */
    public synchronized void mount(Path mountPoint, MountOptions options) {
        if (session != null) {
            throw new ru.serce.jnrfuse.FuseException("already mounted at " + this.mountPoint);
        }
        this.mountPoint = mountPoint;
        session = FuseSession.mount(fuseOperations, Struct.size(fuseOperations), mountPoint, "warp", options.fuseArgs());
        links.start();
    }

    /** Unmounts (lazily: open files keep working until closed) and ends the session. */
    @Override
    public synchronized void umount() {
        if (session != null) {
            links.close();
            session.unmount();
            session = null;
        }
    }

    /** A link's target now, or null if it is gone; throws if that cannot be known now. */
    private String linkTarget(String path) {
        try {
            return tree.readlink(tree.lookup(path));
        } catch (NoSuchEntryException | DatasetNotFoundException | WrongNodeTypeException gone) {
            return null;
        }
    }

    private int invalidate(long node) {
        FuseSession s = session;
        return s == null ? 0 : s.invalidate(node);
    }

    /**
     * Re-reads the latest pointers of every link the kernel caches now (after a publish or
     * {@code warpctl refresh}), instead of within the next {@link LinkWatch#PERIOD}.
     *
     * @return how many links moved
     */
    public int checkLinks() {
        return links.check();
    }

    /** Readlink calls answered (each latest link once per target where the kernel caches links). */
    public long linkReads() {
        return linkReads.sum();
    }

    /** Cached latest links invalidated because their pointer moved. */
    public long linkInvalidations() {
        return links.invalidations();
    }

    /** The largest read request the kernel sends this mount (0 when not mounted). */
    public int maxReadBytes() {
        FuseSession s = session;
        return s == null ? 0 : s.maxReadBytes();
    }

    /** Whether the kernel caches symlink targets on this mount. */
    public boolean kernelCachesLinks() {
        FuseSession s = session;
        return s != null && s.cachesSymlinks();
    }

    /**
     * Open directories, and open files on kernels that still send OPEN (a gauge); on Linux
     * 4.19+ files are opened without us (see {@link #open}).
     */
    public int openHandles() {
        return handles.size();
    }

    private int fail(Throwable t, String op, String path) {
        return -errno.of(t, op, path);
    }

    private Node node(String path, FuseFileInfo fi) {
        Node n = fi == null ? null : handles.get(fi.fh.get());
        return n != null ? n : tree.lookup(path);
    }

    // ---- reads ----

    @Override
    public int getattr(String path, FileStat stat) {
        try {
            fill(stat, tree.attributes(tree.lookup(path)));
            return 0;
        } catch (Throwable t) {
            return fail(t, "getattr", path);
        }
    }

    @Override
    public int fgetattr(String path, FileStat stat, FuseFileInfo fi) {
        try {
            fill(stat, tree.attributes(node(path, fi)));
            return 0;
        } catch (Throwable t) {
            return fail(t, "fgetattr", path);
        }
    }

    private void fill(FileStat stat, NodeAttributes a) {
        stat.st_mode.set(typeBits(a.type()) | a.permissions());
        stat.st_nlink.set(a.nlink());
        stat.st_size.set(a.size());
        stat.st_blocks.set((a.size() + 511) / 512);
        stat.st_blksize.set(BLOCK_SIZE);
        stat.st_uid.set(uid);
        stat.st_gid.set(gid);
        stat.st_mtim.tv_sec.set(a.mtimeSeconds());
        stat.st_mtim.tv_nsec.set(0);
        stat.st_ctim.tv_sec.set(a.mtimeSeconds());
        stat.st_ctim.tv_nsec.set(0);
        stat.st_atim.tv_sec.set(a.mtimeSeconds());
        stat.st_atim.tv_nsec.set(0);
    }

    private static int typeBits(Node.Type type) {
        return switch (type) {
            case DIRECTORY -> FileStat.S_IFDIR;
            case FILE -> FileStat.S_IFREG;
            case SYMLINK -> FileStat.S_IFLNK;
        };
    }

    private void writeStat(Pointer stat, NodeAttributes a) {
        RawCallbacks.writeStat(stat, typeBits(a.type()) | a.permissions(), a.nlink(), a.size(), BLOCK_SIZE, uid, gid,
                a.mtimeSeconds());
    }

    // ---- the raw callbacks (RawCallbacks): same answers as the overrides, without jnr's wrappers ----

    int rawGetattr(Pointer path, Pointer stat) {
        try {
            writeStat(stat, tree.attributes(tree.lookup(RawCallbacks.string(path))));
            return 0;
        } catch (Throwable t) {
            return fail(t, "getattr", path);
        }
    }

    int rawFgetattr(Pointer path, Pointer stat, Pointer fi) {
        try {
            writeStat(stat, tree.attributes(node(path, fi)));
            return 0;
        } catch (Throwable t) {
            return fail(t, "fgetattr", path);
        }
    }

    int rawRead(Pointer path, Pointer buf, long size, long offset, Pointer fi) {
        try {
            return readInto(node(path, fi), buf, size, offset);
        } catch (Throwable t) {
            return fail(t, "read", path);
        }
    }

    int rawReaddir(Pointer path, Pointer buf, Pointer filler, long offset, Pointer fi) {
        try {
            Node n = node(path, fi);
            RawCallbacks.DirentScratch scratch = direntScratch.get();
            long fill = filler.address();
            long b = buf.address();
            tree.list(n, offset, (name, type, next) -> scratch.fill(fill, b, name, typeBits(type), next) != 0);
            return 0;
        } catch (Throwable t) {
            return fail(t, "readdir", path);
        }
    }

    /** The node of an open handle, else of the path (files are opened without a handle). */
    private Node node(Pointer path, Pointer fi) {
        Node n = handles.get(RawCallbacks.fileHandle(fi));
        return n != null ? n : tree.lookup(RawCallbacks.string(path));
    }

    /** {@link #fail(Throwable, String, String)} for a raw path; the path is decoded only now, for the log line. */
    private int fail(Throwable t, String op, Pointer path) {
        String p;
        try {
            p = RawCallbacks.string(path);
        } catch (Throwable undecodable) {
            p = "(unreadable path)";
        }
        return fail(t, op, p);
    }

    /**
     * The target of a latest link. Where the kernel caches symlinks (Linux 4.20+), this is asked
     * once per link and target, not on every path walk through it; {@link LinkWatch} invalidates
     * the kernel's copy when the pointer moves.
     */
    @Override
    public int readlink(String path, Pointer buf, @size_t long size) {
        try {
            String text = tree.readlink(tree.lookup(path));
            byte[] target = text.getBytes(StandardCharsets.UTF_8);
            if (size <= 0) {
                return -Errno.EINVAL;
            }
            int n = (int) Math.min(target.length, size - 1);
            buf.put(0, target, 0, n);
            buf.putByte(n, (byte) 0);
            linkReads.increment();
            FuseSession s = session;
            if (s != null && s.cachesSymlinks()) {
                links.answered(path, FuseSession.requestNode(), text);
            }
            return 0;
        } catch (Throwable t) {
            return fail(t, "readlink", path);
        }
    }

    /**
     * Files need no open state: everything a read needs is in its path. Answering ENOSYS makes
     * the kernel (Linux 4.19+, "no_open") treat this and every later open of a file as
     * successful without asking us, never send RELEASE, and keep the page cache across opens
     * (FOPEN_KEEP_CACHE is its default then), which saves two of the four round trips of
     * open-read-close. Writes never get here: the mount is read-only, the VFS answers EROFS.
     * Reads then come with no file handle and find their node by path (one lookup, no I/O).
     */
    @Override
    public int open(String path, FuseFileInfo fi) {
        if (noOpen) {
            return -Errno.ENOSYS;
        }
        try {
            int flags = fi.flags.get();
            if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC) != 0) {
                return -Errno.EROFS;
            }
            Node n = tree.lookup(path);
            if (n.type() == Node.Type.DIRECTORY) {
                return -Errno.EISDIR;
            }
            fi.fh.set(handles.register(n));
            return 0;
        } catch (Throwable t) {
            return fail(t, "open", path);
        }
    }

    @Override
    public int read(String path, Pointer buf, @size_t long size, @off_t long offset, FuseFileInfo fi) {
        try {
            return readInto(node(path, fi), buf, size, offset);
        } catch (Throwable t) {
            return fail(t, "read", path);
        }
    }

    /**
     * Reads straight into libfuse's reply buffer through a direct ByteBuffer over it: cached
     * bytes go from the cache file into the reply with one copy (two fewer than through a heap
     * array), fetched bytes with one copy from the fetch buffer.
     */
    private int readInto(Node n, Pointer buf, long size, long offset) {
        int len = (int) Math.min(size, Integer.MAX_VALUE);
        return tree.read(n, offset, MEMORY.newDirectByteBuffer(buf.address(), len));
    }

    @Override
    public int release(String path, FuseFileInfo fi) {
        handles.release(fi.fh.get());
        return 0;
    }

    @Override
    public int opendir(String path, FuseFileInfo fi) {
        try {
            Node n = tree.lookup(path);
            if (n.type() != Node.Type.DIRECTORY) {
                return -Errno.ENOTDIR;
            }
            fi.fh.set(handles.register(n));
            return 0;
        } catch (Throwable t) {
            return fail(t, "opendir", path);
        }
    }

    @Override
    public int readdir(String path, Pointer buf, FuseFillDir filter, @off_t long offset, FuseFileInfo fi) {
        try {
            // Only st_mode's type bits are used (for d_type), so find/ImageFolder need no stat per entry.
            FileStat entry = direntStats.get();
            tree.list(node(path, fi), offset, (name, type, next) -> {
                entry.st_mode.set(switch (type) {
                    case DIRECTORY -> FileStat.S_IFDIR;
                    case FILE -> FileStat.S_IFREG;
                    case SYMLINK -> FileStat.S_IFLNK;
                });
                return filter.apply(buf, name, entry, next) != 0;
            });
            return 0;
        } catch (Throwable t) {
            return fail(t, "readdir", path);
        }
    }

    @Override
    public int releasedir(String path, FuseFileInfo fi) {
        handles.release(fi.fh.get());
        return 0;
    }

    @Override
    public int statfs(String path, Statvfs stbuf) {
        try {
            stbuf.f_bsize.set(BLOCK_SIZE);
            stbuf.f_frsize.set(BLOCK_SIZE);
            stbuf.f_blocks.set(0);
            stbuf.f_bfree.set(0);
            stbuf.f_bavail.set(0);
            stbuf.f_files.set(0);
            stbuf.f_ffree.set(0);
            stbuf.f_favail.set(0);
            stbuf.f_flag.set(ST_RDONLY | ST_NOSUID);
            stbuf.f_namemax.set(255);
            return 0;
        } catch (Throwable t) {
            return fail(t, "statfs", path);
        }
    }

    @Override
    public int access(String path, int mask) {
        try {
            Node n = tree.lookup(path);
            if ((mask & W_OK) != 0) {
                return -Errno.EROFS;
            }
            if ((mask & X_OK) != 0 && (tree.attributes(n).permissions() & 0111) == 0) {
                return -Errno.EACCES;
            }
            return 0;
        } catch (Throwable t) {
            return fail(t, "access", path);
        }
    }

    /**
     * No extended attributes. ENOSYS (not ENODATA) on purpose: the kernel then remembers that
     * this file system has no xattrs and answers every later getxattr/listxattr itself
     * (EOPNOTSUPP, which ls, cp -a and tar treat as "no ACL, no label"), saving two round trips
     * per file in {@code ls -l}.
     */
    @Override
    public int getxattr(String path, String name, Pointer value, @size_t long size) {
        return -Errno.ENOSYS;
    }

    @Override
    public int listxattr(String path, Pointer list, @size_t long size) {
        return -Errno.ENOSYS;
    }

    /**
     * Nothing is buffered for writing, so closing a file needs no work. ENOSYS (not 0) on
     * purpose: the kernel then stops sending FLUSH on every close ("no_flush"), one round trip
     * less per file opened.
     */
    @Override
    public int flush(String path, FuseFileInfo fi) {
        return -Errno.ENOSYS;
    }

    @Override
    public int fsync(String path, int isdatasync, FuseFileInfo fi) {
        return 0;
    }

    @Override
    public int fsyncdir(String path, FuseFileInfo fi) {
        return 0;
    }

    @Override
    public Pointer init(Pointer conn) {
        FuseSession.tuneConnection(conn);
        return null;
    }

    @Override
    public void destroy(Pointer initResult) {
        // Nothing to tear down here: WarpDaemon owns the tree, reader and store.
    }

    // ---- kept away from libfuse on purpose (see the class comment) ----

    @Override
    @NotImplemented
    public int read_buf(String path, Pointer bufp, @size_t long size, @off_t long off, FuseFileInfo fi) {
        return -Errno.ENOSYS;
    }

    @Override
    @NotImplemented
    public int write_buf(String path, FuseBufvec buf, @off_t long off, FuseFileInfo fi) {
        return -Errno.EROFS;
    }

    @Override
    @NotImplemented
    public int lock(String path, FuseFileInfo fi, int cmd, Flock flock) {
        return -Errno.ENOSYS;
    }

    @Override
    @NotImplemented
    public int flock(String path, FuseFileInfo fi, int op) {
        return -Errno.ENOSYS;
    }

    // ---- not supported ----

    @Override
    public int bmap(String path, @size_t long blocksize, long idx) {
        return -Errno.ENOSYS;
    }

    /**
     * No ioctls. Unregistered, so that libfuse answers ENOSYS (the kernel passes ENOTTY on)
     * without calling into Java: the kernel never remembers that a file system has no ioctls,
     * and Python's {@code open()} asks every file whether it is a terminal (TCGETS), so every
     * file a PyTorch DataLoader opens costs one FUSE_IOCTL round trip; it need not also cost an
     * upcall into the JVM.
     */
    @Override
    @NotImplemented
    public int ioctl(String path, int cmd, Pointer arg, FuseFileInfo fi, @u_int32_t long flags, Pointer data) {
        return -Errno.ENOSYS;
    }

    @Override
    public int poll(String path, FuseFileInfo fi, FusePollhandle ph, Pointer reventsp) {
        return -Errno.ENOSYS;
    }

    // ---- write-like: read-only file system ----

    @Override
    public int write(String path, Pointer buf, @size_t long size, @off_t long offset, FuseFileInfo fi) {
        return -Errno.EROFS;
    }

    @Override
    public int create(String path, @mode_t long mode, FuseFileInfo fi) {
        return -Errno.EROFS;
    }

    @Override
    public int mknod(String path, @mode_t long mode, @dev_t long rdev) {
        return -Errno.EROFS;
    }

    @Override
    public int mkdir(String path, @mode_t long mode) {
        return -Errno.EROFS;
    }

    @Override
    public int unlink(String path) {
        return -Errno.EROFS;
    }

    @Override
    public int rmdir(String path) {
        return -Errno.EROFS;
    }

    @Override
    public int symlink(String oldpath, String newpath) {
        return -Errno.EROFS;
    }

    @Override
    public int rename(String oldpath, String newpath) {
        return -Errno.EROFS;
    }

    @Override
    public int link(String oldpath, String newpath) {
        return -Errno.EROFS;
    }

    @Override
    public int chmod(String path, @mode_t long mode) {
        return -Errno.EROFS;
    }

    @Override
    public int chown(String path, @uid_t long uid, @gid_t long gid) {
        return -Errno.EROFS;
    }

    @Override
    public int truncate(String path, @off_t long size) {
        return -Errno.EROFS;
    }

    @Override
    public int ftruncate(String path, @off_t long size, FuseFileInfo fi) {
        return -Errno.EROFS;
    }

    @Override
    public int utimens(String path, Timespec[] timespec) {
        return -Errno.EROFS;
    }

    @Override
    public int setxattr(String path, String name, Pointer value, @size_t long size, int flags) {
        return -Errno.EROFS;
    }

    @Override
    public int removexattr(String path, String name) {
        return -Errno.EROFS;
    }

    @Override
    public int fallocate(String path, int mode, @off_t long off, @off_t long length, FuseFileInfo fi) {
        return -Errno.EROFS;
    }
}
