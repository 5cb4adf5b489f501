package io.warpdata.vfs;

import io.warpdata.manifest.WarpException;

/** A path names nothing in the mount (ENOENT). Not logged unless {@link #worthLogging()}. */
public final class NoSuchEntryException extends WarpException {
    private final boolean worthLogging;

    public NoSuchEntryException(String path) {
        this(path + " does not exist", false);
    }

    private NoSuchEntryException(String message, boolean worthLogging) {
        super(message, "List the parent directory to see what exists; 'warpctl list-remote' lists published datasets.");
        this.worthLogging = worthLogging;
    }

    /** A version prefix that matches more than one version: ENOENT, but the user deserves a log line. */
    public static NoSuchEntryException ambiguous(String path, int matches) {
        return new NoSuchEntryException(path + " is ambiguous: the version prefix matches " + matches
                + " versions; use more hex digits", true);
    }

    public boolean worthLogging() {
        return worthLogging;
    }

    /**
     * No stack trace: a missing path is an answer, not a bug (shells and importers probe for
     * files all the time, and the kernel does not cache negative lookups), and the message
     * names the path.
     */
    @Override
    public synchronized Throwable fillInStackTrace() {
        return this;
    }

    @Override
    public String type() {
        return "NotFound";
    }
}
