package io.warpdata.daemon.publish;

import io.warpdata.manifest.ArtifactKind;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.ManifestValidationException;
import io.warpdata.manifest.MemberIndex;
import io.warpdata.manifest.Names;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarFile;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Indexes existing tar / WebDataset shards in place: the shards are uploaded byte for byte and
 * a member index records where each regular file's data lies. Directory entries are skipped;
 * links, devices, fifos, sparse entries and hostile names (absolute, '..', empty components)
 * are refused naming the tar and the entry; a member path appearing in two shards is refused.
 */
public final class TarShardIndexer {

    /**
     * Indexes {@code tars} in the given order (shard i of the artifact is {@code tars.get(i)}).
     *
     * @throws InvalidInputException naming the tar and entry that cannot be published
     */
    public PackedArtifact index(String artifact, List<Path> tars, PublishProgress progress) {
        if (tars.isEmpty()) {
            throw new InvalidInputException("Artifact '" + artifact + "' has no tar files",
                    "Check the glob given to --artifact " + artifact + "=...");
        }
        long totalBytes = 0;
        for (Path t : tars) {
            if (!Files.isRegularFile(t)) {
                throw new InvalidInputException("Artifact '" + artifact + "' tar " + t + " does not exist or is not a file",
                        "Check the path given to --artifact " + artifact + "=...");
            }
            try {
                totalBytes += Files.size(t);
            } catch (IOException e) {
                throw unreadable(artifact, t, e);
            }
        }
        progress.start("index " + artifact, totalBytes);
        try {
            MemberIndex.Builder index = new MemberIndex.Builder();
            Map<String, Path> seen = new HashMap<>();
            List<StagedBlob> shards = new ArrayList<>();
            long members = 0;
            long memberBytes = 0;
            byte[] buf = new byte[64 * 1024];
            for (int s = 0; s < tars.size(); s++) {
                Path tar = tars.get(s);
                try (TarFile tf = new TarFile(tar)) {
                    for (TarArchiveEntry e : tf.getEntries()) {
                        if (e.isDirectory()) {
                            continue;
                        }
                        String name = e.getName();
                        checkEntry(artifact, tar, e, name);
                        Path other = seen.putIfAbsent(name, tar);
                        if (other != null) {
                            throw new InvalidInputException("Artifact '" + artifact + "': member '" + name
                                    + "' appears in " + other + " and in " + tar,
                                    "Give each member path once across the artifact's tar files.");
                        }
                        MessageDigest d = BlobId.sha256();
                        try (InputStream in = tf.getInputStream(e)) {
                            for (int n; (n = in.read(buf)) > 0; ) {
                                d.update(buf, 0, n);
                            }
                        }
                        int mode = (e.getMode() & 0100) != 0 ? 0755 : 0644;
                        index.add(name, s, e.getDataOffset(), e.getSize(), mode, BlobId.fromDigest(d.digest()));
                        members++;
                        memberBytes += e.getSize();
                    }
                } catch (IOException e) {
                    throw new InvalidInputException("Artifact '" + artifact + "' tar " + tar + " cannot be read as a tar file: "
                            + e.getMessage(), "Check that the file is an uncompressed tar (WebDataset shards are).", e);
                }
                shards.add(StagedBlob.ofFile(tar));
                try {
                    progress.advance(Files.size(tar));
                } catch (IOException e) {
                    throw unreadable(artifact, tar, e);
                }
            }
            MemberIndex built = index.build();
            return new PackedArtifact(ArtifactKind.WEBDATASET_SHARDS, shards, built,
                    StagedBlob.ofBytes(built.serialize()), members, memberBytes);
        } finally {
            progress.finish();
        }
    }

    private static void checkEntry(String artifact, Path tar, TarArchiveEntry e, String name) {
        String kind = e.isSymbolicLink() ? "symlink" : e.isLink() ? "hard link"
                : e.isCharacterDevice() ? "character device" : e.isBlockDevice() ? "block device"
                : e.isFIFO() ? "fifo" : e.isSparse() ? "sparse file" : e.isFile() ? null : "special entry";
        if (kind != null) {
            throw new InvalidInputException("Artifact '" + artifact + "' tar " + tar + " entry '" + name + "' is a "
                    + kind + ", which cannot be published",
                    "Rebuild the tar with regular files only (e.g. tar --dereference).");
        }
        try {
            Names.requireMemberPath("member", name);
        } catch (ManifestValidationException ex) {
            throw new InvalidInputException("Artifact '" + artifact + "' tar " + tar + " entry '" + name
                    + "' has a hostile or invalid name: " + ex.getMessage(),
                    "Rebuild the tar with relative member names without '..' or empty components.");
        }
    }

    private static InvalidInputException unreadable(String artifact, Path p, IOException e) {
        return new InvalidInputException("Artifact '" + artifact + "' tar " + p + " cannot be read: " + e,
                "Make it readable by the publishing user.", e);
    }
}
