package io.warpdata.vfs.fuse;

import io.warpdata.manifest.WarpException;

/** The mount itself failed; libfuse (or fusermount) prints the system's reason on stderr. */
public final class FuseMountException extends WarpException {
    public FuseMountException(String message) {
        super(message, "See the line libfuse printed above. Usual causes: /dev/fuse missing or not readable by this"
                + " user (it must be mode 0666, or run warpd as root), fusermount missing (apt-get install fuse3),"
                + " or the mount point in use. `warpctl doctor` checks all of these.");
    }

    /** A failure with its own next step (libfuse2 not installed). */
    public FuseMountException(String message, String nextStep) {
        super(message, nextStep);
    }

    @Override
    public String type() {
        return "fuse_mount";
    }
}
