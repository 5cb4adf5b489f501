package io.warpdata.vfs.fuse;

import com.kenai.jffi.MemoryIO;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.Delegate;
import jnr.ffi.types.size_t;
import jnr.ffi.types.ssize_t;

/**
 * Adds to libfuse2's reply to the kernel's FUSE_INIT the capabilities libfuse2 predates.
 *
 * <p>libfuse 2.9 builds its INIT reply from the capabilities it knows (protocol 7.19); the kernel
 * offers more, and three of them matter for a read-only tree of immutable data:
 * <ul>
 * <li>{@code FUSE_CACHE_SYMLINKS} (Linux 4.20): the kernel keeps a symlink's target in its page
 *     cache. Without it every path walk through {@code /warp/<ws>/<name>} (the latest link) is a
 *     READLINK round trip: {@code ls -lR} of 100,000 files through the link made 200,000 of them
 *     (a {@code statx} and a {@code getxattr} per file) and took 2.4x as long as through
 *     {@code name@hash}. Links that move are invalidated by {@link LinkWatch}.</li>
 * <li>{@code FUSE_MAX_PAGES} (Linux 5.1): reads of up to {@link #MAX_PAGES} pages instead of 32
 *     (128 KiB), so a sequential scan makes fewer, larger requests.</li>
 * <li>{@code FUSE_PARALLEL_DIROPS} (Linux 4.9): without it the kernel serializes lookups and
 *     readdirs in one directory, so two DataLoader workers opening files of the same class
 *     folder wait for each other's LOOKUP. libfuse2's high-level API locks its own node tree,
 *     and libfuse3 asks for this by default. Measured over 8 alternating daemon starts:
 *     ImageFolder (2 workers) +6% files/s warm and cold.</li>
 * </ul>
 * Nothing else in the reply changes, and a capability is only claimed where the kernel offered
 * it (older kernels keep libfuse2's behaviour).
 *
 * <p>How: the worker that receives INIT processes it through a channel of our own whose send
 * callback rewrites the reply before writing it to {@code /dev/fuse}; every other request uses
 * libfuse's own channel. INIT is the first request of a session and nothing else is in flight
 * until it is answered.
 */
final class InitReply {
    /** {@code struct fuse_in_header}: len, opcode, unique, nodeid, uid, gid, pid, padding. */
    static final int IN_HEADER_SIZE = 40;
    static final int IN_OPCODE = 4;
    static final int IN_NODEID = 16;
    static final int FUSE_INIT = 26;
    /** {@code struct fuse_init_in}: major, minor, max_readahead, flags. */
    static final int INIT_IN_FLAGS = IN_HEADER_SIZE + 12;
    /** {@code struct fuse_out_header}: len, error, unique. */
    static final int OUT_HEADER_SIZE = 16;
    static final int OUT_ERROR = 4;
    /** {@code struct fuse_init_out} as of protocol 7.28+: flags at 12, max_pages at 28, 64 bytes in all. */
    static final int INIT_OUT_SIZE = 64;
    static final int INIT_OUT_FLAGS = 12;
    static final int INIT_OUT_MAX_PAGES = 28;

    static final int FUSE_PARALLEL_DIROPS = 1 << 18;
    static final int FUSE_MAX_PAGES = 1 << 22;
    static final int FUSE_CACHE_SYMLINKS = 1 << 23;
    /**
     * Largest read request, in pages: 256 (1 MiB, the kernel's limit). A sequential scan then
     * costs one round trip per MiB instead of eight.
     */
    static final int MAX_PAGES = 256;
    /** What we add when the kernel offers it. */
    static final int WANTED = FUSE_CACHE_SYMLINKS | FUSE_MAX_PAGES | FUSE_PARALLEL_DIROPS;

    private static final MemoryIO IO = MemoryIO.getInstance();

    /** {@code int (*send)(struct fuse_chan *ch, const struct iovec iov[], size_t count)}. */
    @FunctionalInterface
    public interface Send {
        @Delegate
        int send(Pointer ch, Pointer iov, @size_t long count);
    }

    /** The C library calls the send callback makes. */
    public interface LibC {
        @ssize_t long write(int fd, Pointer buf, @size_t long count);

        @ssize_t long writev(int fd, Pointer iov, int count);
    }

    private final Runtime runtime;
    private final LibC libc;
    private final int fd;
    private final int wanted;
    /** Strong references to the callback and its closure for as long as the session lives. */
    private final Send send;
    private final Pointer ops;
    private volatile int offered;
    private volatile int granted;

    /**
     * @param fd the session's {@code /dev/fuse} descriptor
     * @param wanted the capabilities to add where offered ({@link #WANTED})
     */
    InitReply(Runtime runtime, int fd, int wanted) {
        this.runtime = runtime;
        this.libc = LibraryLoader.create(LibC.class).failImmediately().load("c");
        this.fd = fd;
        this.wanted = wanted;
        this.send = this::send;
        // struct fuse_chan_ops { receive, send, destroy }: only send is ever called on this channel.
        this.ops = Memory.allocateDirect(runtime, 24, true);
        ops.putPointer(8, runtime.getClosureManager().getClosurePointer(Send.class, send));
    }

    /** {@code struct fuse_chan_ops} for {@code fuse_chan_new}. */
    Pointer ops() {
        return ops;
    }

    /** Notes the kernel's capability flags from the INIT request in {@code request}. */
    void offered(Pointer request) {
        offered = request.getInt(INIT_IN_FLAGS);
    }

    /** The capabilities this mount got beyond libfuse2's (0 before INIT). */
    int granted() {
        return granted;
    }

    /** Whether the kernel keeps symlink targets in its page cache on this mount. */
    boolean cachesSymlinks() {
        return (granted & FUSE_CACHE_SYMLINKS) != 0;
    }

    private int send(Pointer ch, Pointer iov, long count) {
        long v = iov.address();
        long header = IO.getAddress(v);
        long headerLength = IO.getLong(v + 8);
        if (count != 2 || headerLength != OUT_HEADER_SIZE || IO.getInt(header + OUT_ERROR) != 0) {
            return result(libc.writev(fd, iov, (int) count));
        }
        long arg = IO.getAddress(v + 16);
        long argLength = Math.min(IO.getLong(v + 24), INIT_OUT_SIZE);
        Pointer reply = Memory.allocateDirect(runtime, OUT_HEADER_SIZE + INIT_OUT_SIZE, true);
        long r = reply.address();
        IO.copyMemory(header, r, OUT_HEADER_SIZE);
        IO.copyMemory(arg, r + OUT_HEADER_SIZE, argLength);
        int add = wanted & offered;
        IO.putInt(r + OUT_HEADER_SIZE + INIT_OUT_FLAGS, IO.getInt(r + OUT_HEADER_SIZE + INIT_OUT_FLAGS) | add);
        if ((add & FUSE_MAX_PAGES) != 0) {
            IO.putShort(r + OUT_HEADER_SIZE + INIT_OUT_MAX_PAGES, (short) MAX_PAGES);
        }
        IO.putInt(r, OUT_HEADER_SIZE + INIT_OUT_SIZE);
        int res = result(libc.write(fd, reply, OUT_HEADER_SIZE + INIT_OUT_SIZE));
        if (res == 0) {
            granted = add;
        }
        return res;
    }

    /** What libfuse expects of a channel's send: 0, or minus errno. */
    private int result(long written) {
        return written < 0 ? -runtime.getLastError() : 0;
    }
}
