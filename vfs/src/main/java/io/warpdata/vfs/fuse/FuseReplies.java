package io.warpdata.vfs.fuse;

import io.warpdata.vfs.Errno;
import io.warpdata.vfs.Node;
import io.warpdata.vfs.NodeAttributes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static io.warpdata.vfs.fuse.FuseAbi.*;

/**
 * The kernel's reply structures, written at the offsets {@link FuseAbi} gives: the reply header,
 * fuse_entry_out and fuse_attr (with this mount's owner and validity), fuse_attr_out,
 * fuse_open_out, fuse_init_out, fuse_statfs_out, fuse_dirent and fuse_direntplus records, and
 * the inode invalidation notice. Replies are written into the caller's buffer (the reply buffer
 * of a {@link FuseServer} worker): nothing is allocated per request.
 */
final class FuseReplies {
    private static final Logger LOG = LoggerFactory.getLogger(FuseReplies.class);
    private static final int S_IFDIR = 0040000;
    private static final int S_IFREG = 0100000;
    private static final int S_IFLNK = 0120000;

    private final long uid;
    private final long gid;
    private volatile long validSeconds = MountOptions.DEFAULT_TIMEOUT_SECONDS;

    /** @param uid owner of every file, as stat shows it; @param gid its group */
    FuseReplies(long uid, long gid) {
        this.uid = uid;
        this.gid = gid;
    }

    /** How long the kernel may keep entries and attributes ({@link MountOptions#timeoutSeconds()}). */
    void validFor(long seconds) {
        validSeconds = seconds;
    }

    /**
     * Sends the reply in {@code out}: {@code result} >= 0 is the body's length (the body is at
     * {@link FuseAbi#OUT_HEADER}), < 0 minus an errno (no body).
     */
    static void send(ByteBuffer out, FuseChannel channel, long unique, int result) {
        int len = OUT_HEADER + Math.max(result, 0);
        out.putInt(OUT_LEN, len);
        out.putInt(OUT_ERROR, Math.min(result, 0));
        out.putLong(OUT_UNIQUE, unique);
        int res = channel.send(out, len);
        if (res < 0 && res != -Errno.ENOENT && res != -Errno.ENODEV) {
            LOG.warn("the kernel refused a FUSE reply (errno {}, {} bytes)", -res, len);
        }
    }

    /** A fuse_attr_out (GETATTR's body); returns its size. */
    int attrOut(ByteBuffer out, long ino, NodeAttributes a) {
        int o = OUT_HEADER;
        out.putLong(o + ATTR_OUT_VALID, validSeconds);
        out.putLong(o + 8, 0);
        attr(out, o + ATTR_OUT_ATTR, ino, a);
        return ATTR_OUT_SIZE;
    }

    /** A fuse_entry_out at {@code at}: node id {@code id}, inode number {@code ino}. */
    void entry(ByteBuffer out, int at, long id, long ino, NodeAttributes a) {
        out.putLong(at + ENTRY_NODEID, id);
        out.putLong(at + ENTRY_GENERATION, 0);
        out.putLong(at + ENTRY_VALID, validSeconds);
        out.putLong(at + ENTRY_ATTR_VALID, validSeconds);
        out.putLong(at + 32, 0); // entry_valid_nsec, attr_valid_nsec
        attr(out, at + ENTRY_ATTR, ino, a);
    }

    /** A fuse_attr at {@code at}. */
    private void attr(ByteBuffer out, int at, long ino, NodeAttributes a) {
        long t = a.mtimeSeconds();
        out.putLong(at + ATTR_INO, ino);
        out.putLong(at + ATTR_SIZE, a.size());
        out.putLong(at + ATTR_BLOCKS, (a.size() + 511) / 512);
        out.putLong(at + ATTR_ATIME, t);
        out.putLong(at + ATTR_MTIME, t);
        out.putLong(at + ATTR_CTIME, t);
        int ns = a.mtimeNanos();
        out.putInt(at + 48, ns); // atimensec
        out.putInt(at + 52, ns); // mtimensec
        out.putInt(at + 56, ns); // ctimensec
        out.putInt(at + ATTR_MODE, typeBits(a.type()) | a.permissions());
        out.putInt(at + ATTR_NLINK, (int) Math.min(a.nlink(), Integer.MAX_VALUE));
        out.putInt(at + ATTR_UID, (int) uid);
        out.putInt(at + ATTR_GID, (int) gid);
        out.putInt(at + 76, 0); // rdev
        out.putInt(at + ATTR_BLKSIZE, WarpFuse.BLOCK_SIZE);
        out.putInt(at + 84, 0); // flags
    }

    /** The S_IFMT bits of a node type. */
    static int typeBits(Node.Type type) {
        return switch (type) {
            case DIRECTORY -> S_IFDIR;
            case FILE -> S_IFREG;
            case SYMLINK -> S_IFLNK;
        };
    }

    /** A fuse_open_out with handle {@code fh} and FOPEN_ flags; returns its size. */
    static int open(ByteBuffer out, long fh, int flags) {
        out.putLong(OUT_HEADER + OPEN_OUT_FH, fh);
        out.putInt(OUT_HEADER + OPEN_OUT_FLAGS, flags);
        out.putInt(OUT_HEADER + OPEN_OUT_BACKING_ID, 0);
        return OPEN_OUT_SIZE;
    }

    /** A fuse_open_out whose reads and mmaps the kernel serves from backing file {@code backingId}. */
    static int openPassthrough(ByteBuffer out, long fh, int backingId) {
        out.putLong(OUT_HEADER + OPEN_OUT_FH, fh);
        out.putInt(OUT_HEADER + OPEN_OUT_FLAGS, FOPEN_PASSTHROUGH);
        out.putInt(OUT_HEADER + OPEN_OUT_BACKING_ID, backingId);
        return OPEN_OUT_SIZE;
    }

    /** The answer to an INIT from a newer major version: ours, so that the kernel asks again. */
    static int initRetry(ByteBuffer out) {
        clear(out, OUT_HEADER, INIT_OUT_SIZE);
        out.putInt(OUT_HEADER + INIT_OUT_MAJOR, MAJOR);
        out.putInt(OUT_HEADER + INIT_OUT_MINOR, MINOR);
        return INIT_OUT_SIZE_COMPAT_22;
    }

    /**
     * A fuse_init_out for minor version {@code minor} with the flags granted and Warp's limits
     * ({@link WarpFuse#MAX_BACKGROUND} and the rest); returns its size for that minor version.
     */
    static int init(ByteBuffer out, int minor, int maxReadahead, int flags) {
        return init(out, minor, maxReadahead, flags, 0);
    }

    /**
     * As above, with {@code flags2} (sent with {@link FuseAbi#INIT_EXT} when not 0); a reply that
     * asks for passthrough says backing files are on a file system that stacks on none (depth 1).
     */
    static int init(ByteBuffer out, int minor, int maxReadahead, int flags, int flags2) {
        int o = OUT_HEADER;
        clear(out, o, INIT_OUT_SIZE);
        out.putInt(o + INIT_OUT_MAJOR, MAJOR);
        out.putInt(o + INIT_OUT_MINOR, minor);
        out.putInt(o + INIT_OUT_MAX_READAHEAD, maxReadahead);
        out.putInt(o + INIT_OUT_FLAGS, flags);
        out.putShort(o + INIT_OUT_MAX_BACKGROUND, (short) WarpFuse.MAX_BACKGROUND);
        out.putShort(o + INIT_OUT_CONGESTION_THRESHOLD, (short) WarpFuse.CONGESTION_THRESHOLD);
        out.putInt(o + INIT_OUT_MAX_WRITE, WarpFuse.MAX_WRITE);
        out.putInt(o + INIT_OUT_TIME_GRAN, 1);
        if ((flags & MAX_PAGES) != 0) {
            out.putShort(o + INIT_OUT_MAX_PAGES, (short) WarpFuse.MAX_PAGES_WANTED);
        }
        if (flags2 != 0) {
            out.putInt(o + INIT_OUT_FLAGS, flags | INIT_EXT);
            out.putInt(o + INIT_OUT_FLAGS2, flags2);
            if ((flags2 & PASSTHROUGH_FLAGS2) != 0) {
                out.putInt(o + INIT_OUT_MAX_STACK_DEPTH, 1);
            }
        }
        return minor >= 23 ? INIT_OUT_SIZE : INIT_OUT_SIZE_COMPAT_22;
    }

    /** A fuse_statfs_out: only the block size and the longest name; returns its size. */
    static int statfs(ByteBuffer out) {
        clear(out, OUT_HEADER, STATFS_OUT_SIZE);
        out.putInt(OUT_HEADER + STATFS_BSIZE, WarpFuse.BLOCK_SIZE);
        out.putInt(OUT_HEADER + STATFS_NAMELEN, WarpFuse.NAME_MAX);
        out.putInt(OUT_HEADER + STATFS_FRSIZE, WarpFuse.BLOCK_SIZE);
        return STATFS_OUT_SIZE;
    }

    /** The length of a fuse_dirent record, or with {@code plus} of a fuse_direntplus record. */
    static int direntLength(boolean plus, int nameLength) {
        return align8((plus ? DIRENTPLUS_DIRENT : 0) + DIRENT_NAME + nameLength);
    }

    /**
     * The fuse_dirent of a record of {@code recordLength} bytes at {@code at} (after the
     * record's fuse_entry_out with {@code plus}, which the caller writes), padding zeroed.
     */
    static void dirent(ByteBuffer out, int at, boolean plus, long ino, long next, Node.Type type, byte[] name,
            int recordLength) {
        int direntAt = plus ? DIRENTPLUS_DIRENT : 0;
        int d = at + direntAt;
        out.putLong(d + DIRENT_INO, ino);
        out.putLong(d + DIRENT_OFF, next);
        out.putInt(d + DIRENT_NAMELEN, name.length);
        out.putInt(d + DIRENT_TYPE, typeBits(type) >>> 12);
        out.put(d + DIRENT_NAME, name);
        clear(out, d + DIRENT_NAME + name.length, recordLength - direntAt - DIRENT_NAME - name.length);
    }

    /** The notice that drops what the kernel caches of inode {@code node} (attributes, pages, a link's target). */
    static ByteBuffer invalidateInode(long node) {
        ByteBuffer b = ByteBuffer.allocateDirect(OUT_HEADER + NOTIFY_INVAL_INODE_SIZE).order(ByteOrder.nativeOrder());
        b.putInt(OUT_LEN, b.capacity());
        b.putInt(OUT_ERROR, NOTIFY_INVAL_INODE);
        b.putLong(OUT_UNIQUE, 0);
        b.putLong(OUT_HEADER, node);
        b.putLong(OUT_HEADER + 8, 0); // from offset 0
        b.putLong(OUT_HEADER + 16, 0); // to the end
        return b;
    }

    /** A notice that drops the kernel's entry {@code name} of directory {@code parent} (its dentry). */
    static ByteBuffer invalidateEntry(long parent, String name) {
        byte[] n = name.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocateDirect(OUT_HEADER + NOTIFY_INVAL_ENTRY_SIZE + n.length + 1)
                .order(ByteOrder.nativeOrder());
        b.putInt(OUT_LEN, b.capacity());
        b.putInt(OUT_ERROR, NOTIFY_INVAL_ENTRY);
        b.putLong(OUT_UNIQUE, 0);
        b.putLong(OUT_HEADER, parent);
        b.putInt(OUT_HEADER + 8, n.length);
        b.putInt(OUT_HEADER + 12, 0); // flags
        b.put(OUT_HEADER + NOTIFY_INVAL_ENTRY_SIZE, n);
        b.put(OUT_HEADER + NOTIFY_INVAL_ENTRY_SIZE + n.length, (byte) 0);
        return b;
    }

    /** Zeroes {@code out[at, at + n)}. */
    static void clear(ByteBuffer out, int at, int n) {
        int i = 0;
        for (; i + 8 <= n; i += 8) {
            out.putLong(at + i, 0);
        }
        for (; i < n; i++) {
            out.put(at + i, (byte) 0);
        }
    }
}
