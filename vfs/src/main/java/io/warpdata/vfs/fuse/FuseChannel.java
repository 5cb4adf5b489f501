package io.warpdata.vfs.fuse;

import io.warpdata.vfs.Errno;

import java.nio.ByteBuffer;
import java.nio.file.Path;

/** Where replies and notifications go: {@code /dev/fuse} in production, a recorder in tests. */
interface FuseChannel {
    /**
     * Writes bytes {@code [0, length)} of {@code buf} (a direct buffer) to the kernel as one
     * message.
     *
     * @return 0, or minus errno (ENOENT when the request was interrupted meanwhile, ENODEV once
     *         the mount is gone: neither is an error of the file system)
     */
    int send(ByteBuffer buf, int length);

    /**
     * Registers {@code file} (opened read-only) as a backing file for passthrough opens
     * ({@code FUSE_DEV_IOC_BACKING_OPEN}, Linux 6.9+, needs CAP_SYS_ADMIN).
     *
     * @return its backing id (above 0), or minus errno
     */
    default int openBacking(Path file) {
        return -Errno.ENOSYS;
    }

    /** Drops backing id {@code id}; files already open onto it keep reading it. Returns 0 or minus errno. */
    default int closeBacking(int id) {
        return -Errno.ENOSYS;
    }
}
