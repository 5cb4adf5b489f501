package io.warpdata.vfs;

import io.warpdata.manifest.Artifact;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.MemberIndex;
import io.warpdata.manifest.VersionHash;

import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Inode numbers of member files, computed rather than kept: a member's inode is made of its
 * artifact's slot ({@link ArtifactSlot}) and its position in the artifact's member index, so a
 * LOOKUP or READDIRPLUS entry of a member creates no entry anywhere, FORGET of one has nothing
 * to drop, and GETATTR and READ decode the number and read the member from the (paged) index.
 * A walk of a million-member artifact then costs the daemon nothing per member it listed.
 *
 * <pre>
 *  63  62  61 ............ 31  30 ............ 0
 *  1   0   slot (31 bits)      position (31 bits)
 * </pre>
 *
 * <ul>
 * <li>Bit 63 set: a computed member inode. The FUSE adapter's table hands out its ids from 2
 *     upward, one per kernel lookup, and never reaches 2^63, so the two kinds never collide.</li>
 * <li>Bit 62 clear: a number with it set was never handed out, and decodes as stale.</li>
 * <li>Slot: 0 to {@link #MAX_SLOT} (about 2^31), one per (version, artifact) the mount has
 *     reached, given in order and never reused while the tree lives; past the last,
 *     {@link TooManyArtifactsException}.</li>
 * <li>Position: a member index position, a non-negative {@code int} (an index holds at most
 *     2^31 - 1 members), so every member of every index fits.</li>
 * </ul>
 *
 * <p>A version is immutable and its index with it, so an inode names the same member for the
 * life of the mount. A number that names no slot yet, or a position past its index's end,
 * decodes as {@link StaleNodeException} (ESTALE): never another member's bytes.
 *
 * <p>Memory: one {@link ArtifactSlot} per artifact reached in the mount's life (its version's
 * manifest stays parsed with it), nothing per member.
 */
final class MemberInodes {
    static final long MEMBER_BIT = 1L << 63;
    private static final long UNUSED_BIT = 1L << 62;
    static final int POSITION_BITS = 31;
    /**
     * The last slot number: slots have 31 bits, but are held in one array, whose length Java
     * bounds a little below 2^31.
     */
    static final int MAX_SLOT = Integer.MAX_VALUE - 9;
    private static final long POSITION_MASK = (1L << POSITION_BITS) - 1;

    private final MemberIndexCache indexes;
    private final ConcurrentHashMap<Key, ArtifactSlot> byArtifact = new ConcurrentHashMap<>();
    /** Slots by number; replaced (grown) under the lock of {@code byArtifact}'s writers, read without. */
    private volatile ArtifactSlot[] byNumber = new ArtifactSlot[16];
    private int next;

    private record Key(DatasetId dataset, VersionHash version, String artifact) {
    }

    MemberInodes(MemberIndexCache indexes) {
        this.indexes = indexes;
    }

    /** Whether {@code nodeid} is a computed member inode (whether or not it names a member). */
    static boolean isMember(long nodeid) {
        return (nodeid & MEMBER_BIT) != 0;
    }

    /** Bits 31-62 of {@code nodeid}: its slot, with the unused bit (a member inode's artifact, for grouping). */
    static long slotBits(long nodeid) {
        return (nodeid & ~MEMBER_BIT) >>> POSITION_BITS;
    }

    static long inode(int slot, int position) {
        if (slot < 0 || position < 0) {
            throw new IllegalArgumentException("slot " + slot + ", position " + position);
        }
        return MEMBER_BIT | (long) slot << POSITION_BITS | position;
    }

    /**
     * The folder node of artifact {@code name} of {@code version}, numbering the artifact if this
     * is the first time the mount reaches it.
     *
     * @throws TooManyArtifactsException if every slot is taken
     * @throws RuntimeException whatever loading its member index threw
     */
    Node.MemberDir artifactDir(VersionTree version, String name, Artifact artifact) {
        ArtifactSlot slot = slot(version, name, artifact);
        return new Node.MemberDir(slot, indexes.get(artifact.index()), "");
    }

    private ArtifactSlot slot(VersionTree version, String name, Artifact artifact) {
        Key key = new Key(version.dataset(), version.version(), name);
        ArtifactSlot slot = byArtifact.get(key);
        return slot != null ? slot : byArtifact.computeIfAbsent(key, k -> number(version, name, artifact));
    }

    /** A new slot; called inside {@code computeIfAbsent}, so each artifact is numbered once. */
    private synchronized ArtifactSlot number(VersionTree version, String name, Artifact artifact) {
        if (next > MAX_SLOT) {
            throw new TooManyArtifactsException((long) MAX_SLOT + 1);
        }
        ArtifactSlot slot = new ArtifactSlot(next, version, name, artifact);
        ArtifactSlot[] table = byNumber;
        if (next == table.length) {
            table = Arrays.copyOf(table, (int) Math.min((long) table.length * 2, (long) MAX_SLOT + 1));
        }
        table[next] = slot;
        byNumber = table;
        next++;
        return slot;
    }

    /** Artifacts numbered so far (a gauge, and for tests). */
    int slots() {
        return byArtifact.size();
    }

    /**
     * The member file {@code nodeid} names.
     *
     * @throws StaleNodeException if it names no member (no such slot or position, or not a member inode)
     * @throws RuntimeException whatever reloading the artifact's member index threw
     */
    Node.File file(long nodeid) {
        ArtifactSlot slot = slotOf(nodeid);
        MemberIndex index = indexes.get(slot.artifact().index());
        int position = (int) (nodeid & POSITION_MASK);
        if (position >= index.size()) {
            throw new StaleNodeException(nodeid);
        }
        return slot.member(index, position);
    }

    private ArtifactSlot slotOf(long nodeid) {
        if (!isMember(nodeid) || (nodeid & UNUSED_BIT) != 0) {
            throw new StaleNodeException(nodeid);
        }
        long number = (nodeid & ~(MEMBER_BIT | UNUSED_BIT)) >>> POSITION_BITS;
        ArtifactSlot[] table = byNumber;
        ArtifactSlot slot = number < table.length ? table[(int) number] : null;
        if (slot == null) {
            throw new StaleNodeException(nodeid);
        }
        return slot;
    }

    /** {@code ws/name@hash/artifact/member/path} of a member inode, or {@code (node N)}: for log lines. */
    String describe(long nodeid) {
        try {
            Node.File f = file(nodeid);
            FileContent.Member m = (FileContent.Member) f.content();
            return m.artifact().describe() + "/" + m.index().path(m.member());
        } catch (RuntimeException unknown) {
            return "(node " + Long.toUnsignedString(nodeid) + ")";
        }
    }
}
