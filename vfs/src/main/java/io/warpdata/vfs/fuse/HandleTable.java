package io.warpdata.vfs.fuse;

import io.warpdata.vfs.Node;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Open files and directories by FUSE file handle, so that read and readdir go straight to
 * the node without resolving the path again.
 */
final class HandleTable {
    private final ConcurrentHashMap<Long, Node> open = new ConcurrentHashMap<>();
    /** 0 means "no handle" to the adapter, so handles start at 1. */
    private final AtomicLong next = new AtomicLong(1);

    long register(Node node) {
        long handle = next.getAndIncrement();
        open.put(handle, node);
        return handle;
    }

    /** The node of {@code handle}, or null if it is not open. */
    Node get(long handle) {
        return handle == 0 ? null : open.get(handle);
    }

    void release(long handle) {
        open.remove(handle);
    }

    int size() {
        return open.size();
    }
}
