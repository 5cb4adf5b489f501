package io.warpdata.daemon.inspect;

import io.warpdata.blobcache.cache.BlobReader;
import io.warpdata.manifest.Artifact;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.Manifest;
import io.warpdata.manifest.IndexBytes;
import io.warpdata.manifest.MemberIndex;
import io.warpdata.manifest.WarpException;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Objects;

/**
 * One artifact member's bytes, as {@code warpctl cat} writes them: the member is looked up in the
 * artifact's member index, and its slice of the shard is read through the {@link BlobReader}
 * (every block verified against the publisher's block hashes before it is handed out) and hashed
 * as it streams, so the end result is also checked against the member's own SHA-256.
 */
public final class MemberBytes {
    /** Bytes per read: a few verification blocks, so a large member streams in bounded memory. */
    private static final int CHUNK = 1 << 20;

    private final BlobReader reader;

    public MemberBytes(BlobReader reader) {
        this.reader = Objects.requireNonNull(reader, "reader");
    }

    /**
     * Writes member {@code path} of artifact {@code artifactName} to {@code out}.
     *
     * @param version how to name the version in errors, e.g. {@code vision/pets@3f9c1a2b4c5d}
     * @return the bytes written
     * @throws NoSuchArtifactException if the version has no such artifact
     * @throws NoSuchMemberException if the artifact has no such member (or it is a directory)
     * @throws MemberHashMismatchException if the bytes do not hash to the member's recorded SHA-256
     * @throws io.warpdata.store.StoreException if the bytes cannot be fetched or fail verification
     * @throws UncheckedIOException if {@code out} fails
     */
    public long copy(Manifest manifest, String version, String artifactName, String path, OutputStream out) {
        Artifact artifact = manifest.artifacts().get(artifactName);
        if (artifact == null) {
            throw new NoSuchArtifactException(version, artifactName, manifest.artifacts().keySet());
        }
        String member = MemberIndex.memberPath(path);
        MemberIndex index = MemberIndex.open(IndexBytes.of(reader.readAll(artifact.index())), "member index of " + artifactName,
                part -> IndexBytes.of(reader.readAll(part)));
        int i = index.find(member);
        if (i < 0) {
            throw new NoSuchMemberException(version, artifactName, member, index.isDirectory(member));
        }
        BlobRef shard = artifact.shards().get(index.shard(i));
        long offset = index.offset(i);
        long length = index.length(i);
        MessageDigest sha = sha256();
        byte[] buf = new byte[(int) Math.min(CHUNK, Math.max(1, length))];
        long done = 0;
        try {
            while (done < length) {
                int want = (int) Math.min(buf.length, length - done);
                int n = reader.read(shard, offset + done, buf, 0, want);
                if (n <= 0) {
                    throw new MemberHashMismatchException(version, artifactName, member,
                            "its shard ended after " + done + " of " + length + " bytes");
                }
                sha.update(buf, 0, n);
                out.write(buf, 0, n);
                done += n;
            }
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write member " + member, e);
        }
        byte[] digest = sha.digest();
        if (!index.hashEquals(i, digest, 0)) {
            throw new MemberHashMismatchException(version, artifactName, member, "its bytes hash to "
                    + HexFormat.of().formatHex(digest) + ", the index records " + index.hash(i).hex());
        }
        return length;
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }

    /** An artifact name the version does not have. */
    public static final class NoSuchArtifactException extends WarpException {
        public NoSuchArtifactException(String version, String artifact, java.util.Collection<String> artifacts) {
            super("Version " + version + " has no artifact '" + artifact + "'",
                    artifacts.isEmpty() ? "It has no artifacts; 'warpctl info' shows what it has."
                            : "Its artifacts are " + artifacts + "; pass one of them with --artifact.");
        }

        @Override
        public String type() {
            return "ArtifactNotFound";
        }
    }

    /** A member path the artifact does not have, or a directory of members. */
    public static final class NoSuchMemberException extends WarpException {
        public NoSuchMemberException(String version, String artifact, String member, boolean directory) {
            super(directory ? "'" + member + "' in artifact '" + artifact + "' of " + version + " is a directory"
                            : "Artifact '" + artifact + "' of " + version + " has no member '" + member + "'",
                    tensorFile(member)
                            ? "F.tensors/KEY.npy files are made by the mount from F.safetensors' header, not stored"
                            + " as members: read it from the mount, or pass --ref with the .safetensors file itself."
                            : "Pass the path of one file inside the artifact with --ref (as under /warp/<ws>/<name>/"
                            + artifact + "/ on a mount; 'ls' there lists them, except the .tensors/ folders the mount"
                            + " makes of .safetensors files).");
        }

        /** A path inside one of the folders the mount shows beside a .safetensors file. */
        private static boolean tensorFile(String member) {
            return ("/" + member).contains(".tensors/");
        }

        @Override
        public String type() {
            return "MemberNotFound";
        }
    }

    /** A member whose bytes do not match the hash recorded at publish time. */
    public static final class MemberHashMismatchException extends WarpException {
        public MemberHashMismatchException(String version, String artifact, String member, String why) {
            super("Member '" + member + "' of artifact '" + artifact + "' in " + version + " failed verification: " + why,
                    "Discard the output; run 'warpctl cache verify' on a node with warpd, and re-publish the artifact if"
                            + " the store's objects are damaged.");
        }

        @Override
        public String type() {
            return "MemberHashMismatch";
        }
    }
}
