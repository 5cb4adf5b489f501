package io.warpdata.manifest;

/**
 * A stored manifest was written in a format newer than this Warp reads: the version was
 * published by a newer Warp (a newer layout of what it names, such as a member index in parts).
 * Nothing is wrong with the data; this reader is too old for it.
 */
public final class ManifestFormatTooNewException extends WarpException {
    public ManifestFormatTooNewException(String source, long format, int newestKnown) {
        super("Manifest " + source + " has format version " + format + "; this Warp reads versions 1 to " + newestKnown
                        + ": the dataset version was published by a newer Warp",
                "Upgrade Warp (warpd and warpctl) on this machine to the release that published it; upgrade the"
                        + " readers of a store before its publishers (README, \"Upgrading\").",
                null);
    }

    @Override
    public String type() {
        return "FormatTooNew";
    }
}
