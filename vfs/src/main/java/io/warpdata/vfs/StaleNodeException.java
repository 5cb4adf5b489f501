package io.warpdata.vfs;

import io.warpdata.manifest.WarpException;

/** A request named a node id the kernel has already forgotten (ESTALE): a kernel or Warp bug. */
public final class StaleNodeException extends WarpException {
    public StaleNodeException(long nodeid) {
        super("FUSE node " + nodeid + " is not known (already forgotten?)",
                "Re-open the file; if it keeps happening, report it with warpd's log.");
    }

    @Override
    public String type() {
        return "StaleNode";
    }
}
