package io.warpdata.daemon.control.protocol;

/**
 * FUSE passthrough ({@code warpd --passthrough}) as {@code status} and {@code doctor} show it.
 *
 * @param state          {@code off} (not asked for), {@code on}, {@code unavailable} (asked for,
 *                       but this warpd, kernel or mode cannot), or {@code stopped} (the kernel
 *                       refused a backing file, so files are read through warpd again)
 * @param reason         why it is unavailable or stopped, and what to do; empty otherwise
 * @param opens          opens answered with a local copy since start
 * @param localCopies    whole-file copies on disk now
 * @param localCopyBytes their bytes
 */
public record PassthroughStatus(String state, String reason, long opens, long localCopies, long localCopyBytes) {
    public PassthroughStatus {
        reason = reason == null ? "" : reason;
    }

    /** Whether it was asked for and does not run. */
    public boolean failing() {
        return "unavailable".equals(state) || "stopped".equals(state);
    }
}
