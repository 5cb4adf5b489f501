package io.warpdata.vfs.fuse;

/**
 * The FUSE kernel protocol as far as a read-only file system needs it: opcodes, flags and the
 * byte offsets of the structs of {@code <linux/fuse.h>} (all little-endian on the platforms
 * Warp runs on, fields naturally aligned, so offsets are the same on x86-64 and arm64).
 *
 * <p>Warp speaks the protocol itself (see {@link FuseServer}) and claims minor version
 * {@link #MINOR} at most: every struct below has the layout it has had since 7.28, and the
 * kernel keeps newer fields out of requests to a server that claims an older minor.
 */
final class FuseAbi {
    private FuseAbi() {
    }

    static final int MAJOR = 7;
    /** The protocol minor Warp speaks: 7.31 (Linux 5.4), which has every capability it asks for. */
    static final int MINOR = 31;
    /** The oldest minor whose struct layouts are the ones here (Linux 2.6.32). */
    static final int OLDEST_MINOR = 13;
    static final long ROOT_ID = 1;

    // ---- opcodes ----
    static final int LOOKUP = 1;
    static final int FORGET = 2;
    static final int GETATTR = 3;
    static final int SETATTR = 4;
    static final int READLINK = 5;
    static final int SYMLINK = 6;
    static final int MKNOD = 8;
    static final int MKDIR = 9;
    static final int UNLINK = 10;
    static final int RMDIR = 11;
    static final int RENAME = 12;
    static final int LINK = 13;
    static final int OPEN = 14;
    static final int READ = 15;
    static final int WRITE = 16;
    static final int STATFS = 17;
    static final int RELEASE = 18;
    static final int FSYNC = 20;
    static final int SETXATTR = 21;
    static final int GETXATTR = 22;
    static final int LISTXATTR = 23;
    static final int REMOVEXATTR = 24;
    static final int FLUSH = 25;
    static final int INIT = 26;
    static final int OPENDIR = 27;
    static final int READDIR = 28;
    static final int RELEASEDIR = 29;
    static final int FSYNCDIR = 30;
    static final int ACCESS = 34;
    static final int CREATE = 35;
    static final int INTERRUPT = 36;
    static final int DESTROY = 38;
    static final int IOCTL = 39;
    static final int BATCH_FORGET = 42;
    static final int FALLOCATE = 43;
    static final int READDIRPLUS = 44;
    static final int RENAME2 = 45;
    static final int COPY_FILE_RANGE = 47;
    static final int TMPFILE = 51;

    /** Notification codes (in the error field of a reply with unique 0). */
    static final int NOTIFY_INVAL_INODE = 2;
    static final int NOTIFY_INVAL_ENTRY = 3;

    // ---- INIT flags ----
    static final int ASYNC_READ = 1;
    static final int DO_READDIRPLUS = 1 << 13;
    static final int PARALLEL_DIROPS = 1 << 18;
    static final int MAX_PAGES = 1 << 22;
    static final int CACHE_SYMLINKS = 1 << 23;
    /** The flags go on in flags2 (7.36, Linux 5.17). */
    static final int INIT_EXT = 1 << 30;
    /** flags2: files may be opened onto a backing file the kernel reads itself (7.40, Linux 6.9). */
    static final int PASSTHROUGH_FLAGS2 = 1 << (37 - 32);

    /** open_out flags. */
    static final int FOPEN_KEEP_CACHE = 1 << 1;
    static final int FOPEN_CACHE_DIR = 1 << 3;
    /** Reads and mmap go to the backing file named by open_out's backing_id (7.40). */
    static final int FOPEN_PASSTHROUGH = 1 << 7;

    /** ioctls on /dev/fuse (7.40): _IOW(229, 1, struct fuse_backing_map) and _IOW(229, 2, uint32_t). */
    static final long DEV_IOC_BACKING_OPEN = (1L << 30) | (16L << 16) | (229L << 8) | 1;
    static final long DEV_IOC_BACKING_CLOSE = (1L << 30) | (4L << 16) | (229L << 8) | 2;
    /** struct fuse_backing_map: int32 fd, uint32 flags, uint64 padding. */
    static final int BACKING_MAP_SIZE = 16;

    // ---- struct fuse_in_header (40 bytes) ----
    static final int IN_HEADER = 40;
    static final int IN_LEN = 0;
    static final int IN_OPCODE = 4;
    static final int IN_UNIQUE = 8;
    static final int IN_NODEID = 16;

    // ---- struct fuse_out_header (16 bytes) ----
    static final int OUT_HEADER = 16;
    static final int OUT_LEN = 0;
    static final int OUT_ERROR = 4;
    static final int OUT_UNIQUE = 8;

    // ---- struct fuse_init_in, after the header ----
    static final int INIT_IN_MAJOR = IN_HEADER;
    static final int INIT_IN_MINOR = IN_HEADER + 4;
    static final int INIT_IN_MAX_READAHEAD = IN_HEADER + 8;
    static final int INIT_IN_FLAGS = IN_HEADER + 12;
    /** Present from 7.36; read only when the kernel sets {@link #INIT_EXT} in flags. */
    static final int INIT_IN_FLAGS2 = IN_HEADER + 16;

    // ---- struct fuse_init_out ----
    static final int INIT_OUT_MAJOR = 0;
    static final int INIT_OUT_MINOR = 4;
    static final int INIT_OUT_MAX_READAHEAD = 8;
    static final int INIT_OUT_FLAGS = 12;
    static final int INIT_OUT_MAX_BACKGROUND = 16;
    static final int INIT_OUT_CONGESTION_THRESHOLD = 18;
    static final int INIT_OUT_MAX_WRITE = 20;
    static final int INIT_OUT_TIME_GRAN = 24;
    static final int INIT_OUT_MAX_PAGES = 28;
    static final int INIT_OUT_FLAGS2 = 32;
    /** How deep file systems may stack under a passthrough file (7.40). */
    static final int INIT_OUT_MAX_STACK_DEPTH = 36;
    /** Size of fuse_init_out for minor >= 23; 24 bytes before (FUSE_COMPAT_22_INIT_OUT_SIZE). */
    static final int INIT_OUT_SIZE = 64;
    static final int INIT_OUT_SIZE_COMPAT_22 = 24;

    // ---- struct fuse_forget_in / fuse_batch_forget_in / fuse_forget_one ----
    static final int FORGET_IN_NLOOKUP = IN_HEADER;
    static final int BATCH_FORGET_IN_COUNT = IN_HEADER;
    static final int BATCH_FORGET_FIRST = IN_HEADER + 8;
    static final int FORGET_ONE_SIZE = 16;

    // ---- struct fuse_read_in (READ, READDIR, READDIRPLUS) ----
    static final int READ_IN_FH = IN_HEADER;
    static final int READ_IN_OFFSET = IN_HEADER + 8;
    static final int READ_IN_SIZE = IN_HEADER + 16;

    // ---- struct fuse_open_in / fuse_open_out ----
    static final int OPEN_IN_FLAGS = IN_HEADER;
    static final int OPEN_OUT_FH = 0;
    static final int OPEN_OUT_FLAGS = 8;
    /** Was padding before 7.40. */
    static final int OPEN_OUT_BACKING_ID = 12;
    static final int OPEN_OUT_SIZE = 16;

    // ---- struct fuse_release_in ----
    static final int RELEASE_IN_FH = IN_HEADER;

    // ---- struct fuse_attr (88 bytes) ----
    static final int ATTR_INO = 0;
    static final int ATTR_SIZE = 8;
    static final int ATTR_BLOCKS = 16;
    static final int ATTR_ATIME = 24;
    static final int ATTR_MTIME = 32;
    static final int ATTR_CTIME = 40;
    static final int ATTR_MODE = 60;
    static final int ATTR_NLINK = 64;
    static final int ATTR_UID = 68;
    static final int ATTR_GID = 72;
    static final int ATTR_BLKSIZE = 80;
    static final int ATTR_STRUCT_SIZE = 88;

    // ---- struct fuse_attr_out (104 bytes) ----
    static final int ATTR_OUT_VALID = 0;
    static final int ATTR_OUT_ATTR = 16;
    static final int ATTR_OUT_SIZE = ATTR_OUT_ATTR + ATTR_STRUCT_SIZE;

    // ---- struct fuse_entry_out (128 bytes) ----
    static final int ENTRY_NODEID = 0;
    static final int ENTRY_GENERATION = 8;
    static final int ENTRY_VALID = 16;
    static final int ENTRY_ATTR_VALID = 24;
    static final int ENTRY_ATTR = 40;
    static final int ENTRY_OUT_SIZE = ENTRY_ATTR + ATTR_STRUCT_SIZE;

    // ---- struct fuse_dirent: ino, off, namelen, type, name (padded to 8) ----
    static final int DIRENT_INO = 0;
    static final int DIRENT_OFF = 8;
    static final int DIRENT_NAMELEN = 16;
    static final int DIRENT_TYPE = 20;
    static final int DIRENT_NAME = 24;
    /** struct fuse_direntplus: a fuse_entry_out, then a fuse_dirent. */
    static final int DIRENTPLUS_DIRENT = ENTRY_OUT_SIZE;

    // ---- struct fuse_kstatfs, the body of fuse_statfs_out (80 bytes) ----
    static final int STATFS_BSIZE = 40;
    static final int STATFS_NAMELEN = 44;
    static final int STATFS_FRSIZE = 48;
    static final int STATFS_OUT_SIZE = 80;

    // ---- struct fuse_notify_inval_inode_out: ino, off, len ----
    static final int NOTIFY_INVAL_INODE_SIZE = 24;
    // ---- struct fuse_notify_inval_entry_out: parent, namelen, flags; then the name and a NUL ----
    static final int NOTIFY_INVAL_ENTRY_SIZE = 16;

    /** A request's name for counters and logs ({@code lookup}, {@code read}, ...; "other" for the rest). */
    static String opName(int opcode) {
        return switch (opcode) {
            case LOOKUP -> "lookup";
            case GETATTR -> "getattr";
            case FORGET, BATCH_FORGET -> "forget";
            case READ -> "read";
            case READDIR -> "readdir";
            case READDIRPLUS -> "readdirplus";
            case READLINK -> "readlink";
            case OPEN -> "open";
            case OPENDIR -> "opendir";
            case RELEASEDIR -> "releasedir";
            case STATFS -> "statfs";
            case INIT -> "init";
            case IOCTL -> "ioctl";
            case GETXATTR, LISTXATTR -> "xattr";
            case FLUSH -> "flush";
            case INTERRUPT -> "interrupt";
            default -> "other";
        };
    }

    /** Entries are padded to 8 bytes. */
    static int align8(int n) {
        return (n + 7) & ~7;
    }
}
