package io.warpdata.vfs.fuse;

import io.warpdata.vfs.DirectorySnapshot;
import io.warpdata.vfs.Errno;
import io.warpdata.vfs.Node;
import io.warpdata.vfs.NodeAttributes;
import io.warpdata.vfs.WarpTree;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentHashMap;

import static io.warpdata.vfs.fuse.FuseAbi.ENTRY_OUT_SIZE;
import static io.warpdata.vfs.fuse.FuseAbi.FOPEN_CACHE_DIR;
import static io.warpdata.vfs.fuse.FuseAbi.FOPEN_KEEP_CACHE;
import static io.warpdata.vfs.fuse.FuseAbi.OUT_HEADER;
import static io.warpdata.vfs.fuse.FuseAbi.READ_IN_FH;
import static io.warpdata.vfs.fuse.FuseAbi.READ_IN_OFFSET;
import static io.warpdata.vfs.fuse.FuseAbi.READ_IN_SIZE;
import static io.warpdata.vfs.fuse.FuseAbi.RELEASE_IN_FH;

/**
 * OPENDIR, READDIR, READDIRPLUS and RELEASEDIR for {@link WarpFuse}: directory handles, and
 * listings encoded as the kernel reads them, each READDIRPLUS entry with its inode
 * ({@link NodeTable#handOut}: computed for a member file, so that listing a million members
 * adds nothing to the table) and its attributes, except member files of an artifact whose
 * members nobody looked up lately ({@link AttributeDemand}): those go as dirents alone (node
 * id 0, their computed inode number in the dirent), so that a {@code find} makes the kernel
 * build no inode for them.
 */
final class Directories {
    private final WarpTree tree;
    private final NodeTable nodes;
    private final FuseReplies replies;
    private final AttributeDemand demand;
    private final HandleTable handles = new HandleTable();
    /**
     * The listing each open handle reads, taken at its first READDIR and again when it reads
     * from the start (rewinddir shows the directory as it is then, as POSIX asks).
     */
    private final ConcurrentHashMap<Long, DirectorySnapshot> listings = new ConcurrentHashMap<>();

    Directories(WarpTree tree, NodeTable nodes, FuseReplies replies, AttributeDemand demand) {
        this.tree = tree;
        this.nodes = nodes;
        this.replies = replies;
        this.demand = demand;
    }

    /** Open directories (a gauge). */
    int openHandles() {
        return handles.size();
    }

    /**
     * A directory inside a version never changes, so the kernel may keep its listing
     * (FOPEN_CACHE_DIR, Linux 4.20+): a second {@code ls} or {@code find} of it costs no round
     * trip. Workspace and root listings change with every publish and are re-read each time.
     */
    int opendir(long nodeid, ByteBuffer out) {
        Node n = nodes.node(nodeid);
        if (n.type() != Node.Type.DIRECTORY) {
            return -Errno.ENOTDIR;
        }
        return FuseReplies.open(out, handles.register(n), tree.immutable(n) ? FOPEN_KEEP_CACHE | FOPEN_CACHE_DIR : 0);
    }

    int releasedir(ByteBuffer in) {
        long fh = in.getLong(RELEASE_IN_FH);
        handles.release(fh);
        listings.remove(fh);
        return 0;
    }

    /** The listing handle {@code fh} reads from {@code offset}: its own, or the tree's if it has no handle. */
    private DirectorySnapshot listing(long fh, Node node, long offset) {
        if (handles.get(fh) == null) {
            return (from, sink) -> tree.list(node, from, sink);
        }
        DirectorySnapshot taken = offset == 0 ? null : listings.get(fh);
        if (taken == null) {
            taken = tree.snapshot(node);
            listings.put(fh, taken);
        }
        return taken;
    }

    /**
     * One chunk of a listing from {@code offset}: fuse_dirent records, or with {@code plus}
     * fuse_direntplus records whose inodes count a lookup each where they are tabled ("." and
     * ".." carry none, as the kernel skips them, nor do member files nobody stats).
     */
    int readdir(long nodeid, ByteBuffer in, ByteBuffer out, boolean plus) {
        NodeTable.Entry dir = nodes.entry(nodeid);
        long offset = in.getLong(READ_IN_OFFSET);
        int size = Math.min(in.getInt(READ_IN_SIZE), out.capacity() - OUT_HEADER);
        Chunk chunk = new Chunk();
        // Entries carry inodes where the listing produced their nodes (inside a version): a
        // workspace's entries are versions whose attributes need their manifests, which a plain
        // `ls /warp/ws` must not fetch.
        listing(in.getLong(READ_IN_FH), dir.node, offset).list(offset, (name, type, next, child) -> {
            byte[] b = name.getBytes(StandardCharsets.UTF_8);
            int recordLength = FuseReplies.direntLength(plus, b.length);
            if (chunk.used + recordLength > size) {
                return true;
            }
            int at = OUT_HEADER + chunk.used;
            // The number stat gives, in every dirent ("." and ".." are the first two offsets)
            long member = child == null ? 0 : tree.computedInode(child);
            long ino = next <= 2 ? (next == 1 || dir.parent == null ? dir.ino : dir.parent.ino)
                    : member != 0 ? member : NodeTable.inoOf(dir.ino, name);
            if (plus) {
                FuseReplies.clear(out, at, ENTRY_OUT_SIZE);
                // a member nobody looks up goes as a dirent alone: node id 0 (see AttributeDemand)
                if (child != null && (member == 0 || chunk.membersWithAttributes(member, demand))) {
                    plusEntry(out, at, dir, name, child);
                }
            }
            FuseReplies.dirent(out, at, plus, ino, next, type, b, recordLength);
            chunk.used += recordLength;
            return false;
        });
        return chunk.used;
    }

    /** One chunk of a listing as it is written: its bytes, and whether its member entries carry attributes. */
    private static final class Chunk {
        int used;
        /** 0 until the chunk's first member, then 1 (inodes and attributes) or 2 (dirents alone). */
        private int members;

        /** Decided at the chunk's first member (one clock read per chunk), then kept. */
        boolean membersWithAttributes(long member, AttributeDemand demand) {
            if (members == 0) {
                members = demand.wanted(member) ? 1 : 2;
            }
            return members == 1;
        }
    }

    /**
     * The fuse_entry_out of one READDIRPLUS entry, for the node the listing produced; an entry
     * whose attributes cannot be had now goes out without a node id, and its LOOKUP reports the
     * error.
     */
    private void plusEntry(ByteBuffer out, int at, NodeTable.Entry dir, String name, Node child) {
        NodeAttributes a;
        try {
            a = tree.attributes(child);
        } catch (RuntimeException unresolved) {
            return;
        }
        long id = nodes.handOut(dir, name, child);
        replies.entry(out, at, id, nodes.ino(id), a);
    }
}
