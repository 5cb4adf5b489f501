package io.warpdata.vfs.fuse;

import io.warpdata.vfs.Node;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The kernel's inodes: node id -> path and {@link Node}, with the kernel's lookup count.
 *
 * <p>Every reply that hands the kernel a node id (a LOOKUP, an entry of READDIRPLUS) counts one
 * lookup; FORGET gives them back, and at zero the kernel no longer knows the id and the entry is
 * dropped. One path has one id while the kernel knows it (lookups of a known path return the
 * same id), so a READDIRPLUS after a LOOKUP, or two DataLoader workers looking up the same
 * file, give the kernel one inode. Ids are never reused, so no generation numbers are needed.
 *
 * <p>A {@link Node} is immutable and names everything a read needs, so READ and GETATTR find it
 * by id without resolving a path. Memory: one entry per inode the kernel caches (~200 bytes with
 * the path), bounded by the kernel's own inode cache.
 */
final class NodeTable {
    /** One inode the kernel knows. */
    static final class Entry {
        final long id;
        final String path;
        final Node node;
        /** Guarded by the {@code byPath} bin of {@link #path}. */
        private long lookups;

        Entry(long id, String path, Node node) {
            this.id = id;
            this.path = path;
            this.node = node;
        }
    }

    private final ConcurrentHashMap<String, Entry> byPath = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Long, Entry> byId = new ConcurrentHashMap<>();
    private final AtomicLong nextId = new AtomicLong(FuseAbi.ROOT_ID + 1);
    private final Entry root;

    NodeTable(Node rootNode) {
        root = new Entry(FuseAbi.ROOT_ID, "/", rootNode);
    }

    /** The entry of {@code id}, or null if the kernel has forgotten it (or never had it). */
    Entry get(long id) {
        return id == FuseAbi.ROOT_ID ? root : byId.get(id);
    }

    /**
     * The entry of {@code path} (resolved to {@code node}) with one more lookup counted: call it
     * only for an entry whose id is about to be sent to the kernel.
     */
    Entry lookedUp(String path, Node node) {
        if (path.equals("/")) {
            return root;
        }
        return byPath.compute(path, (p, e) -> {
            if (e == null) {
                e = new Entry(nextId.getAndIncrement(), p, node);
                byId.put(e.id, e);
            }
            e.lookups++;
            return e;
        });
    }

    /** The kernel forgot {@code lookups} lookups of {@code id}. */
    void forget(long id, long lookups) {
        Entry e = byId.get(id);
        if (e == null) {
            return;
        }
        byPath.computeIfPresent(e.path, (p, current) -> {
            if (current != e) {
                return current;
            }
            e.lookups -= lookups;
            if (e.lookups > 0) {
                return e;
            }
            byId.remove(e.id, e);
            return null;
        });
    }

    /** Inodes the kernel holds (the root not counted). */
    int size() {
        return byId.size();
    }

    /** A child's path. */
    static String child(String parent, String name) {
        return parent.length() == 1 ? "/" + name : parent + "/" + name;
    }
}
