package io.warpdata.vfs.fuse;

import jnr.ffi.LibraryLoader;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.types.size_t;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import ru.serce.jnrfuse.FuseException;
import ru.serce.jnrfuse.struct.FuseOperations;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A mounted libfuse2 session whose requests are served by a fixed pool of Java threads.
 *
 * <p>Why not jnr-fuse's {@code fuse_main_real}: it runs libfuse2's {@code fuse_loop_mt}, which
 * starts a new native thread whenever all its workers are busy and ends one as soon as more than
 * ten are idle. A sequential scan keeps up to {@link #MAX_BACKGROUND} read-ahead requests in
 * flight, so the pool grows and shrinks all the time, and every new native thread attaches itself
 * to the JVM on its first callback (a {@code java.lang.Thread}, thread-locals, a TLAB, warpd's
 * per-thread read buffers) and is detached when libfuse ends it: measured, about 290 threads were
 * created during a 3-second read of 1 GiB. Here {@link #WORKERS} platform threads, started once,
 * each loop on {@code fuse_session_receive_buf} / {@code fuse_session_process_buf}, exactly what a
 * {@code fuse_loop_mt} worker does, on the session {@code fuse_setup} mounted.
 *
 * <p>Shutdown: unmounting (by {@link #unmount()}, {@code fusermount -u} or {@code umount}) makes
 * the kernel end the connection, every worker's receive fails with ENODEV and it exits; only then
 * is {@code fuse_teardown} called, which destroys the session (it must never run under a worker).
 */
final class FuseSession {
    private static final Logger LOG = LoggerFactory.getLogger(FuseSession.class);

    /**
     * Worker threads. Requests in flight are bounded by the kernel: {@link #MAX_BACKGROUND}
     * read-ahead and other asynchronous requests plus one synchronous request per calling thread.
     * 32 covers the read-ahead of a sequential scan with room for a few concurrent readers
     * (DataLoader workers, DuckDB threads); a request beyond that simply waits in the kernel's
     * queue. An idle worker costs a stack and one {@link #bufferSize} receive buffer.
     */
    static final int WORKERS = 32;
    /**
     * Asynchronous requests (read-ahead) the kernel keeps in flight; its default is 12. A scan
     * at 1 GB/s with 128 KiB requests needs about 8000 requests a second, so with a cache-file
     * read of ~1 ms behind each, about 8 must be in flight just to keep up: 24 leaves room for
     * requests waiting on a fetch from the store.
     */
    static final int MAX_BACKGROUND = 24;
    /** The kernel marks the mount congested (and throttles read-ahead) at 3/4 of that, as by default. */
    static final int CONGESTION_THRESHOLD = MAX_BACKGROUND * 3 / 4;
    /** How long {@link #unmount()} waits for workers to finish requests already being served. */
    static final long STOP_WAIT_MILLIS = 5_000;

    private static final int EINTR = 4;
    /** {@code struct fuse_buf} (libfuse 2.9, LP64): size_t size; enum flags; void *mem; int fd; off_t pos. */
    private static final int FUSE_BUF_SIZE = 40;
    private static final int FUSE_BUF_SIZE_OFF = 0;
    private static final int FUSE_BUF_FLAGS_OFF = 8;
    private static final int FUSE_BUF_MEM_OFF = 16;
    private static final int FUSE_BUF_FD_OFF = 24;
    private static final int FUSE_BUF_POS_OFF = 32;
    /** {@code FUSE_BUF_IS_FD}: the request is in a pipe, not in memory (never, without splice). */
    private static final int FUSE_BUF_IS_FD = 1 << 1;
    /** {@code struct fuse_conn_info} (libfuse 2.9): the 8th and 9th unsigned fields. */
    private static final int CONN_MAX_BACKGROUND_OFF = 28;
    private static final int CONN_CONGESTION_THRESHOLD_OFF = 32;
    /** glibc mallopt parameters. */
    private static final int M_TRIM_THRESHOLD = -1;
    private static final int M_MMAP_THRESHOLD = -3;

    /** The libfuse2 calls a session loop needs (all exported by libfuse.so.2 since 2.9). */
    public interface LibFuseSession {
        Pointer fuse_setup(int argc, Pointer argv, FuseOperations op, @size_t long opSize, Pointer mountpoint,
                Pointer multithreaded, Pointer userData);

        void fuse_teardown(Pointer fuse, Pointer mountpoint);

        Pointer fuse_get_session(Pointer fuse);

        Pointer fuse_session_next_chan(Pointer se, Pointer ch);

        @size_t long fuse_chan_bufsize(Pointer ch);

        int fuse_session_receive_buf(Pointer se, Pointer buf, Pointer chp);

        void fuse_session_process_buf(Pointer se, Pointer buf, Pointer ch);

        int fuse_session_exited(Pointer se);

        int fuse_chan_fd(Pointer ch);

        Pointer fuse_chan_new(Pointer ops, int fd, @size_t long bufsize, Pointer data);

        int fuse_lowlevel_notify_inval_inode(Pointer ch, long ino, long off, long len);

        void fuse_session_exit(Pointer se);
    }

    /** glibc's allocator tuning. */
    public interface LibC {
        int mallopt(int param, int value);
    }

    private final LibFuseSession lib;
    private final Runtime runtime;
    private final Path mountPoint;
    private final List<Pointer> keepAlive = new ArrayList<>();
    private final List<Worker> workers = new ArrayList<>();
    private Pointer fuse;
    private Pointer mountPointOut;
    private Pointer session;
    private Pointer channel;
    private long bufferSize;
    /** Rewrites the INIT reply (see {@link InitReply}); INIT is processed through its channel. */
    private InitReply initReply;
    private Pointer initChannel;
    private boolean tornDown;

    private FuseSession(LibFuseSession lib, Runtime runtime, Path mountPoint) {
        this.lib = lib;
        this.runtime = runtime;
        this.mountPoint = mountPoint;
    }

    /**
     * Mounts {@code ops} at {@code mountPoint} with libfuse2 options {@code args} and starts the
     * workers; returns once the kernel has the mount.
     *
     * @throws FuseException if libfuse cannot mount (it prints the reason on stderr)
     */
    static FuseSession mount(FuseOperations ops, int opsSize, Path mountPoint, String fsName, String[] args) {
        Runtime runtime = Runtime.getSystemRuntime();
        LibFuseSession lib = loadFuse();
        keepLibfuseBuffersInHeap();
        FuseSession s = new FuseSession(lib, runtime, mountPoint);
        s.start(ops, opsSize, fsName, args);
        return s;
    }

    private static LibFuseSession loadFuse() {
        try {
            return LibraryLoader.create(LibFuseSession.class).failImmediately().load("fuse");
        } catch (LinkageError | RuntimeException e) {
            return LibraryLoader.create(LibFuseSession.class).failImmediately().load("libfuse.so.2");
        }
    }

    /**
     * libfuse2's high-level read allocates a fresh buffer of the request's size (128 KiB) for
     * every read and frees it after the reply. 128 KiB is exactly glibc's initial mmap
     * threshold, so each read was an mmap, 32 page faults with zeroing, and an munmap. Raising
     * the threshold (and the trim threshold with it) makes these buffers ordinary reused heap
     * chunks. Best effort: on a C library without mallopt nothing changes but speed.
     */
    private static void keepLibfuseBuffersInHeap() {
        try {
            LibC c = LibraryLoader.create(LibC.class).failImmediately().load("c");
            c.mallopt(M_MMAP_THRESHOLD, 4 << 20);
            c.mallopt(M_TRIM_THRESHOLD, 16 << 20);
        } catch (LinkageError | RuntimeException e) {
            LOG.debug("mallopt not available ({}); libfuse read buffers stay mmapped", e.toString());
        }
    }

    private void start(FuseOperations ops, int opsSize, String fsName, String[] args) {
        List<String> argv = new ArrayList<>();
        argv.add(fsName);
        argv.add("-f");
        argv.add(mountPoint.toAbsolutePath().toString());
        argv.addAll(List.of(args));
        Pointer argvMem = Memory.allocateDirect(runtime, (argv.size() + 1) * 8L, true);
        for (int i = 0; i < argv.size(); i++) {
            byte[] b = argv.get(i).getBytes(StandardCharsets.UTF_8);
            Pointer str = Memory.allocateDirect(runtime, b.length + 1, true);
            str.put(0, b, 0, b.length);
            str.putByte(b.length, (byte) 0);
            keepAlive.add(str);
            argvMem.putPointer(i * 8L, str);
        }
        keepAlive.add(argvMem);
        mountPointOut = Memory.allocateDirect(runtime, 8, true);
        Pointer multithreaded = Memory.allocateDirect(runtime, 4, true);
        fuse = lib.fuse_setup(argv.size(), argvMem, ops, opsSize, mountPointOut, multithreaded, null);
        if (fuse == null) {
            throw new FuseException("libfuse could not mount " + mountPoint + " (its reason is printed above)");
        }
        session = lib.fuse_get_session(fuse);
        channel = lib.fuse_session_next_chan(session, null);
        bufferSize = lib.fuse_chan_bufsize(channel);
        int fd = lib.fuse_chan_fd(channel);
        initReply = new InitReply(runtime, fd, InitReply.WANTED);
        initChannel = lib.fuse_chan_new(initReply.ops(), fd, bufferSize, null);
        for (int i = 0; i < WORKERS; i++) {
            Worker w = new Worker(this, "warp-fuse-" + (i + 1));
            workers.add(w);
            w.start();
        }
    }

    /** A worker thread; it remembers the node of the request it is serving. */
    private static final class Worker extends Thread {
        private final FuseSession session;
        /** The FUSE node id of the request being processed (0 for none). */
        long node;

        Worker(FuseSession session, String name) {
            super(name);
            this.session = session;
            setDaemon(true);
        }

        @Override
        public void run() {
            session.serve(this);
        }
    }

    /**
     * The kernel's node id of the request the calling thread is serving, or 0 outside a worker.
     * libfuse2's high-level callbacks get a path only; this lets one (readlink) learn which inode
     * the kernel will cache the answer under.
     */
    static long requestNode() {
        return Thread.currentThread() instanceof Worker w ? w.node : 0;
    }

    /** Whether the kernel caches symlink targets on this mount (it asked for and got FUSE_CACHE_SYMLINKS). */
    boolean cachesSymlinks() {
        return initReply != null && initReply.cachesSymlinks();
    }

    /** The largest read the kernel sends: 1 MiB where it granted FUSE_MAX_PAGES, else 128 KiB. */
    int maxReadBytes() {
        return initReply != null && (initReply.granted() & InitReply.FUSE_MAX_PAGES) != 0
                ? InitReply.MAX_PAGES * 4096 : 32 * 4096;
    }

    /**
     * Drops what the kernel caches of node {@code node} (attributes, pages, a symlink's target).
     *
     * @return 0, or minus errno (ENOENT when the kernel no longer knows the node)
     */
    int invalidate(long node) {
        return lib.fuse_lowlevel_notify_inval_inode(channel, node, 0, 0);
    }

    /** One worker: receive a request, process it (the callbacks run here), until the session ends. */
    private void serve(Worker w) {
        Pointer buf = Memory.allocateDirect(runtime, bufferSize, false);
        Pointer fbuf = Memory.allocateDirect(runtime, FUSE_BUF_SIZE, true);
        Pointer chp = Memory.allocateDirect(runtime, 8, true);
        while (lib.fuse_session_exited(session) == 0) {
            fbuf.putLong(FUSE_BUF_SIZE_OFF, bufferSize);
            fbuf.putInt(FUSE_BUF_FLAGS_OFF, 0);
            fbuf.putPointer(FUSE_BUF_MEM_OFF, buf);
            fbuf.putInt(FUSE_BUF_FD_OFF, -1);
            fbuf.putLong(FUSE_BUF_POS_OFF, 0);
            chp.putPointer(0, channel);
            int res = lib.fuse_session_receive_buf(session, fbuf, chp);
            if (res == -EINTR) {
                continue;
            }
            if (res <= 0) {
                // ENODEV once unmounted: the session is over for every worker.
                lib.fuse_session_exit(session);
                return;
            }
            if ((fbuf.getInt(FUSE_BUF_FLAGS_OFF) & FUSE_BUF_IS_FD) == 0) {
                if (buf.getInt(InitReply.IN_OPCODE) == InitReply.FUSE_INIT) {
                    initReply.offered(buf);
                    lib.fuse_session_process_buf(session, fbuf, initChannel);
                    continue;
                }
                w.node = buf.getLong(InitReply.IN_NODEID);
            }
            lib.fuse_session_process_buf(session, fbuf, chp.getPointer(0));
            w.node = 0;
        }
    }

    /**
     * The requests the kernel keeps in flight, set from the {@code init} callback's
     * {@code struct fuse_conn_info} before libfuse replies to the kernel's INIT.
     */
    static void tuneConnection(Pointer conn) {
        if (conn != null) {
            conn.putInt(CONN_MAX_BACKGROUND_OFF, MAX_BACKGROUND);
            conn.putInt(CONN_CONGESTION_THRESHOLD_OFF, CONGESTION_THRESHOLD);
        }
    }

    /** Whether a worker is still serving (false once the mount is gone). */
    boolean serving() {
        for (Worker t : workers) {
            if (t.isAlive()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Unmounts (lazily, so open files keep working until closed), waits up to
     * {@link #STOP_WAIT_MILLIS} for the workers to finish, then tears the session down. If a
     * worker is still busy after that, the session is left to the process's exit rather than
     * freed under it.
     */
    synchronized void unmount() {
        if (tornDown) {
            return;
        }
        lazyUnmount(mountPoint);
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(STOP_WAIT_MILLIS);
        for (Worker t : workers) {
            try {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(until - System.nanoTime())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        if (serving()) {
            LOG.warn("FUSE workers for {} still busy {} ms after unmounting; leaving the session to process exit",
                    mountPoint, STOP_WAIT_MILLIS);
            return;
        }
        tornDown = true;
        lib.fuse_teardown(fuse, mountPointOut.getPointer(0));
    }

    /** {@code fusermount -u -z}, or {@code umount -l} where fusermount is missing (root). */
    private static void lazyUnmount(Path mountPoint) {
        String dir = mountPoint.toAbsolutePath().toString();
        for (List<String> cmd : List.of(List.of("fusermount", "-u", "-z", dir), List.of("umount", "-l", dir))) {
            try {
                Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
                p.getInputStream().readAllBytes();
                if (p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0) {
                    return;
                }
            } catch (java.io.IOException e) {
                // Try the next way.
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
