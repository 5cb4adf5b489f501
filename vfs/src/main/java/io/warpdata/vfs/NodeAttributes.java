package io.warpdata.vfs;

/**
 * What stat reports for a node: type, permission bits, size, link count and modification time
 * (seconds since the epoch). Owner is the daemon's user, fixed by the FUSE adapter.
 */
public record NodeAttributes(Node.Type type, int permissions, long size, long nlink, long mtimeSeconds) {
    public NodeAttributes {
        if (type == null) {
            throw new IllegalArgumentException("type");
        }
        if (size < 0 || nlink < 1) {
            throw new IllegalArgumentException("size " + size + ", nlink " + nlink);
        }
    }
}
