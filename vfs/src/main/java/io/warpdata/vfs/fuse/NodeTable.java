package io.warpdata.vfs.fuse;

import io.warpdata.vfs.Node;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The kernel's inodes: node id -> parent, name and {@link Node}, with the kernel's lookup count.
 *
 * <p>Every reply that hands the kernel a node id (a LOOKUP, an entry of READDIRPLUS) counts one
 * lookup; FORGET gives them back, and at zero the kernel no longer knows the id and the entry is
 * dropped. One name in one directory has one id while the kernel knows it (lookups of a known
 * entry return the same id), so a READDIRPLUS after a LOOKUP, or two DataLoader workers looking
 * up the same file, give the kernel one inode. Ids are never reused, so no generation numbers
 * are needed.
 *
 * <p>A {@link Node} is immutable and names everything an operation needs, so LOOKUP resolves a
 * child from its parent's node, and READ and GETATTR find their node by id, without any path.
 * Paths are built only for log lines, by walking up the parents. Memory: an entry per inode the
 * kernel caches, bounded by the kernel's own inode cache, each holding its name and node, no path.
 */
final class NodeTable {
    /** One inode the kernel knows. */
    static final class Entry {
        final long id;
        final Entry parent;
        final String name;
        final Node node;
        /** Guarded by the {@code byName} bin of this entry's key. */
        private long lookups;

        Entry(long id, Entry parent, String name, Node node) {
            this.id = id;
            this.parent = parent;
            this.name = name;
            this.node = node;
        }

        /** The absolute path in the mount (built on each call: for log lines and errors only). */
        String path() {
            return parent == null ? "/" : child(parent.path(), name);
        }
    }

    /** A name in a directory. */
    private record Key(long parent, String name) {
    }

    private final ConcurrentHashMap<Key, Entry> byName = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Long, Entry> byId = new ConcurrentHashMap<>();
    private final AtomicLong nextId = new AtomicLong(FuseAbi.ROOT_ID + 1);
    private final Entry root;

    NodeTable(Node rootNode) {
        root = new Entry(FuseAbi.ROOT_ID, null, "", rootNode);
    }

    /** The entry of {@code id}, or null if the kernel has forgotten it (or never had it). */
    Entry get(long id) {
        return id == FuseAbi.ROOT_ID ? root : byId.get(id);
    }

    /**
     * The entry of {@code name} in {@code parent} (resolved to {@code node}) with one more
     * lookup counted: call it only for an entry whose id is about to be sent to the kernel.
     */
    Entry lookedUp(Entry parent, String name, Node node) {
        return byName.compute(new Key(parent.id, name), (k, e) -> {
            if (e == null) {
                e = new Entry(nextId.getAndIncrement(), parent, name, node);
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
        byName.computeIfPresent(new Key(e.parent.id, e.name), (k, current) -> {
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
