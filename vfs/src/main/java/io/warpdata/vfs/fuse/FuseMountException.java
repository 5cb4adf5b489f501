package io.warpdata.vfs.fuse;

/** The mount itself failed (libfuse prints the kernel's or fusermount's reason on stderr). */
public final class FuseMountException extends RuntimeException {
    public FuseMountException(String message) {
        super(message);
    }
}
