package io.warpdata.vfs;

import io.warpdata.blobcache.cache.BlobMember;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.MemberIndex;

import java.util.List;
import java.util.Objects;

/**
 * The bytes of a {@link Node.File}: a list of pieces, each either a range of a blob (read
 * through the verified block cache) or bytes held in memory. A table shard is one
 * {@link BlobSlice}; an archive member is one {@link Member} (a range of its tar shard whose own
 * SHA-256 is known, so the cache may serve it by that hash); a synthesized header followed by a
 * blob range (a tensor as an {@code .npy} file) is {@link Pieces} of an {@link Inline} and a
 * {@link BlobSlice}, and is read, verified and cached like any member.
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
     * Member {@code member} of an artifact's member index: its bytes in {@code shard}, found
     * through the index (which stays in memory while the member's directory is in use) rather
     * than copied here, so that the node the kernel holds stays small.
     */
    record Member(BlobRef shard, MemberIndex index, int member) implements FileContent {
        public Member {
            Objects.requireNonNull(shard, "shard");
            Objects.checkIndex(member, index.size());
        }

        @Override
        public long size() {
            return index.length(member);
        }

        /** What the read path needs to serve it: the range of the shard and the member's SHA-256. */
        public BlobMember blobMember() {
            return new BlobMember(shard, index.offset(member), index.length(member), index.hash(member));
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
