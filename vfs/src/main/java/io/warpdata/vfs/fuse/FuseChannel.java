package io.warpdata.vfs.fuse;

import java.nio.ByteBuffer;

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
}
