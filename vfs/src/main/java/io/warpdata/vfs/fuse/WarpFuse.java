package io.warpdata.vfs.fuse;

import io.warpdata.catalog.DatasetNotFoundException;
import io.warpdata.manifest.DatasetId;
import io.warpdata.vfs.Errno;
import io.warpdata.vfs.Node;
import io.warpdata.vfs.NodeAttributes;
import io.warpdata.vfs.NoSuchEntryException;
import io.warpdata.vfs.WarpTree;
import io.warpdata.vfs.WrongNodeTypeException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

import static io.warpdata.vfs.fuse.FuseAbi.*;

/**
 * The FUSE file system: answers the kernel's requests (see {@link FuseAbi}) from
 * {@link WarpTree}, the replies encoded by {@link FuseReplies}. Requests come from
 * {@link FuseServer}'s workers, one at a time per worker; everything here is thread-safe and
 * lock-free on the read path.
 *
 * <p>What the kernel is told, and why:
 * <ul>
 * <li>Inodes ({@link NodeTable}): LOOKUP and every READDIRPLUS entry hand out a node id and count
 *     a lookup; FORGET gives them back. An artifact member's id is computed instead (from its
 *     artifact's slot and index position, {@link WarpTree#computedInode}) and costs no entry, so
 *     a walk of a million members leaves the table holding the directories alone. A LOOKUP resolves the name from its parent's node, one
 *     step; a READDIRPLUS entry carries the node the listing produced. Entries and attributes are valid for
 *     {@link MountOptions#timeoutSeconds()} (a day): versions are immutable, a latest link keeps
 *     its inode and size (always {@code name@} + 64 hex) when it moves, and the target the kernel
 *     caches is invalidated by {@link LinkWatch}. A failed lookup is never cached, so a newly
 *     published version or workspace appears at once; workspace listings are re-read on every
 *     opendir.</li>
 * <li>READDIRPLUS ({@link FuseAbi#DO_READDIRPLUS}, {@link Directories}): a listing inside a version returns each
 *     entry's inode and attributes, so {@code ls -l} and {@code os.scandir}+stat need no LOOKUP
 *     per file afterwards (a workspace's entries go without: their attributes would need every
 *     version's manifest). Member files go without too while nobody looks up members of their
 *     artifact ({@link AttributeDemand}): the kernel then builds no inode per entry for a
 *     {@code find} or an {@code os.walk}, which read names and types alone; the first listing
 *     that is stat'ed costs a LOOKUP per entry and turns the artifact's listings full. The
 *     kernel keeps listings of directories the tree calls {@link WarpTree#immutable immutable}
 *     ({@link FuseAbi#FOPEN_CACHE_DIR}).</li>
 * <li>OPEN of files answers ENOSYS (Linux 4.19+, "no_open"): the kernel then opens every file
 *     without asking, never sends RELEASE, and keeps the page cache across opens. Reads find
 *     their node by id. Unless the mount asked for passthrough and INIT granted it (Linux 6.9+):
 *     every OPEN is then answered, by {@link Backings}, which opens a whole file that has a
 *     local copy onto it so that the kernel reads the copy itself; the price is an OPEN and a
 *     RELEASE round trip per open of any file (8-11% of warm ImageFolder throughput on the
 *     bench, docs/cache.md), which is why it is asked for only with {@code --passthrough on}.
 *     Warp still claims minor 31: the kernel reads flags2 and max_stack_depth of INIT's reply,
 *     and backing_id of OPEN's, whenever INIT_EXT is set, and these replies are the only
 *     passthrough fields. FLUSH, FSYNC, GETXATTR, LISTXATTR, ACCESS and INTERRUPT also answer
 *     ENOSYS, which the kernel remembers for the mount, so each costs one round trip ever.</li>
 * <li>Write-like requests answer EROFS (the mount is read-only, so the VFS stops them first).</li>
 * </ul>
 *
 * <p>No exception ever escapes {@link #serve}: failures become errnos through {@link Errno}
 * (which logs and counts them) and the request is answered.
 */
public final class WarpFuse {
    private static final Logger LOG = LoggerFactory.getLogger(WarpFuse.class);

    /**
     * Block size reported to stat and statfs. Not the largest FUSE read (1 MiB): programs size
     * their I/O buffers by it (Python's {@code open()} allocates one of st_blksize bytes per
     * file), and 128 KiB is already a whole read-ahead step.
     */
    static final int BLOCK_SIZE = 128 << 10;
    /** Largest read request in pages: 256 (1 MiB, the kernel's limit), where the kernel allows it (5.1+). */
    static final int MAX_PAGES_WANTED = 256;
    /**
     * Asynchronous requests (read-ahead) the kernel keeps in flight; its default is 12. A scan
     * at 1 GB/s needs about 8 requests in flight just to hide a cache-file read behind each;
     * 24 leaves room for requests waiting on a fetch from the store.
     */
    static final int MAX_BACKGROUND = 24;
    /** The kernel marks the mount congested (and throttles read-ahead) at 3/4 of that, as by default. */
    static final int CONGESTION_THRESHOLD = MAX_BACKGROUND * 3 / 4;
    /** Nothing is ever written; the kernel's floor. */
    static final int MAX_WRITE = 4096;
    /**
     * What Warp asks for in INIT where the kernel offers it: parallel reads of one file
     * (read-ahead), READDIRPLUS, parallel lookups in one directory (two DataLoader workers in one
     * class folder), 1 MiB reads, and symlink targets cached by the kernel (every path walk
     * through a latest link would be a READLINK round trip otherwise).
     */
    static final int WANTED = ASYNC_READ | DO_READDIRPLUS | PARALLEL_DIROPS | MAX_PAGES | CACHE_SYMLINKS;

    private static final int O_ACCMODE = 3;
    private static final int O_RDONLY = 0;
    private static final int O_TRUNC = 01000;

    private final WarpTree tree;
    private final Errno errno;
    private final FuseReplies replies;
    private final NodeTable nodes;
    private final Directories directories;
    private final AttributeDemand demand;
    private volatile FuseServer server;
    private volatile FuseChannel notifications;
    /** The latest links the kernel caches, kept current (see {@link LinkWatch}). */
    private final LinkWatch links = new LinkWatch(this::linkTarget, this::invalidate);
    private final LongAdder linkReads = new LongAdder();
    /** Whether files may be opened without a round trip to us (see the class comment). */
    private final boolean noOpenAllowed;
    /** Whether they are: unless INIT granted passthrough, which needs every OPEN. */
    private volatile boolean noOpen;
    /** Whether the mount asks the kernel for passthrough opens, and whether INIT granted them. */
    private volatile boolean passthroughWanted;
    private volatile boolean passthrough;
    /** Whether the mount options asked for passthrough (wanted: and this process may register backing files). */
    private volatile boolean passthroughAsked;
    private final Backings backings;
    /** What INIT granted: flags of {@link #WANTED}, and the negotiated minor version. */
    private volatile int granted;
    private volatile int minor;
    private final RequestCounts requests = new RequestCounts();
    /** Hears of every file read served (warpd's metrics); never null. */
    private volatile ReadListener readListener = ReadListener.NONE;
    /** Per-worker scratch for names (one per thread, never shared). */
    private final ThreadLocal<byte[]> nameBytes = ThreadLocal.withInitial(() -> new byte[4096]);

    /**
     * A file system over {@code tree}, its files owned by {@code uid}:{@code gid}; files open
     * without a round trip where the running kernel allows it (Linux 4.19+).
     */
    public WarpFuse(WarpTree tree, Errno errno, long uid, long gid) {
        this(tree, errno, uid, gid, KernelVersion.running().atLeast(4, 19));
    }

    /** @param noOpen answer OPEN of files with ENOSYS (needs Linux 4.19 or later) */
    WarpFuse(WarpTree tree, Errno errno, long uid, long gid, boolean noOpen) {
        this(tree, errno, uid, gid, noOpen, System::nanoTime);
    }

    /** @param nanoClock monotonic nanoseconds, for {@link AttributeDemand}'s window */
    WarpFuse(WarpTree tree, Errno errno, long uid, long gid, boolean noOpen, java.util.function.LongSupplier nanoClock) {
        this.tree = tree;
        this.errno = errno;
        this.replies = new FuseReplies(uid, gid);
        this.noOpenAllowed = noOpen;
        this.noOpen = noOpen;
        this.backings = new Backings(tree);
        this.nodes = new NodeTable(tree);
        this.demand = new AttributeDemand(nanoClock);
        this.directories = new Directories(tree, nodes, replies, demand);
    }

    /**
     * Mounts at {@code mountPoint} and returns once the kernel has the mount.
     *
     * @throws FuseMountException if already mounted, or libfuse cannot mount
     */
    public synchronized void mount(Path mountPoint, MountOptions options) {
        if (server != null) {
            throw new FuseMountException("already mounted");
        }
        replies.validFor(options.timeoutSeconds());
        passthroughAsked = options.passthrough();
        passthroughWanted = passthroughAsked && Backings.mayRegister();
        server = FuseServer.mount(this, mountPoint, options);
        notifications = server.channel();
        links.start(options.linkCheck());
    }

    /** Asks for passthrough in the next INIT as {@link #mount} does, without mounting (tests). */
    void askPassthrough(boolean on) {
        passthroughAsked = on;
        passthroughWanted = on;
    }

    /** Unmounts (lazily: open files keep working until closed) and ends the session. */
    public synchronized void umount() {
        if (server != null) {
            links.close();
            notifications = null;
            server.unmount();
            server = null;
        }
    }

    // ---- what the daemon reads ----

    /**
     * Re-reads the latest pointers of every link the kernel caches now (after a publish or
     * {@code warpctl refresh}), instead of within the next link check ({@link MountOptions#linkCheck()}).
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

    /** The largest read request the kernel sends this mount (0 before INIT). */
    public int maxReadBytes() {
        if (minor == 0) {
            return 0;
        }
        return (granted & MAX_PAGES) != 0 ? MAX_PAGES_WANTED * 4096 : 32 * 4096;
    }

    /** Whether INIT granted passthrough opens (asked for, Linux 6.9+ built with them). */
    public boolean passthrough() {
        return passthrough;
    }

    /**
     * Passthrough on this mount, for {@code warpctl status}: {@code off} (not asked for),
     * {@code on}, {@code unavailable} (asked for; this process or kernel cannot) or {@code stopped}
     * (the kernel refused a backing file). See {@link #passthroughReason()}.
     */
    public String passthroughState() {
        if (!passthroughAsked) {
            return "off";
        }
        if (backings.refused()) {
            return "stopped";
        }
        return !passthroughWanted || (minor != 0 && !passthrough) ? "unavailable" : "on";
    }

    /** Why passthrough is unavailable or stopped, and what to do about it; empty otherwise. */
    public String passthroughReason() {
        return switch (passthroughState()) {
            case "stopped" -> "the kernel refused a backing file (errno " + backings.refusedErrno() + "), so files"
                    + " are read through warpd: " + (backings.refusedErrno() == Errno.EPERM
                    ? "warpd needs CAP_SYS_ADMIN for it; run it as root, or drop --passthrough"
                    : "a --cache-dir on a stacked file system (overlayfs, another FUSE mount) gives ELOOP; put it on a"
                            + " local disk and restart warpd");
            case "unavailable" -> !passthroughWanted
                    ? "warpd lacks CAP_SYS_ADMIN, which the kernel asks for to serve a file from a copy: run warpd as"
                            + " root (or with that capability), or drop --passthrough"
                    : "the kernel does not offer it: it needs Linux 6.9 or later built with CONFIG_FUSE_PASSTHROUGH"
                            + " (uname -r; grep FUSE_PASSTHROUGH /boot/config-$(uname -r))";
            default -> "";
        };
    }

    /** Opens the kernel serves from a local copy, without warpd (see {@link Backings}). */
    public long passthroughOpens() {
        return backings.passthroughOpens();
    }

    /** Whether the kernel caches symlink targets on this mount. */
    public boolean kernelCachesLinks() {
        return (granted & CACHE_SYMLINKS) != 0;
    }

    /** Whether directory listings come with inodes and attributes (READDIRPLUS). */
    public boolean readdirPlus() {
        return (granted & DO_READDIRPLUS) != 0;
    }

    /** Open directories (a gauge; files need no open on Linux 4.19+). */
    public int openHandles() {
        return directories.openHandles();
    }

    /**
     * Whether inode number {@code ino} (as {@code stat} and {@code /proc/PID/fdinfo} show it: a
     * hash of the path, not the node id) is a directory the kernel holds; false for files and
     * unknown inodes.
     */
    public boolean isDirectory(long ino) {
        NodeTable.Entry e = nodes.byIno(ino);
        return e != null && e.node.type() == Node.Type.DIRECTORY;
    }

    /**
     * Inodes the kernel holds of this mount that take an entry in the node table: directories,
     * links and files other than artifact members and tensor files (whose inodes are computed and
     * cost nothing).
     */
    public int kernelInodes() {
        return nodes.size();
    }

    /**
     * Requests the kernel sent, by name ({@code lookup}, {@code getattr}, {@code readdirplus},
     * {@code read}, ...), only those sent at least once: how many round trips a workload cost.
     */
    public Map<String, Long> requests() {
        return requests.byName();
    }

    // ---- serving ----

    /**
     * Serves one request: {@code in} holds it at {@code [0, limit)}; the reply is built in
     * {@code out} (a direct buffer of {@link FuseServer#REPLY_BUFFER} bytes) and sent on
     * {@code channel}. FORGET and BATCH_FORGET get no reply, as the protocol says.
     */
    void serve(ByteBuffer in, ByteBuffer out, FuseChannel channel) {
        int opcode = in.getInt(IN_OPCODE);
        long unique = in.getLong(IN_UNIQUE);
        long nodeid = in.getLong(IN_NODEID);
        requests.count(opcode);
        int result;
        try {
            result = switch (opcode) {
                case LOOKUP -> lookup(nodeid, in, out);
                case FORGET -> {
                    nodes.forget(nodeid, in.getLong(FORGET_IN_NLOOKUP));
                    yield NO_REPLY;
                }
                case BATCH_FORGET -> {
                    batchForget(in);
                    yield NO_REPLY;
                }
                case GETATTR -> getattr(nodeid, out);
                case READ -> read(nodeid, in, out);
                case READDIRPLUS -> directories.readdir(nodeid, in, out, true);
                case READDIR -> directories.readdir(nodeid, in, out, false);
                case READLINK -> readlink(nodeid, out);
                case OPEN -> open(nodeid, in, out, channel);
                case OPENDIR -> directories.opendir(nodeid, out);
                case RELEASEDIR -> directories.releasedir(in);
                case RELEASE -> {
                    backings.release(nodeid, in.getLong(RELEASE_IN_FH), channel);
                    yield 0;
                }
                case STATFS -> FuseReplies.statfs(out);
                case INIT -> init(in, out);
                case IOCTL -> -Errno.ENOTTY;
                case DESTROY -> 0;
                case SETATTR, SYMLINK, MKNOD, MKDIR, UNLINK, RMDIR, RENAME, LINK, WRITE, SETXATTR, REMOVEXATTR,
                     CREATE, FALLOCATE, RENAME2, COPY_FILE_RANGE, TMPFILE -> -Errno.EROFS;
                // INTERRUPT: answering ENOSYS makes the kernel stop sending them (a read is not
                // abandoned half-way; it completes or fails within the store's bounded retries).
                default -> -Errno.ENOSYS;
            };
        } catch (Throwable t) {
            result = -errno.of(t, opName(opcode), () -> nodes.pathOf(nodeid));
        }
        if (result != NO_REPLY) {
            FuseReplies.send(out, channel, unique, result);
        }
    }

    /** Result of a request that gets no reply. */
    private static final int NO_REPLY = Integer.MIN_VALUE;

    // ---- INIT ----

    private int init(ByteBuffer in, ByteBuffer out) {
        int major = in.getInt(INIT_IN_MAJOR);
        int kernelMinor = in.getInt(INIT_IN_MINOR);
        if (major > MAJOR) {
            // The kernel then sends INIT again with our major.
            return FuseReplies.initRetry(out);
        }
        if (major < MAJOR || kernelMinor < OLDEST_MINOR) {
            LOG.error("the kernel speaks FUSE {}.{}; Warp needs {}.{} or later (Linux 2.6.32+)", major, kernelMinor,
                    MAJOR, OLDEST_MINOR);
            return -Errno.EPROTO;
        }
        int offered = in.getInt(INIT_IN_FLAGS);
        int flags = offered & WANTED;
        int m = Math.min(kernelMinor, MINOR);
        // flags2 exists from 7.36; the kernel says so with INIT_EXT, and offers passthrough in it
        // only when built with it (CONFIG_FUSE_PASSTHROUGH, Linux 6.9+).
        int offered2 = (offered & INIT_EXT) != 0 && kernelMinor >= 36 ? in.getInt(INIT_IN_FLAGS2) : 0;
        int flags2 = passthroughWanted ? offered2 & PASSTHROUGH_FLAGS2 : 0;
        int size = FuseReplies.init(out, m, Math.min(in.getInt(INIT_IN_MAX_READAHEAD), MountOptions.MAX_READAHEAD),
                flags, flags2);
        granted = flags;
        passthrough = flags2 != 0;
        if (passthroughWanted) {
            LOG.info(passthrough ? "passthrough on: a whole file opened again is read by the kernel from warpd's local copy"
                    : "no passthrough: the kernel does not offer it (it needs Linux 6.9+ built with CONFIG_FUSE_PASSTHROUGH)");
        }
        noOpen = noOpenAllowed && !passthrough;
        minor = m;
        LOG.debug("FUSE {}.{} (kernel {}.{}), flags {} of offered {}", MAJOR, m, major, kernelMinor,
                Integer.toHexString(flags), Integer.toHexString(offered));
        return size;
    }

    // ---- names and attributes ----

    private int lookup(long parent, ByteBuffer in, ByteBuffer out) {
        NodeTable.Entry dir = nodes.entry(parent);
        int end = nameEnd(in, IN_HEADER, in.limit());
        if (end - IN_HEADER > NAME_MAX) {
            return -Errno.ENAMETOOLONG; // the kernel passes FUSE up to 1024 bytes; no entry here has more than 255
        }
        String name = name(in, IN_HEADER, end);
        Node node;
        try {
            node = tree.lookup(dir.node, name);
        } catch (Throwable t) {
            // Not logged by Errno when it is "no such entry"; the kernel does not cache it.
            return -errno.of(t, "lookup", () -> NodeTable.child(dir.path(), name));
        }
        NodeAttributes a = tree.attributes(node);
        long id = nodes.handOut(dir, name, node);
        if (WarpTree.isComputedInode(id)) {
            demand.lookedUp(id);
        }
        replies.entry(out, OUT_HEADER, id, nodes.ino(id), a);
        return ENTRY_OUT_SIZE;
    }

    private void batchForget(ByteBuffer in) {
        int count = in.getInt(BATCH_FORGET_IN_COUNT);
        int p = BATCH_FORGET_FIRST;
        for (int i = 0; i < count && p + FORGET_ONE_SIZE <= in.limit(); i++, p += FORGET_ONE_SIZE) {
            nodes.forget(in.getLong(p), in.getLong(p + 8));
        }
    }

    private int getattr(long nodeid, ByteBuffer out) {
        return replies.attrOut(out, nodes.ino(nodeid), tree.attributes(nodes.node(nodeid)));
    }

    /** The longest file name the mount has or reports (statfs's {@code f_namelen}). */
    static final int NAME_MAX = 255;

    /** Where the name at {@code from} of {@code in} ends: its NUL, or {@code to}. */
    private static int nameEnd(ByteBuffer in, int from, int to) {
        int end = from;
        while (end < to && in.get(end) != 0) {
            end++;
        }
        return end;
    }

    /** The name at {@code [from, end)} of {@code in}. */
    private String name(ByteBuffer in, int from, int end) {
        byte[] b = nameBytes.get();
        int n = end - from;
        if (n > b.length) {
            b = new byte[n];
        }
        in.get(from, b, 0, n);
        return new String(b, 0, n, StandardCharsets.UTF_8);
    }

    // ---- links ----

    /**
     * The target of a latest link. Where the kernel caches symlinks (Linux 4.20+), this is asked
     * once per link and target, not on every path walk through it; {@link LinkWatch} invalidates
     * the kernel's copy when the pointer moves.
     */
    private int readlink(long nodeid, ByteBuffer out) {
        NodeTable.Entry e = nodes.entry(nodeid);
        // Resolved again, not taken from the node: a moved latest link keeps its node id.
        String text = tree.readlink(e.parent == null ? e.node : tree.lookup(e.parent.node, e.name));
        byte[] target = text.getBytes(StandardCharsets.UTF_8);
        out.put(OUT_HEADER, target);
        linkReads.increment();
        if (kernelCachesLinks()) {
            links.answered(nodeid, text);
        }
        return target.length;
    }

    /** A link's target now, or null if it (or its node) is gone; throws if that cannot be known now. */
    private String linkTarget(long nodeid) {
        NodeTable.Entry e = nodes.get(nodeid);
        if (e == null || e.parent == null) {
            return null;
        }
        try {
            return tree.readlink(tree.lookup(e.parent.node, e.name));
        } catch (NoSuchEntryException | DatasetNotFoundException | WrongNodeTypeException gone) {
            return null;
        }
    }

    /**
     * Drops what the kernel caches of a link node (attributes, pages, a symlink's target) and its
     * entry in its directory: 0 or minus errno. The entry goes too so that a link whose pointer
     * was deleted ({@code warpctl branch --delete}, {@code tag --delete}) disappears instead of
     * lingering as a dangling link for the entry's validity (a day); a moved one costs the next
     * walk one LOOKUP, which finds the same node. Called by {@link LinkWatch} from the control or
     * timer thread, never from a FUSE worker, so the kernel's directory lock it waits for is
     * never held by a request this thread should answer.
     */
    private int invalidate(long node) {
        FuseChannel ch = notifications;
        if (ch == null) {
            return 0;
        }
        ByteBuffer b = FuseReplies.invalidateInode(node);
        int res = ch.send(b, b.capacity());
        NodeTable.Entry e = nodes.get(node);
        if (e != null && e.parent != null) {
            ByteBuffer entry = FuseReplies.invalidateEntry(e.parent.id, e.name);
            int r = ch.send(entry, entry.capacity());
            res = res != 0 ? res : r;
        }
        return res;
    }

    // ---- files ----

    private int open(long nodeid, ByteBuffer in, ByteBuffer out, FuseChannel channel) {
        if (noOpen) {
            return -Errno.ENOSYS;
        }
        int flags = in.getInt(OPEN_IN_FLAGS);
        if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC) != 0) {
            return -Errno.EROFS;
        }
        Node node = nodes.node(nodeid);
        if (node.type() == Node.Type.DIRECTORY) {
            return -Errno.EISDIR;
        }
        if (passthrough) {
            if (backings.refused() && backings.backingFiles() == 0 && noOpenAllowed) {
                // Never worked on this mount: back to opening files without a round trip (the
                // kernel opens this one itself on ENOSYS, and every later one).
                passthrough = false;
                noOpen = true;
                return -Errno.ENOSYS;
            }
            return backings.open(nodeid, node, channel, out);
        }
        return FuseReplies.open(out, 0, FOPEN_KEEP_CACHE);
    }

    /**
     * Reads straight into the reply buffer: cached bytes go from the cache file into it with one
     * copy, fetched bytes with one copy from the fetch buffer.
     */
    private int read(long nodeid, ByteBuffer in, ByteBuffer out) {
        Node node = nodes.node(nodeid);
        long offset = in.getLong(READ_IN_OFFSET);
        int size = Math.min(in.getInt(READ_IN_SIZE), out.capacity() - OUT_HEADER);
        if (size < 0 || offset < 0) {
            return -Errno.EINVAL;
        }
        long start = System.nanoTime();
        if (WarpTree.isComputedInode(nodeid)) {
            demand.read(nodeid);
        }
        try {
            int n = tree.read(node, offset, out.clear().position(OUT_HEADER).limit(OUT_HEADER + size));
            readListener.onRead(WarpTree.datasetOf(node), offset, n, System.nanoTime() - start);
            return n;
        } catch (RuntimeException failed) {
            readListener.onReadFailed(offset, System.nanoTime() - start);
            throw failed;
        } finally {
            out.clear();
        }
    }

    /**
     * Hears of every file read this mount serves, for metrics. Called on the FUSE worker thread
     * after the read, before the reply: it must be cheap, must not allocate per call and must
     * never block. A read that fails is reported by its latency only (the errno mapping counts it).
     */
    @FunctionalInterface
    public interface ReadListener {
        /** Listens to nothing. */
        ReadListener NONE = (dataset, offset, bytes, nanos) -> { };

        /**
         * @param dataset the dataset the file belongs to
         * @param offset  where in the file the read started ({@code 0}: the first read after an open)
         * @param bytes   bytes read
         * @param nanos   how long the read took, from the request to the bytes in the reply buffer
         */
        void onRead(DatasetId dataset, long offset, int bytes, long nanos);

        /** A read that failed after {@code nanos} (a hung store's EIO took its deadline: that latency counts). */
        default void onReadFailed(long offset, long nanos) {
        }
    }

    /** Sends every file read served to {@code listener} from now on (the last one set wins). */
    public void listen(ReadListener listener) {
        this.readListener = java.util.Objects.requireNonNull(listener, "listener");
    }
}
