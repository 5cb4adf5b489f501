package io.warpdata.vfs;

import io.warpdata.manifest.WarpException;

/** A name or path names nothing in the mount (ENOENT, not logged). */
public final class NoSuchEntryException extends WarpException {
    public NoSuchEntryException(String path) {
        super(path + " does not exist",
                "List the parent directory to see what exists; 'warpctl list-remote' lists published datasets.");
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
