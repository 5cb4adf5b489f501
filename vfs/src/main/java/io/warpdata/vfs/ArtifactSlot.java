package io.warpdata.vfs;

import io.warpdata.manifest.Artifact;
import io.warpdata.manifest.MemberIndex;

import java.util.Objects;

/**
 * An artifact of one version as the mount numbers it: the {@code number} its member files'
 * inodes are computed from ({@link MemberInodes}), given the first time a lookup or listing
 * reaches the artifact's folder and kept, never reused, for the life of the tree (the mount).
 *
 * @param number the slot, {@code 0 <= number <= Slots.MAX_SLOT}
 * @param name   the artifact's name in its version
 */
public record ArtifactSlot(int number, VersionTree version, String name, Artifact artifact) {
    public ArtifactSlot {
        if (number < 0 || number > Slots.MAX_SLOT) {
            throw new IllegalArgumentException("slot " + number);
        }
        Objects.requireNonNull(version, "version");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(artifact, "artifact");
    }

    /** The inode of member {@code position} of this artifact's index (see {@link MemberInodes}). */
    public long inode(int position) {
        return MemberInodes.inode(number, position);
    }

    /**
     * Member {@code i} of {@code index} (this artifact's index) as a file: a slice of its tar
     * shard, known by its SHA-256.
     */
    Node.File member(MemberIndex index, int i) {
        return new Node.File(version, new FileContent.Member(this, index, i), (index.mode(i) & 0111) != 0, inode(i));
    }

    /** {@code ws/name@hash/artifact}, for log lines. */
    String describe() {
        return version.describe() + "/" + name;
    }
}
