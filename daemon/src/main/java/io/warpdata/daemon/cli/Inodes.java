package io.warpdata.daemon.cli;

import jnr.ffi.LibraryLoader;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;

import java.nio.file.Path;
import java.util.Optional;

/**
 * The inodes of a file system (statvfs(3)), which Java's {@code FileStore} does not report: a
 * disk with bytes free but no inode left takes no new file, so warpd, which keeps one file per
 * cached block, caches nothing more on it.
 */
final class Inodes {
    /** What statvfs fills in: f_files and f_favail (64-bit Linux: 8-byte fields from offset 0). */
    private static final int STATVFS_SIZE = 112;
    private static final int F_FILES = 40;
    private static final int F_FAVAIL = 56;

    /** statvfs(3). */
    public interface LibC {
        int statvfs(String path, Pointer buf);
    }

    /** @param total inodes of the file system; @param free those an unprivileged user may take */
    record Count(long total, long free) {
    }

    private Inodes() {
    }

    /**
     * The inodes of the file system holding {@code path}; empty where they cannot be known, or
     * where the file system has no fixed number (btrfs, some network file systems report 0).
     */
    static Optional<Count> of(Path path) {
        try {
            LibC libc = LibraryLoader.create(LibC.class).failImmediately().load("c");
            Pointer buf = Memory.allocateDirect(Runtime.getSystemRuntime(), STATVFS_SIZE);
            if (libc.statvfs(path.toString(), buf) != 0) {
                return Optional.empty();
            }
            long total = buf.getLong(F_FILES);
            return total <= 0 ? Optional.empty() : Optional.of(new Count(total, buf.getLong(F_FAVAIL)));
        } catch (LinkageError | RuntimeException e) {
            return Optional.empty();
        }
    }
}
