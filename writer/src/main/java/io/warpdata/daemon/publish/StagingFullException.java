package io.warpdata.daemon.publish;

import io.warpdata.manifest.WarpException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * The staging directory's file system is full while a publish packs into it: nothing was
 * uploaded or moved, and the publish may be run again once there is room.
 */
public final class StagingFullException extends WarpException {
    public StagingFullException(String what, Path dir, IOException cause) {
        super(what + ": the disk holding " + dir + " is full (" + cause.getMessage() + "); nothing was published",
                "Free space there, or pass --staging-dir DIR on a file system with room for the packed data"
                        + " (about the size of the inputs), and publish again.", cause);
    }

    /** {@code e} as this when it says the disk is full (ENOSPC, EDQUOT), else as an unchecked I/O error. */
    public static RuntimeException of(String what, Path dir, IOException e) {
        String msg = String.valueOf(e.getMessage());
        if (msg.contains("No space left") || msg.contains("Disk quota exceeded")) {
            return new StagingFullException(what, dir, e);
        }
        return new UncheckedIOException(what, e);
    }

    @Override
    public String type() {
        return "StagingFull";
    }
}
