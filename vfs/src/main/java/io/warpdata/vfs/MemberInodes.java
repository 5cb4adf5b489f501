package io.warpdata.vfs;

import io.warpdata.manifest.Artifact;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.MemberIndex;
import io.warpdata.manifest.VersionHash;

/**
 * Inode numbers of member files, computed rather than kept: a member's inode is made of its
 * artifact's slot ({@link ArtifactSlot}) and its position in the artifact's member index, so a
 * LOOKUP or READDIRPLUS entry of a member creates no entry anywhere, FORGET of one has nothing
 * to drop, and GETATTR and READ decode the number and read the member from the (paged) index.
 * A walk of a million-member artifact then costs the daemon nothing per member it listed.
 *
 * <pre>
 *  63  62  61 ............ 31  30 ............ 0
 *  1   0   slot (31 bits)      position (31 bits)    an artifact member
 *  1   1   slot (31 bits)      position (31 bits)    a tensor file ({@link TensorInodes})
 * </pre>
 *
 * <ul>
 * <li>Bit 63 set: a computed member inode. The FUSE adapter's table hands out its ids from 2
 *     upward, one per kernel lookup, and never reaches 2^63, so the two kinds never collide.</li>
 * <li>Bit 62 clear: with it set, the number is a tensor file's ({@link TensorInodes}), from
 *     slots of its own.</li>
 * <li>Slot: 0 to {@link Slots#MAX_SLOT} (about 2^31), one per (version, artifact) the mount
 *     has reached, given in order and never reused while the tree lives ({@link Slots}); past
 *     the last, {@link TooManyArtifactsException}.</li>
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
    /** Set in every computed inode (member or tensor). */
    static final long COMPUTED_BIT = 1L << 63;
    /** Set in a tensor file's computed inode ({@link TensorInodes}). */
    static final long TENSOR_BIT = 1L << 62;
    static final int POSITION_BITS = 31;
    static final long POSITION_MASK = (1L << POSITION_BITS) - 1;

    private final MemberIndexCache indexes;
    private final Slots<Key, ArtifactSlot> slots = new Slots<>();

    private record Key(DatasetId dataset, VersionHash version, String artifact) {
    }

    MemberInodes(MemberIndexCache indexes) {
        this.indexes = indexes;
    }

    /** Whether {@code nodeid} is a computed inode, a member's or a tensor's (whether or not it names one). */
    static boolean isComputed(long nodeid) {
        return (nodeid & COMPUTED_BIT) != 0;
    }

    /** Bits 31-62 of {@code nodeid}: its slot, with the tensor bit (a member's artifact or a tensor's folder, for grouping). */
    static long slotBits(long nodeid) {
        return (nodeid & ~COMPUTED_BIT) >>> POSITION_BITS;
    }

    static long inode(int slot, int position) {
        if (slot < 0 || position < 0) {
            throw new IllegalArgumentException("slot " + slot + ", position " + position);
        }
        return COMPUTED_BIT | (long) slot << POSITION_BITS | position;
    }

    /** The slot number of a computed inode of the kind {@code kindBits} (its top two bits), or -1 if it is not of that kind. */
    static long slotNumber(long nodeid, long kindBits) {
        return (nodeid & (COMPUTED_BIT | TENSOR_BIT)) == kindBits ? (nodeid & ~(COMPUTED_BIT | TENSOR_BIT)) >>> POSITION_BITS : -1;
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
        return slots.slot(new Key(version.dataset(), version.version(), name),
                number -> new ArtifactSlot(number, version, name, artifact));
    }

    /** The member index of {@code slot}'s artifact, from the index cache (loaded again if it let it go). */
    MemberIndex index(ArtifactSlot slot) {
        return indexes.get(slot.artifact().index());
    }

    /** Artifacts numbered so far (a gauge, and for tests). */
    int slots() {
        return slots.size();
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
        ArtifactSlot slot = slots.get(slotNumber(nodeid, COMPUTED_BIT));
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
