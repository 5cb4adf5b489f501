package io.warpdata.vfs.fuse;

import io.warpdata.vfs.Node;
import io.warpdata.vfs.StaleNodeException;
import io.warpdata.vfs.WarpTree;
import io.warpdata.vfs.WrongNodeTypeException;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The kernel's inodes: node id -> parent, name and {@link Node}, with the kernel's lookup count,
 * for every node but artifact members and tensor files, whose ids the tree computes
 * ({@link WarpTree#computedInode}: bit 63 set, see {@code MemberInodes} and {@code TensorInodes})
 * and which therefore cost no entry here.
 *
 * <p>Why members are not tabled: {@code find} or {@code ls -lR} over an artifact of a million
 * members makes the kernel hold a million inodes, each handed out by a READDIRPLUS entry and
 * given back by FORGET. An entry here cost about 290 bytes and two map writes per inode (370 MiB
 * of heap for ImageNet's 1.28M); a computed id costs nothing to hand out or forget, and GETATTR
 * and READ decode it from the artifact's slot and the member's index position (a tensor file's
 * from its folder's slot and its position in the folder). What stays tabled is every directory
 * (a thousand for ImageNet), links and table shards.
 *
 * <p>Every reply that hands the kernel a node id (a LOOKUP, an entry of READDIRPLUS) counts one
 * lookup; FORGET gives them back, and at zero the kernel no longer knows the id and the entry is
 * dropped. One name in one directory has one id while the kernel knows it (lookups of a known
 * entry return the same id), so a READDIRPLUS after a LOOKUP, or two DataLoader workers looking
 * up the same file, give the kernel one inode. Ids are never reused, so no generation numbers
 * are needed; tabled ids count up from 2 and never reach 2^63, the computed ones' range. The
 * inode number stat shows is not the id but a hash of the path ({@link #inoOf}), the same in every
 * run and after the kernel forgets the node.
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
        /** Its inode number for stat and dirents: from its path, so the same in every run ({@link #inoOf}). */
        final long ino;
        final Entry parent;
        final String name;
        final Node node;
        /** Guarded by the {@code byName} bin of this entry's key. */
        private long lookups;

        Entry(long id, Entry parent, String name, Node node) {
            this.id = id;
            this.ino = parent == null ? FuseAbi.ROOT_ID : inoOf(parent.ino, name);
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
    /** The same entries by inode number (what /proc's fdinfo shows), for {@link #byIno}. */
    private final ConcurrentHashMap<Long, Entry> byIno = new ConcurrentHashMap<>();
    private final AtomicLong nextId = new AtomicLong(FuseAbi.ROOT_ID + 1);
    private final Entry root;
    private final WarpTree tree;

    NodeTable(WarpTree tree) {
        this.tree = tree;
        root = new Entry(FuseAbi.ROOT_ID, null, "", tree.root());
    }

    /** The entry of {@code id}, or null if the kernel has forgotten it (or never had it, or it is computed). */
    Entry get(long id) {
        return id == FuseAbi.ROOT_ID ? root : WarpTree.isComputedInode(id) ? null : byId.get(id);
    }

    /**
     * The node of {@code id}: decoded if computed, else from its entry.
     *
     * @throws StaleNodeException if the kernel has forgotten it, or it names nothing
     */
    Node node(long id) {
        if (WarpTree.isComputedInode(id)) {
            return tree.nodeOfComputedInode(id);
        }
        return entry(id).node;
    }

    /**
     * The entry of a directory (or link) the kernel names: never a member or tensor file, whose id is computed.
     *
     * @throws WrongNodeTypeException if {@code id} is a member or tensor file's
     * @throws StaleNodeException if the kernel has forgotten it
     */
    Entry entry(long id) {
        if (WarpTree.isComputedInode(id)) {
            throw new WrongNodeTypeException("node " + Long.toUnsignedString(id), Node.Type.FILE);
        }
        Entry e = get(id);
        if (e == null) {
            throw new StaleNodeException(id);
        }
        return e;
    }

    /**
     * The id to send the kernel for {@code name} in {@code parent}, resolved to {@code node}:
     * computed for a member or tensor file, else its entry's with one more lookup counted. Call it only for
     * an id that is about to be sent to the kernel.
     */
    long handOut(Entry parent, String name, Node node) {
        long computed = tree.computedInode(node);
        return computed != 0 ? computed : lookedUp(parent, name, node).id;
    }

    /** The entry whose inode number (stat's, fdinfo's) is {@code ino}, or null: not held, or a member or tensor file's. */
    Entry byIno(long ino) {
        return ino == FuseAbi.ROOT_ID ? root : byIno.get(ino);
    }

    /**
     * The inode number of {@code id} for stat: a member or tensor file's computed id, else its entry's
     * {@link Entry#ino}.
     *
     * @throws StaleNodeException if the kernel has forgotten it
     */
    long ino(long id) {
        return WarpTree.isComputedInode(id) ? id : entry(id).ino;
    }

    /**
     * The inode number of {@code name} in a directory whose number is {@code parentIno}: a hash
     * of the path, below 2^63 (computed member ids have bit 63 set) and above the root's 1. Node
     * ids count up and a forgotten directory comes back with a new one, so numbers taken from them
     * changed under memory pressure and at every start (GNU tar's incremental dumps then saw every
     * folder as renamed); a path's number does not. Two paths share one with a chance of about
     * n^2 / 2^64 (10^-7 for a million tabled paths).
     */
    static long inoOf(long parentIno, String name) {
        long h = parentIno * 0x9E3779B97F4A7C15L;
        for (int i = 0; i < name.length(); i++) {
            h = (h ^ name.charAt(i)) * 0x100000001B3L;
        }
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        h &= Long.MAX_VALUE;
        return h <= FuseAbi.ROOT_ID ? h + 2 : h;
    }

    /** The path of {@code id} for log lines: {@code (node N)} if unknown. */
    String pathOf(long id) {
        if (WarpTree.isComputedInode(id)) {
            return tree.describeComputedInode(id);
        }
        Entry e = get(id);
        return e == null ? "(node " + id + ")" : e.path();
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
                byIno.put(e.ino, e);
            }
            e.lookups++;
            return e;
        });
    }

    /** The kernel forgot {@code lookups} lookups of {@code id} (nothing to do for a computed id). */
    void forget(long id, long lookups) {
        if (WarpTree.isComputedInode(id)) {
            return;
        }
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
            byIno.remove(e.ino, e);
            return null;
        });
    }

    /** Inodes the kernel holds that have entries (the root and computed ids not counted). */
    int size() {
        return byId.size();
    }

    /** A child's path. */
    static String child(String parent, String name) {
        return parent.length() == 1 ? "/" + name : parent + "/" + name;
    }
}
