package io.warpdata.vfs.fuse;

import io.warpdata.manifest.BlobRef;
import io.warpdata.vfs.Errno;
import io.warpdata.vfs.Node;
import io.warpdata.vfs.WarpTree;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import static io.warpdata.vfs.fuse.FuseAbi.FOPEN_KEEP_CACHE;

/**
 * Passthrough opens (FUSE 7.40, Linux 6.9+) of files that are whole blobs: when the block cache
 * has a local copy of the blob ({@link WarpTree#localCopy}), the open is answered with a backing
 * file and the kernel reads (and maps) the copy itself, with no round trip to warpd per read.
 *
 * <p>The kernel keeps one mode per inode while it is open: a passthrough open of an inode that
 * is open in the cached mode fails ({@code ETXTBSY}), and so does a cached open of an inode open
 * in passthrough, or a passthrough open onto another backing file ({@code EBUSY}). So the opens
 * of every such inode are counted here, by mode (the file handle says which), and an inode goes
 * passthrough only when no cached open of it remains, then stays so, on the same backing id,
 * until its last passthrough open is released. The kernel drops its count of an open before it
 * sends RELEASE, so these counts are never below its own. Files that are not whole blobs
 * (archive members) are never counted and always open cached.
 */
final class Backings {
    private static final Logger LOG = LoggerFactory.getLogger(Backings.class);
    /** File handles: opens of files that are not whole blobs carry 0. */
    static final long FH_CACHED = 1;
    static final long FH_PASSTHROUGH = 2;

    private static final class State {
        int cached;
        int passthrough;
        int backingId;
        BlobRef blob;
    }

    private final WarpTree tree;
    private final ConcurrentHashMap<Long, State> states = new ConcurrentHashMap<>();
    private final LongAdder passthroughOpens = new LongAdder();
    private final LongAdder backingFiles = new LongAdder();
    /** The errno the kernel refused a backing file with, for good on this mount (0: it did not). */
    private volatile int refusedErrno;

    Backings(WarpTree tree) {
        this.tree = tree;
    }

    /** Answers the OPEN of file {@code nodeid} (read-only, checked) into {@code out}; returns the reply's size. */
    int open(long nodeid, Node node, FuseChannel channel, ByteBuffer out) {
        BlobRef blob = tree.wholeBlob(node);
        if (blob == null) {
            return FuseReplies.open(out, 0, FOPEN_KEEP_CACHE);
        }
        int[] backing = new int[1];
        states.compute(nodeid, (k, s) -> {
            State st = s == null ? new State() : s;
            st.blob = blob;
            if (st.backingId > 0) {
                st.passthrough++;
                backing[0] = st.backingId;
                return st;
            }
            Path copy = tree.localCopy(blob);
            if (copy != null && st.cached == 0 && refusedErrno == 0) {
                int id = channel.openBacking(copy);
                if (id > 0) {
                    backingFiles.increment();
                    st.backingId = id;
                    st.passthrough = 1;
                    backing[0] = id;
                    return st;
                }
                refusedWith(-id, copy);
            }
            st.cached++;
            return st;
        });
        if (backing[0] > 0) {
            passthroughOpens.increment();
            return FuseReplies.openPassthrough(out, FH_PASSTHROUGH, backing[0]);
        }
        return FuseReplies.open(out, FH_CACHED, FOPEN_KEEP_CACHE);
    }

    /** A RELEASE of file {@code nodeid} opened with handle {@code fh}. */
    void release(long nodeid, long fh, FuseChannel channel) {
        if (fh != FH_CACHED && fh != FH_PASSTHROUGH) {
            return;
        }
        BlobRef[] closed = new BlobRef[1];
        states.computeIfPresent(nodeid, (k, st) -> {
            if (fh == FH_PASSTHROUGH && st.passthrough > 0 && --st.passthrough == 0) {
                int r = channel.closeBacking(st.backingId);
                if (r != 0) {
                    LOG.debug("closing backing file {} of inode {}: errno {}", st.backingId, nodeid, -r);
                }
                st.backingId = 0;
            } else if (fh == FH_CACHED && st.cached > 0) {
                st.cached--;
                closed[0] = st.blob;
            }
            return st.cached == 0 && st.passthrough == 0 ? null : st;
        });
        if (closed[0] != null) {
            // Read through warpd: its blocks may all be cached now, so that the next open finds a copy.
            tree.closed(closed[0]);
        }
    }

    /**
     * The kernel would not take a backing file. For a copy deleted meanwhile (ENOENT) this open
     * goes cached; for anything else (no CAP_SYS_ADMIN, a cache on a stacked file system) no
     * passthrough is tried again on this mount.
     */
    private void refusedWith(int errno, Path copy) {
        if (errno == Errno.ENOENT) {
            return;
        }
        refusedErrno = errno;
        LOG.warn("the kernel refused passthrough of {} (errno {}{}); files opened again are read through warpd,"
                        + " as before", copy, errno,
                errno == Errno.EPERM ? ": warpd needs CAP_SYS_ADMIN for it" : "");
    }

    /** Whether the kernel refused a backing file for good on this mount. */
    boolean refused() {
        return refusedErrno != 0;
    }

    /** The errno the kernel refused it with, 0 if it did not. */
    int refusedErrno() {
        return refusedErrno;
    }

    /**
     * Whether this process may register backing files: the kernel asks for CAP_SYS_ADMIN
     * (effective), which root has. Read from {@code /proc/self/status}; false if unreadable.
     */
    static boolean mayRegister() {
        try {
            for (String line : java.nio.file.Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("CapEff:")) {
                    long caps = Long.parseUnsignedLong(line.substring(7).trim(), 16);
                    boolean sysAdmin = (caps & (1L << CAP_SYS_ADMIN)) != 0;
                    if (!sysAdmin) {
                        LOG.info("no passthrough: it needs CAP_SYS_ADMIN, which warpd does not have; every read goes"
                                + " through warpd");
                    }
                    return sysAdmin;
                }
            }
        } catch (java.io.IOException | RuntimeException e) {
            LOG.debug("cannot read this process's capabilities: {}", e.toString());
        }
        return false;
    }

    private static final int CAP_SYS_ADMIN = 21;

    /** Opens answered with a backing file. */
    long passthroughOpens() {
        return passthroughOpens.sum();
    }

    /** Backing files registered with the kernel (one per inode while it is open passthrough). */
    long backingFiles() {
        return backingFiles.sum();
    }
}
