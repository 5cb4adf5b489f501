package io.warpdata.vfs;

import io.warpdata.manifest.WarpException;

/**
 * The mount has numbered as many artifacts (or tensor folders) as computed inodes have room for
 * ({@link Slots#MAX_SLOT} + 1): a daemon that opened about two billion distinct
 * (version, artifact) pairs since it mounted.
 */
public final class TooManyArtifactsException extends WarpException {
    public TooManyArtifactsException(long slots) {
        super("this mount has numbered " + slots + " artifacts (or tensor folders) since it started,"
                        + " the most its computed inodes can tell apart",
                "Restart warpd (the numbering starts again with the mount).");
    }

    @Override
    public String type() {
        return "TooManyArtifacts";
    }
}
