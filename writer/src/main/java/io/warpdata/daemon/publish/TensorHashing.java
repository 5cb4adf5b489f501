package io.warpdata.daemon.publish;

import io.warpdata.blobcache.cache.BlobMember;
import io.warpdata.manifest.ArtifactKind;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.MemberIndex;
import io.warpdata.manifest.TensorHashes;
import io.warpdata.manifest.formats.SafetensorsException;
import io.warpdata.manifest.formats.SafetensorsHeader;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Hashes every tensor of a safetensors dataset's {@code .safetensors} members, and each one's header, into
 * its {@link TensorHashes} blob, so that the mount fetches one tensor ({@code F.tensors/KEY.npy})
 * on its own, checked against its own SHA-256, instead of the 1 MiB blocks around it (issue 26).
 * Reads the members from the staged shards (or the user's tars, indexed in place) once more,
 * member by member in shard order. A member whose header does not parse (a tar's file publish
 * did not check) gets no entry and reads through its blocks as before.
 */
final class TensorHashing {
    /** The file suffix the mount makes tensor folders for. */
    static final String SUFFIX = ".safetensors";
    /**
     * Most tensors hashed in one artifact: 4,194,304 (128 MiB of hashes held while publishing).
     * Beyond it, counting every shard's, only the files of shards of 64 MiB or more are hashed,
     * without headers, as the release before did; beyond it for those too, the artifact gets no
     * tensor hashes, and its tensors read through their blocks.
     */
    static final long MAX_TENSORS = 4L << 20;
    /**
     * Block size of the blob: 4 KiB, so that finding one file's entry costs a few KiB, not the
     * 1 MiB block that would hold every file's hashes too.
     */
    static final int BLOCK_SIZE = 4 << 10;

    private TensorHashing() {
    }

    /**
     * What publish writes for an artifact's safetensors members: their tensor hashes, and their
     * headers deflated (null when written without them: tests of format 4).
     */
    record Staged(StagedBlob hashes, StagedBlob headers) {
    }

    /**
     * The artifact's tensor hashes and headers, or empty if it is no safetensors dataset (the
     * mount shows tensor folders for those only), has no safetensors member, or too many tensors.
     * Every shard size: a small shard's tensors read through its blocks while unplanned, but a
     * plan (issue 26: the loader's picks told ahead) fetches each tensor on its own, and a lookup
     * finds it through the deflated headers rather than the shard's first block.
     */
    static Optional<Staged> of(String artifact, PackedArtifact packed, PublishProgress progress) {
        return of(artifact, packed, progress, true);
    }

    /**
     * As above; without {@code headers} ({@code --no-tensor-headers}), as the release before:
     * the files of shards of 64 MiB or more hashed, no headers written (format 4 at most).
     */
    static Optional<Staged> of(String artifact, PackedArtifact packed, PublishProgress progress, boolean headers) {
        return of(artifact, packed, progress, headers ? 0 : BlobMember.LOOKUP_MIN_BLOB_BYTES, headers);
    }

    /** As above, for members of shards of at least {@code minShardBytes}, with their headers or not. */
    static Optional<Staged> of(String artifact, PackedArtifact packed, PublishProgress progress, long minShardBytes,
                               boolean headers) {
        return of(artifact, packed, progress, minShardBytes, headers, MAX_TENSORS, BlobMember.LOOKUP_MIN_BLOB_BYTES);
    }

    /**
     * As above, at most {@code maxTensors} tensors. Their headers are read first and counted:
     * past the bound, and if some are of shards under {@code largeShardBytes}, the files of the
     * larger shards alone are hashed, without headers (a version of many small files' tensors
     * lost the large shards' hashes the release before gave it; review 93), each file once.
     */
    static Optional<Staged> of(String artifact, PackedArtifact packed, PublishProgress progress, long minShardBytes,
                               boolean headers, long maxTensors, long largeShardBytes) {
        if (packed.kind() != ArtifactKind.SAFETENSORS) {
            return Optional.empty();
        }
        Counted n = count(artifact, packed, minShardBytes, largeShardBytes);
        long large = n.large();
        if (n.all() <= maxTensors) {
            return hashed(artifact, packed, progress, minShardBytes, headers, maxTensors);
        }
        if (minShardBytes >= largeShardBytes || large == 0 || large > maxTensors) {
            progress.note("hash the tensors of " + artifact + ": more than " + maxTensors
                    + " tensors; they read through their blocks");
            return Optional.empty();
        }
        progress.note("hash the tensors of " + artifact + ": more than " + maxTensors + " tensors in all; hashing the "
                + large + " of shards of " + (largeShardBytes % (1 << 20) == 0 ? (largeShardBytes >> 20) + " MiB"
                : largeShardBytes + " bytes") + " or more only, without their headers");
        return hashed(artifact, packed, progress, largeShardBytes, false, maxTensors);
    }

    /** Tensors counted from the files' headers: of the shards hashed, and of the large ones among them. */
    private record Counted(long all, long large) {
    }

    /**
     * The tensors of the safetensors files of shards of at least {@code minShardBytes}, and of
     * those of at least {@code largeShardBytes}, from their headers alone (a file whose header
     * does not parse counts none: it gets no entry).
     */
    private static Counted count(String artifact, PackedArtifact packed, long minShardBytes, long largeShardBytes) {
        long[] n = new long[2]; // all, large
        try {
            eachFile(packed, minShardBytes, (shard, i) -> {
                Header h = header(shard, packed.members(), i);
                int tensors = h == null ? 0 : h.parsed().tensors().size();
                n[0] += tensors;
                n[1] += packed.shards().get(packed.members().shard(i)).size() >= largeShardBytes ? tensors : 0;
                return true;
            });
        } catch (IOException e) {
            throw cannotRead(artifact, e);
        }
        return new Counted(n[0], n[1]);
    }

    /**
     * The tensor hashes (and headers) of the members of shards of at least {@code minShardBytes};
     * none past {@code maxTensors} (counted before: only a file changed meanwhile gets there).
     */
    private static Optional<Staged> hashed(String artifact, PackedArtifact packed, PublishProgress progress,
                                           long minShardBytes, boolean headers, long maxTensors) {
        MemberIndex members = packed.members();
        long bytes = 0;
        for (int i = 0; i < members.size(); i++) {
            bytes += hashable(packed, minShardBytes, i) ? members.length(i) : 0;
        }
        if (bytes == 0) {
            return Optional.empty();
        }
        progress.start("hash the tensors of " + artifact, bytes);
        try {
            TensorHashes.Builder b = new TensorHashes.Builder();
            long[] tensors = new long[1];
            byte[] buf = new byte[1 << 20];
            eachFile(packed, minShardBytes, (shard, i) -> {
                tensors[0] += hash(shard, members, i, b, buf, headers);
                progress.advance(members.length(i));
                return tensors[0] <= maxTensors;
            });
            if (tensors[0] > maxTensors) {
                progress.note("hash the tensors of " + artifact + ": more than " + maxTensors
                        + " tensors; they read through their blocks");
                return Optional.empty();
            }
            if (b.isEmpty()) {
                return Optional.empty();
            }
            byte[] deflated = headers ? b.buildHeaders() : null;
            return Optional.of(new Staged(StagedBlob.ofBytes(b.build(), BLOCK_SIZE),
                    deflated == null ? null : StagedBlob.ofBytes(deflated, BLOCK_SIZE)));
        } catch (IOException e) {
            throw cannotRead(artifact, e);
        } finally {
            progress.finish();
        }
    }

    /** One file of {@link #eachFile}: member {@code i}, its shard open; false ends the walk. */
    @FunctionalInterface
    private interface FileVisit {
        boolean visit(FileChannel shard, int i) throws IOException;
    }

    /** Visits the safetensors files of shards of at least {@code minShardBytes} in member order, one shard open at a time. */
    private static void eachFile(PackedArtifact packed, long minShardBytes, FileVisit visit) throws IOException {
        MemberIndex members = packed.members();
        FileChannel open = null;
        int openShard = -1;
        try {
            for (int i = 0; i < members.size(); i++) {
                if (!hashable(packed, minShardBytes, i)) {
                    continue;
                }
                if (members.shard(i) != openShard) {
                    if (open != null) {
                        open.close();
                    }
                    openShard = members.shard(i);
                    open = FileChannel.open(shardFile(packed, openShard), StandardOpenOption.READ);
                }
                if (!visit.visit(open, i)) {
                    return;
                }
            }
        } finally {
            if (open != null) {
                open.close();
            }
        }
    }

    /** Whether member {@code i} is a safetensors file of a shard of at least {@code minShardBytes}. */
    private static boolean hashable(PackedArtifact packed, long minShardBytes, int i) {
        MemberIndex members = packed.members();
        return isSafetensors(members, i) && packed.shards().get(members.shard(i)).size() >= minShardBytes;
    }

    private static boolean isSafetensors(MemberIndex members, int i) {
        return members.length(i) >= 8 && members.path(i).endsWith(SUFFIX);
    }

    private static Path shardFile(PackedArtifact packed, int shard) {
        return packed.shards().get(shard).file().orElseThrow(
                () -> new IllegalStateException("shard " + shard + " is staged in memory, not as a file"));
    }

    private static InvalidInputException cannotRead(String artifact, IOException e) {
        return new InvalidInputException("Cannot read the packed shards of artifact '" + artifact + "' again to hash"
                + " its tensors: " + e.getMessage(), "Check the staging disk, then publish again.", e);
    }

    /** A file's header: its JSON as written, and parsed. */
    private record Header(byte[] json, SafetensorsHeader parsed) {
    }

    /** Member {@code i}'s header, or null if it does not parse (a tar's file publish did not check). */
    private static Header header(FileChannel shard, MemberIndex members, int i) throws IOException {
        long size = members.length(i);
        String name = members.path(i);
        try {
            long n = SafetensorsHeader.headerLength(read(shard, members.offset(i), 8), size, name);
            byte[] json = read(shard, members.offset(i) + 8, (int) n);
            return new Header(json, SafetensorsHeader.parse(json, size, name));
        } catch (SafetensorsException notOne) {
            return null;
        }
    }

    /** Adds member {@code i}'s hashes; returns its tensor count (0 if its header does not parse). */
    private static int hash(FileChannel shard, MemberIndex members, int i, TensorHashes.Builder b, byte[] buf,
                            boolean headers) throws IOException {
        Header h = header(shard, members, i);
        if (h == null) {
            return 0;
        }
        long at = members.offset(i);
        SafetensorsHeader header = h.parsed();
        byte[] json = h.json();
        List<SafetensorsHeader.Tensor> byOffset = new ArrayList<>(header.tensors());
        byOffset.sort(TensorHashes.BY_OFFSET);
        List<BlobId> hashes = new ArrayList<>(byOffset.size());
        MessageDigest sha = BlobId.sha256();
        long data = at + header.dataStart();
        for (SafetensorsHeader.Tensor t : byOffset) {
            sha.reset();
            for (long done = 0; done < t.byteSize(); ) {
                int len = (int) Math.min(buf.length, t.byteSize() - done);
                readFully(shard, data + t.begin() + done, ByteBuffer.wrap(buf, 0, len));
                sha.update(buf, 0, len);
                done += len;
            }
            hashes.add(BlobId.fromDigest(sha.digest()));
        }
        b.add(members.hash(i), json.length, BlobId.of(json), hashes, headers ? json : null);
        return hashes.size();
    }

    private static byte[] read(FileChannel ch, long at, int len) throws IOException {
        byte[] out = new byte[len];
        readFully(ch, at, ByteBuffer.wrap(out));
        return out;
    }

    private static void readFully(FileChannel ch, long at, ByteBuffer dst) throws IOException {
        while (dst.hasRemaining()) {
            int n = ch.read(dst, at);
            if (n < 0) {
                throw new java.io.EOFException("the shard ends at " + at);
            }
            at += n;
        }
    }
}
