package io.warpdata.vfs.fuse;

import com.kenai.jffi.MemoryIO;
import io.warpdata.vfs.Errno;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.types.intptr_t;
import jnr.ffi.types.size_t;
import jnr.ffi.types.ssize_t;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

/**
 * A mounted {@code /dev/fuse} connection: libfuse2 mounts it (directly as root, else through
 * the setuid {@code fusermount}, which is why libfuse is used at all) and hands over the file
 * descriptor; requests are then read and replies written with plain {@code read}/{@code write}.
 */
final class DevFuse implements FuseChannel {

    /** The four libfuse2 calls that mount and unmount (exported by libfuse.so.2 since 2.6). */
    public interface LibFuse {
        Pointer fuse_mount(String mountpoint, Pointer args);

        void fuse_unmount(String mountpoint, Pointer ch);

        int fuse_chan_fd(Pointer ch);
    }

    /** Reads and writes on the descriptor, by address (no per-call wrapper objects). */
    public interface LibC {
        @ssize_t long read(int fd, @intptr_t long buf, @size_t long count);

        @ssize_t long write(int fd, @intptr_t long buf, @size_t long count);

        int open(String path, int flags);

        int close(int fd);

        int ioctl(int fd, @size_t long request, @intptr_t long arg);
    }

    private static final int O_RDONLY_CLOEXEC = 02000000;
    /** A struct fuse_backing_map (or a uint32 id) per thread; opens are not the hot path, but free of garbage. */
    private static final ThreadLocal<ByteBuffer> IOCTL_ARG = ThreadLocal.withInitial(
            () -> ByteBuffer.allocateDirect(FuseAbi.BACKING_MAP_SIZE).order(java.nio.ByteOrder.nativeOrder()));

    private static final MemoryIO IO = MemoryIO.getInstance();

    private final Runtime runtime;
    private final LibFuse fuse;
    private final LibC libc;
    private final Path mountPoint;
    private final Pointer channel;
    private final int fd;
    private boolean closed;

    private DevFuse(Runtime runtime, LibFuse fuse, LibC libc, Path mountPoint, Pointer channel) {
        this.runtime = runtime;
        this.fuse = fuse;
        this.libc = libc;
        this.mountPoint = mountPoint;
        this.channel = channel;
        this.fd = fuse.fuse_chan_fd(channel);
    }

    /**
     * Mounts at {@code mountPoint} with kernel mount options {@code options} ({@code -o} syntax).
     *
     * @throws FuseMountException if libfuse cannot mount (it prints its reason on stderr)
     */
    static DevFuse mount(Path mountPoint, String options) {
        Runtime runtime = Runtime.getSystemRuntime();
        LibFuse fuse = libFuse("fuse", "libfuse.so.2");
        LibC libc = load(LibC.class, "c", "libc.so.6");
        // struct fuse_args { int argc; char **argv; int allocated; } with argv = {"warp", "-o", options}.
        List<String> argv = List.of("warp", "-o", options);
        Pointer array = Memory.allocateDirect(runtime, (argv.size() + 1) * 8L, true);
        Pointer[] strings = new Pointer[argv.size()];
        for (int i = 0; i < argv.size(); i++) {
            byte[] b = argv.get(i).getBytes(StandardCharsets.UTF_8);
            strings[i] = Memory.allocateDirect(runtime, b.length + 1, true);
            strings[i].put(0, b, 0, b.length);
            array.putPointer(i * 8L, strings[i]);
        }
        Pointer args = Memory.allocateDirect(runtime, 24, true);
        args.putInt(0, argv.size());
        args.putPointer(8, array);
        Pointer channel = fuse.fuse_mount(mountPoint.toAbsolutePath().toString(), args);
        // The strings are reachable from native memory only: keep them until libfuse is done.
        java.lang.ref.Reference.reachabilityFence(strings);
        java.lang.ref.Reference.reachabilityFence(array);
        if (channel == null) {
            throw new FuseMountException("libfuse could not mount " + mountPoint + " (its reason is printed above)");
        }
        return new DevFuse(runtime, fuse, libc, mountPoint, channel);
    }

    /**
     * libfuse2, by {@code name} or else {@code fallback}.
     *
     * @throws FuseMountException if neither loads (libfuse2 not installed): before, the linker's
     *     error went up as an {@code UnsatisfiedLinkError} with a stack trace, past the start's
     *     error handling
     */
    static LibFuse libFuse(String name, String fallback) {
        try {
            return load(LibFuse.class, name, fallback);
        } catch (LinkageError | RuntimeException e) {
            throw new FuseMountException("mounting needs libfuse2, and " + fallback + " is not installed here (the"
                    + " dynamic linker found neither lib" + name + ".so nor " + fallback + ")",
                    "Install it as root: apt-get install libfuse2 (Debian 13 and Ubuntu 24.04 name it libfuse2t64;"
                            + " Fedora: dnf install fuse-libs), then start warpd again. `warpctl doctor` checks it.");
        }
    }

    private static <T> T load(Class<T> type, String name, String fallback) {
        try {
            return LibraryLoader.create(type).failImmediately().load(name);
        } catch (LinkageError | RuntimeException e) {
            return LibraryLoader.create(type).failImmediately().load(fallback);
        }
    }

    /**
     * Reads one request into {@code [address, address + size)}.
     *
     * @return its length, or minus errno
     */
    long receive(long address, int size) {
        long n = libc.read(fd, address, size);
        return n >= 0 ? n : -runtime.getLastError();
    }

    @Override
    public int send(ByteBuffer buf, int length) {
        long n = libc.write(fd, IO.getDirectBufferAddress(buf), length);
        return n >= 0 ? 0 : -runtime.getLastError();
    }

    @Override
    public int openBacking(Path file) {
        int backingFd = libc.open(file.toString(), O_RDONLY_CLOEXEC);
        if (backingFd < 0) {
            return -runtime.getLastError();
        }
        try {
            ByteBuffer map = IOCTL_ARG.get();
            map.putInt(0, backingFd).putInt(4, 0).putLong(8, 0);
            int id = libc.ioctl(fd, FuseAbi.DEV_IOC_BACKING_OPEN, IO.getDirectBufferAddress(map));
            return id > 0 ? id : id == 0 ? -Errno.EIO : -runtime.getLastError();
        } finally {
            // The kernel holds its own reference to the file from here on.
            libc.close(backingFd);
        }
    }

    @Override
    public int closeBacking(int id) {
        ByteBuffer arg = IOCTL_ARG.get();
        arg.putInt(0, id);
        int r = libc.ioctl(fd, FuseAbi.DEV_IOC_BACKING_CLOSE, IO.getDirectBufferAddress(arg));
        return r >= 0 ? 0 : -runtime.getLastError();
    }

    /** Closes the descriptor (the mount must already be gone) and frees libfuse's channel. */
    synchronized void close() {
        if (!closed) {
            closed = true;
            // libfuse sees the connection is gone (POLLERR) and only closes the descriptor.
            fuse.fuse_unmount(mountPoint.toAbsolutePath().toString(), channel);
        }
    }
}
