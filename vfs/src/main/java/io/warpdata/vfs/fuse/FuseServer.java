package io.warpdata.vfs.fuse;

import io.warpdata.vfs.Errno;

import jnr.ffi.Memory;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A mount served by a fixed pool of Java threads that speak the FUSE protocol on
 * {@code /dev/fuse} themselves.
 *
 * <p>Why not libfuse's loop: libfuse2's high-level API (what jnr-fuse binds) addresses files
 * by path, keeps its own node tree under a lock, has one global entry/attribute timeout, and
 * has no READDIRPLUS, so {@code ls -l} or a PyTorch {@code ImageFolder} cost one LOOKUP round
 * trip per file after the READDIR that already named it. libfuse2's low-level API has no
 * READDIRPLUS either. Speaking the protocol (a few dozen fixed-layout structs, {@link FuseAbi})
 * gives READDIRPLUS (a directory's entries arrive with their inodes and attributes, hundreds
 * per round trip at the kernel's buffer size, where each cost a LOOKUP of its own), reads that
 * find their node by id without a path walk, and no upcall from native code per request: a
 * worker is a Java loop around {@code read} and {@code write} on the descriptor. libfuse2 still
 * does the mount (root or {@code fusermount}).
 *
 * <p>Why a fixed pool: requests in flight are bounded by the kernel ({@link WarpFuse#MAX_BACKGROUND}
 * asynchronous ones, read-ahead, plus one per calling thread); {@link #WORKERS} covers a
 * sequential scan's read-ahead with room for concurrent readers, and a request beyond that waits
 * in the kernel's queue. libfuse2's {@code fuse_loop_mt} started and ended native threads all the
 * time instead (measured: ~290 thread attachments to the JVM in a 3 s read of 1 GiB).
 *
 * <p>Shutdown: unmounting (by {@link #unmount()}, {@code fusermount -u} or {@code umount}) ends
 * the connection, every worker's read fails with ENODEV and it exits; then the descriptor closes.
 */
final class FuseServer {
    private static final Logger LOG = LoggerFactory.getLogger(FuseServer.class);

    /** Worker threads; each holds one request buffer and one reply buffer. */
    static final int WORKERS = 32;
    /**
     * The request buffer: the kernel refuses reads into less than 8 KiB or less than its largest
     * write; Warp sets max_write to {@link WarpFuse#MAX_WRITE} and never gets writes, so the
     * largest requests are a name (LOOKUP, at most 4 KiB with its path) and a batch of forgets,
     * which the kernel sizes to the buffer.
     */
    static final int REQUEST_BUFFER = 64 << 10;
    /** The reply buffer: a header and the largest read. */
    static final int REPLY_BUFFER = FuseAbi.OUT_HEADER + MountOptions.MAX_READ;
    /** How long {@link #unmount()} waits for workers to finish requests already being served. */
    static final long STOP_WAIT_MILLIS = 5_000;

    private final DevFuse dev;
    private final WarpFuse fs;
    private final Path mountPoint;
    private final List<Thread> workers = new ArrayList<>();
    private boolean stopped;

    private FuseServer(DevFuse dev, WarpFuse fs, Path mountPoint) {
        this.dev = dev;
        this.fs = fs;
        this.mountPoint = mountPoint;
    }

    /**
     * Mounts {@code fs} at {@code mountPoint} and starts the workers; returns once the kernel
     * has the mount (the kernel's INIT is answered by the first worker to read it).
     *
     * @throws FuseMountException if libfuse cannot mount
     */
    static FuseServer mount(WarpFuse fs, Path mountPoint, MountOptions options) {
        DevFuse dev = DevFuse.mount(mountPoint, options.optionString());
        FuseServer server = new FuseServer(dev, fs, mountPoint);
        for (int i = 0; i < WORKERS; i++) {
            Thread t = new Thread(server::serve, "warp-fuse-" + (i + 1));
            t.setDaemon(true);
            server.workers.add(t);
            t.start();
        }
        return server;
    }

    /** The channel replies and notifications are written to. */
    FuseChannel channel() {
        return dev;
    }

    /** One worker: read a request, serve it (the reply is written on this thread), until the mount is gone. */
    private void serve() {
        Runtime runtime = Runtime.getSystemRuntime();
        Pointer requestMemory = Memory.allocateDirect(runtime, REQUEST_BUFFER, false);
        ByteBuffer request = com.kenai.jffi.MemoryIO.getInstance()
                .newDirectByteBuffer(requestMemory.address(), REQUEST_BUFFER).order(ByteOrder.nativeOrder());
        ByteBuffer reply = ByteBuffer.allocateDirect(REPLY_BUFFER).order(ByteOrder.nativeOrder());
        while (true) {
            long n = dev.receive(requestMemory.address(), REQUEST_BUFFER);
            if (n < 0) {
                int err = (int) -n;
                if (err == Errno.EINTR || err == Errno.EAGAIN || err == Errno.ENOENT) {
                    continue; // interrupted, or the request was withdrawn before we read it
                }
                if (err != Errno.ENODEV) {
                    LOG.error("reading /dev/fuse for {} failed (errno {}); this worker stops", mountPoint, err);
                }
                return;
            }
            request.limit((int) n).position(0);
            fs.serve(request, reply, dev);
        }
    }

    /** Whether a worker is still serving (false once the mount is gone). */
    boolean serving() {
        for (Thread t : workers) {
            if (t.isAlive()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Unmounts, waits up to {@link #STOP_WAIT_MILLIS} for the workers, then closes the descriptor.
     * As root the unmount is forced first, which aborts the FUSE connection: a file held open (or a
     * reader in the middle of one) then fails with ENOTCONN at once, as after a crash, and the
     * workers end at once (audit 23: a file merely held open kept them, and the stop, 5 s, while a
     * reader kept reading). Then, or without root, the mount is detached lazily. If a worker is
     * still busy after the wait, the descriptor is left to the process's exit rather than closed
     * under it.
     */
    synchronized void unmount() {
        if (stopped) {
            return;
        }
        forceUnmount(mountPoint);
        lazyUnmount(mountPoint);
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(STOP_WAIT_MILLIS);
        for (Thread t : workers) {
            try {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(until - System.nanoTime())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        if (serving()) {
            LOG.warn("FUSE workers for {} still busy {} ms after unmounting; leaving the connection to process exit",
                    mountPoint, STOP_WAIT_MILLIS);
            return;
        }
        stopped = true;
        dev.close();
    }

    /**
     * {@code umount -f -c} as root: the kernel aborts the connection (fuse_umount_begin) even when
     * the mount is busy, and unmounts it when it is not; {@code -c} keeps umount from resolving
     * the path, which would stat the mount's root and wait on workers that may be stuck. Without
     * root it is refused, harmlessly.
     */
    private static void forceUnmount(Path mountPoint) {
        if ("root".equals(System.getProperty("user.name"))) {
            run(List.of("umount", "-f", "-c", mountPoint.toAbsolutePath().toString()));
        }
    }

    /** {@code fusermount -u -z}, or {@code umount -l} where fusermount is missing (root). */
    private static void lazyUnmount(Path mountPoint) {
        String dir = mountPoint.toAbsolutePath().toString();
        for (List<String> cmd : List.of(List.of("fusermount", "-u", "-z", dir), List.of("umount", "-l", dir))) {
            if (run(cmd)) {
                return;
            }
        }
    }

    /** Runs a command for at most 10 s (killed after), its output discarded; whether it exited 0. */
    private static boolean run(List<String> cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (p.waitFor(10, TimeUnit.SECONDS)) {
                return p.exitValue() == 0;
            }
            p.destroyForcibly();
            return false;
        } catch (java.io.IOException e) {
            return false; // not installed: the caller tries the next way
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
