package io.warpdata.vfs;

import io.warpdata.blobcache.cache.BlobMember;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.ManifestCorruptedException;
import io.warpdata.manifest.MemberIndex;

import java.util.List;
import java.util.Objects;

/**
 * The bytes of a {@link Node.File}: a list of pieces, each either a range of a blob (read
 * through the verified block cache) or bytes held in memory. A table shard is one
 * {@link BlobSlice}; an archive member is one {@link Member} (a range of its tar shard whose own
 * SHA-256 is known, so the cache may serve it by that hash); a synthesized header followed by a
 * blob range (a tensor as an {@code .npy} file) is {@link Pieces} of an {@link Inline} and a
 * {@link BlobSlice} (or a {@link HashedRange}, when the tensor's own hash was published), and is
 * read, verified and cached like any member.
 */
public sealed interface FileContent {

    /** Length in bytes. */
    long size();

    /** {@code length} bytes of {@code blob} from {@code offset}. */
    record BlobSlice(BlobRef blob, long offset, long length) implements FileContent {
        public BlobSlice {
            Objects.requireNonNull(blob, "blob");
            if (offset < 0 || length < 0 || offset + length > blob.size()) {
                throw new IllegalArgumentException("slice [" + offset + ", +" + length + ") of blob " + blob.id()
                        + " of " + blob.size() + " bytes");
            }
        }

        /** A whole blob. */
        public static BlobSlice of(BlobRef blob) {
            return new BlobSlice(blob, 0, blob.size());
        }

        @Override
        public long size() {
            return length;
        }
    }

    /**
     * Member {@code member} of an artifact's member index: its bytes in one of the artifact's
     * shards, found through the index (paged from its file, or on the heap) rather than copied
     * here, so that a member's node stays small.
     *
     * @param artifact the artifact as the mount numbers it (the member's inode is computed from it)
     */
    record Member(ArtifactSlot artifact, MemberIndex index, int member) implements FileContent {
        public Member {
            Objects.requireNonNull(artifact, "artifact");
            Objects.checkIndex(member, index.size());
        }

        /**
         * The tar shard holding the member.
         *
         * @throws ManifestCorruptedException if the index names a shard the artifact does not have
         */
        public BlobRef shard() {
            return shard(index.shard(member), artifact.artifact().shards());
        }

        private BlobRef shard(int s, List<BlobRef> shards) {
            if (s < 0 || s >= shards.size()) {
                throw corrupted("names shard " + s + " of an artifact of " + shards.size());
            }
            return shards.get(s);
        }

        private ManifestCorruptedException corrupted(String problem) {
            return new ManifestCorruptedException("member index of artifact '" + artifact.name() + "'",
                    "members[" + member + "]", problem);
        }

        @Override
        public long size() {
            return index.length(member);
        }

        /**
         * What the read path needs to serve it: the range of the shard, the member's SHA-256, and
         * the artifact's next shard, where a scan of this one goes on (its members follow).
         */
        public BlobMember blobMember() {
            int s = index.shard(member);
            List<BlobRef> shards = artifact.artifact().shards();
            BlobRef shard = shard(s, shards);
            long offset = index.offset(member);
            long length = index.length(member);
            if (offset < 0 || length < 0 || offset > shard.size() - length) {
                throw corrupted("lies at bytes [" + offset + ", +" + length + ") of a shard of " + shard.size() + " bytes");
            }
            return new BlobMember(shard, offset, length, index.hash(member), s + 1 < shards.size() ? shards.get(s + 1) : null);
        }
    }

    /**
     * A range of a blob whose own SHA-256 is known (a tensor of a safetensors member, from its
     * artifact's {@link io.warpdata.manifest.TensorHashes}): read as a lookup
     * ({@link BlobMember#lookup}), fetched and checked on its own rather than through the blocks
     * around it.
     */
    record HashedRange(BlobMember range) implements FileContent {
        public HashedRange {
            Objects.requireNonNull(range, "range");
        }

        @Override
        public long size() {
            return range.length();
        }
    }

    /** Bytes made by Warp (a manifest, a synthesized header); never modified after construction. */
    record Inline(byte[] bytes) implements FileContent {
        public Inline {
            Objects.requireNonNull(bytes, "bytes");
        }

        @Override
        public long size() {
            return bytes.length;
        }
    }

    /** Pieces one after another; none of them is itself {@link Pieces}. */
    record Pieces(List<FileContent> pieces, long size) implements FileContent {
        public Pieces {
            pieces = List.copyOf(pieces);
            long total = 0;
            for (FileContent p : pieces) {
                if (p instanceof Pieces) {
                    throw new IllegalArgumentException("nested pieces");
                }
                total += p.size();
            }
            if (total != size) {
                throw new IllegalArgumentException("pieces add up to " + total + " bytes, not " + size);
            }
        }

        public static Pieces of(FileContent... pieces) {
            long total = 0;
            for (FileContent p : pieces) {
                total += p.size();
            }
            return new Pieces(List.of(pieces), total);
        }
    }
}
