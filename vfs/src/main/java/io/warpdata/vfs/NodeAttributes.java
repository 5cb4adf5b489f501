package io.warpdata.vfs;

/**
 * What stat reports for a node: type, permission bits, size, link count and modification time
 * (seconds since the epoch and the nanoseconds within that second). Owner is the daemon's user,
 * fixed by the FUSE adapter.
 */
public record NodeAttributes(Node.Type type, int permissions, long size, long nlink, long mtimeSeconds,
                             int mtimeNanos) {
    public NodeAttributes {
        if (type == null) {
            throw new IllegalArgumentException("type");
        }
        if (size < 0 || nlink < 1) {
            throw new IllegalArgumentException("size " + size + ", nlink " + nlink);
        }
        if (mtimeNanos < 0 || mtimeNanos > 999_999_999) {
            throw new IllegalArgumentException("mtime nanoseconds " + mtimeNanos);
        }
    }

    /** With a modification time of whole seconds. */
    public NodeAttributes(Node.Type type, int permissions, long size, long nlink, long mtimeSeconds) {
        this(type, permissions, size, nlink, mtimeSeconds, 0);
    }
}
