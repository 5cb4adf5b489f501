package io.warpdata.daemon.publish;

import io.warpdata.manifest.ArtifactKind;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.ManifestValidationException;
import io.warpdata.manifest.MemberIndex;
import io.warpdata.manifest.MemberIndexBuilder;
import io.warpdata.manifest.Names;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarFile;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Optional;
import java.util.Map;
import java.util.Objects;

/**
 * Packs a directory into deterministic tar shards plus a member index.
 *
 * <p>Determinism: members in {@link ComponentOrder}, headers normalised (mtime 0, uid/gid 0,
 * empty user and group names, mode 0644 or 0755), PAX headers for long names and big numbers,
 * 512-byte records so that no padding depends on anything but the members. The same directory
 * always gives the same shard bytes, hence the same blob ids, hence nothing to upload again.
 *
 * <p>Shard boundaries are content-defined: after each member the packer cuts with probability
 * {@code size / targetShardSize}, decided by a hash of (path, content hash) rather than by a
 * running byte count, so changing one member moves at most the boundaries next to it and the
 * other shards keep their bytes. Shards are at least a quarter and at most twice the target
 * (the bounds make a boundary depend on the previous one too, but the chain re-synchronises at
 * the next hash-chosen cut).
 *
 * <p>Everything is validated before the first byte is written: a symlink leaving the source
 * root, a device, fifo or socket, an unreadable file or a name that cannot be a member path
 * stops packing with an {@link InvalidInputException} naming the entry.
 */
public final class ArtifactPacker {
    /** Files from this size on get a stamp with their change time around their copy. */
    static final long STAMPED_COPY_BYTES = 1 << 20;
    /** Tar header record; also our block size, so that shard ends carry no extra padding. */
    private static final int RECORD = 512;
    private static final int S_IFMT = 0170000;

    private final Path stagingDir;
    private final long targetShardSize;

    public ArtifactPacker(Path stagingDir, long targetShardSize) {
        this.stagingDir = Objects.requireNonNull(stagingDir, "stagingDir");
        if (targetShardSize < 4096) {
            throw new IllegalArgumentException("shard size must be at least 4 KiB, was " + targetShardSize);
        }
        this.targetShardSize = targetShardSize;
    }

    /** One source file as it will be packed. */
    record SourceFile(String member, Path file, long size, int mode, FileStamp stamp) {
        /** This file with {@code stamp}, taken after its listing (with its change time). */
        SourceFile restamped(FileStamp stamp) {
            if (stamp.size() != size) {
                throw new InvalidInputException("File " + file + " changed size since the publish listed it ("
                        + size + " bytes then, " + stamp.size() + " now)", "Publish again once its writer has finished.");
            }
            return new SourceFile(member, file, size, mode, stamp);
        }

    }

    /**
     * Lists and validates the files under {@code root}, in component order, without packing.
     *
     * @throws InvalidInputException naming the first entry that cannot be packed
     */
    public List<SourceFile> scan(String artifact, Path root) {
        return scan(artifact, root, FileStamp.WALL);
    }

    /** {@link #scan(String, Path)} on {@code clock} (tests). */
    List<SourceFile> scan(String artifact, Path root, FileStamp.Clock clock) {
        if (!Files.isDirectory(root)) {
            throw new InvalidInputException("Artifact '" + artifact + "' source " + root + " is not a directory",
                    "Check the path given to --artifact " + artifact + "=...: a directory or tar files.");
        }
        Path realRoot;
        try {
            realRoot = root.toRealPath();
        } catch (IOException e) {
            throw unreadable(artifact, root, e);
        }
        long since = clock.nanos();
        List<SourceFile> walked = new ArrayList<>();
        walk(artifact, realRoot, realRoot, "", walked);
        // Files changed within a clock tick of their listing are stamped again once it has passed
        // (FileStamp.settle): a write in that tick would keep their time, and go unseen at the copy.
        // Stamped as the walk did (a link's target is the file), not following a link put there since.
        // Its identity is not compared (a FUSE source renumbers untouched files: FileStamp.sameAs);
        // another regular file put in its place meanwhile is a file the copy reads whole, as if
        // put there before the listing.
        List<SourceFile> out = new ArrayList<>(FileStamp.settle(walked, since, SourceFile::stamp, SourceFile::file, f -> {
            BasicFileAttributes now;
            try {
                now = Files.readAttributes(f.file(), BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            } catch (IOException e) {
                throw ShardWriter.unreadableSince(f, e);
            }
            if (!now.isRegularFile()) {
                throw new InvalidInputException("File " + f.file() + " was replaced by a link or something other than a"
                        + " file since the publish listed it", "Publish again once nothing changes in the folder.");
            }
            return f.restamped(FileStamp.of(now));
        }, clock));
        out.sort((a, b) -> ComponentOrder.INSTANCE.compare(a.member(), b.member()));
        return out;
    }

    /**
     * Refuses a name whose bytes are not valid UTF-8 (a Latin-1 {@code é} from an old archive):
     * Java shows such bytes as U+FFFD (or {@code ?}), and the member would silently be named by
     * that replacement rather than by the file's name. A name that survives the round trip (it
     * names the same file again) is what it says, U+FFFD included.
     */
    private static void requireDecodableName(String artifact, Path dir, Path child, String name) {
        if ((name.indexOf('\uFFFD') >= 0 || name.indexOf('?') >= 0)
                && !Files.exists(dir.resolve(name), LinkOption.NOFOLLOW_LINKS)) {
            throw new InvalidInputException("Artifact '" + artifact + "' entry " + shown(child) + " has a name that is not"
                    + " valid UTF-8 (shown here with its undecodable bytes replaced): member paths are UTF-8",
                    "Rename it to UTF-8 (e.g. convmv -f latin1 -t utf8 --notest -r " + dir
                            + ") and publish again; nothing was published.");
        }
    }

    /**
     * Every {@code .safetensors} file must be whole: the mount shows each one's tensors as
     * {@code F.tensors/KEY.npy}, made from its header, and trusts what publish checked. A file
     * cut short (a copy that stopped) or whose header lies is refused here, naming it, as it is
     * in a safetensors dataset; before, only a folder with a {@code dataset_manifest.json} was
     * checked, and the mount failed later saying the store held something else.
     */
    private static void checkSafetensors(List<SourceFile> files) {
        for (SourceFile f : files) {
            if (f.member().endsWith(SafetensorsDataset.SUFFIX) && Files.isRegularFile(f.file(), LinkOption.NOFOLLOW_LINKS)) {
                SafetensorsDataset.header(f.file(), f.file().toString(), f.size());
            }
        }
    }

    private void walk(String artifact, Path realRoot, Path dir, String prefix, List<SourceFile> out) {
        List<Path> children = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            ds.forEach(children::add);
        } catch (IOException e) {
            throw unreadable(artifact, dir, e);
        }
        for (Path child : children) {
            String name = child.getFileName().toString();
            requireDecodableName(artifact, dir, child, name);
            String member = prefix + name;
            try {
                Names.requireMemberPath("member", member);
            } catch (ManifestValidationException e) {
                throw new InvalidInputException("Artifact '" + artifact + "' entry " + shown(child)
                        + " cannot be a member path: " + TarShardIndexer.printable(e.getMessage()),
                        "Rename the entry and publish again.");
            }
            PosixFileAttributes attrs;
            try {
                attrs = Files.readAttributes(child, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            } catch (IOException e) {
                throw unreadable(artifact, child, e);
            }
            if (attrs.isDirectory()) {
                walk(artifact, realRoot, child, member + "/", out);
            } else if (attrs.isRegularFile()) {
                out.add(regular(artifact, member, child, attrs));
            } else if (attrs.isSymbolicLink()) {
                out.add(symlink(artifact, realRoot, member, child));
            } else {
                throw new InvalidInputException("Artifact '" + artifact + "' entry " + shown(child) + " is a "
                        + specialKind(child) + ", which cannot be published",
                        "Remove it from the source directory (only regular files, directories and symlinks"
                                + " to files inside the directory can be published).");
            }
        }
    }

    private SourceFile regular(String artifact, String member, Path file, PosixFileAttributes attrs) {
        if (!Files.isReadable(file)) {
            throw unreadable(artifact, file, null);
        }
        boolean exec = attrs.permissions().contains(PosixFilePermission.OWNER_EXECUTE);
        return new SourceFile(member, file, attrs.size(), exec ? 0755 : 0644, FileStamp.of(attrs));
    }

    private SourceFile symlink(String artifact, Path realRoot, String member, Path link) {
        Path target;
        try {
            target = link.toRealPath();
        } catch (IOException e) {
            boolean loop = String.valueOf(e.getMessage()).contains("Too many levels of symbolic links");
            throw new InvalidInputException("Artifact '" + artifact + "' entry " + shown(link) + " is "
                    + (loop ? "a symlink loop (it leads back to itself)" : "a broken symlink"),
                    "Remove the symlink or make it point to a file inside the source directory.", e);
        }
        if (!target.startsWith(realRoot)) {
            throw new InvalidInputException("Artifact '" + artifact + "' entry " + shown(link)
                    + " is a symlink leaving the source directory (to " + shown(target) + ")",
                    "Copy the file into the source directory, or remove the symlink.");
        }
        try {
            PosixFileAttributes attrs = Files.readAttributes(target, PosixFileAttributes.class);
            if (!attrs.isRegularFile()) {
                throw new InvalidInputException("Artifact '" + artifact + "' entry " + shown(link)
                        + " is a symlink to " + (attrs.isDirectory() ? "a folder" : "something other than a regular file")
                        + " (" + shown(target) + "): symlinks are followed to files only",
                        "Replace the symlink with what it points to (a copy of the file or folder), or remove it.");
            }
            return regular(artifact, member, target, attrs);
        } catch (IOException e) {
            throw unreadable(artifact, link, e);
        }
    }

    private static String specialKind(Path p) {
        try {
            int mode = (Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS);
            return switch (mode & S_IFMT) {
                case 0010000 -> "fifo";
                case 0020000 -> "character device";
                case 0060000 -> "block device";
                case 0140000 -> "socket";
                default -> "special file";
            };
        } catch (IOException | UnsupportedOperationException e) {
            return "special file";
        }
    }

    private static InvalidInputException unreadable(String artifact, Path p, IOException e) {
        return new InvalidInputException("Artifact '" + artifact + "' entry " + shown(p) + " cannot be read"
                + (e == null ? "" : ": " + e), "Make it readable by the publishing user, or remove it.", e);
    }

    /**
     * Scans, validates and packs {@code root} into shards under the staging directory.
     *
     * @throws InvalidInputException naming the entry, before any shard is written
     */
    public PackedArtifact pack(String artifact, Path root, PublishProgress progress) {
        return pack(artifact, root, list(artifact, root, progress), progress);
    }

    /** The files under {@code root}, each with what it was when listed ({@link FileStamp}), saying so as it goes. */
    List<SourceFile> list(String artifact, Path root, PublishProgress progress) {
        // Listing a million files takes tens of seconds before the first byte is packed (audit 18).
        progress.note("scan " + artifact + ": listing and checking the files under " + root);
        return scan(artifact, root);
    }

    /**
     * Packs {@code files}, listed by {@link #list} before the publish's format checks read them:
     * each is checked against its listing after its copy, so the checks' facts and the packed
     * bytes are of one file (the review: a warehouse's checksums were checked before the listing).
     */
    PackedArtifact pack(String artifact, Path root, List<SourceFile> files, PublishProgress progress) {
        checkSafetensors(files);
        long total = files.stream().mapToLong(SourceFile::size).sum();
        progress.note("scan " + artifact + ": " + files.size() + " files, " + total + " bytes");
        if (files.isEmpty()) {
            throw Publisher.holdsNoFile(artifact, List.of(root)); // not "pack a (0 bytes)" first (audit 21)
        }
        progress.start("pack " + artifact, total);
        try {
            Files.createDirectories(stagingDir);
            MemberIndexBuilder index = new MemberIndexBuilder();
            List<StagedBlob> shards = writeShards(artifact, files, index, progress);
            MemberIndex members = index.build();
            return new PackedArtifact(ArtifactKind.TAR_SHARDS, shards, members,
                    StagedIndex.of(members, StagedIndex.PART_MEMBERS, Optional.of(stagingDir.resolve("index"))),
                    files.size(), total);
        } catch (IOException e) {
            throw StagingFullException.of("packing artifact '" + artifact + "' into " + stagingDir, stagingDir, e);
        } finally {
            progress.finish();
        }
    }

    /** Writes the members into shards, cutting at content-defined boundaries. */
    private List<StagedBlob> writeShards(String artifact, List<SourceFile> files, MemberIndexBuilder index,
                                         PublishProgress progress) throws IOException {
        long min = targetShardSize / 4;
        long max = targetShardSize * 2;
        List<StagedBlob> shards = new ArrayList<>();
        ShardWriter writer = null;
        try {
            for (SourceFile f : files) {
                long entryBytes = tarBytes(f);
                if (writer != null && writer.bytes + entryBytes > max) {
                    shards.add(writer.close(index, shards.size()));
                    writer = null;
                }
                if (writer == null) {
                    writer = new ShardWriter(stagingDir.resolve(String.format("%s-%05d.tar", artifact, shards.size())));
                }
                byte[] hash = writer.add(f, progress);
                if (writer.bytes >= min && cutFraction(f.member(), hash) < (double) entryBytes / targetShardSize) {
                    shards.add(writer.close(index, shards.size()));
                    writer = null;
                }
            }
            if (writer != null) {
                shards.add(writer.close(index, shards.size()));
                writer = null;
            }
            return shards;
        } finally {
            if (writer != null) {
                writer.abort();
            }
        }
    }

    /** Bytes a member takes in a shard, for the size bounds (an estimate for long PAX names). */
    private static long tarBytes(SourceFile f) {
        long header = f.member().getBytes(StandardCharsets.UTF_8).length > 100 ? 3 * RECORD : RECORD;
        return header + (f.size() + RECORD - 1) / RECORD * RECORD;
    }

    /**
     * A uniform number in [0, 1) from (path, content hash): whether to cut after a member
     * depends on that member alone, not on where the previous shard began.
     */
    static double cutFraction(String member, byte[] contentHash) {
        MessageDigest d = BlobId.sha256();
        d.update(member.getBytes(StandardCharsets.UTF_8));
        d.update((byte) 0);
        d.update(contentHash);
        long v = ByteBuffer.wrap(d.digest()).getLong() >>> 11;
        return v / (double) (1L << 53);
    }

    /** One shard being written. */
    private static final class ShardWriter {
        private final Path file;
        private final TarArchiveOutputStream tar;
        private final List<SourceFile> members = new ArrayList<>();
        private final List<BlobId> hashes = new ArrayList<>();
        private final byte[] buf = new byte[64 * 1024];
        long bytes;

        ShardWriter(Path file) throws IOException {
            this.file = file;
            OutputStream os = new BufferedOutputStream(Files.newOutputStream(file), 1 << 16);
            this.tar = new TarArchiveOutputStream(os, RECORD, StandardCharsets.UTF_8.name());
            tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
            tar.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
            tar.setAddPaxHeadersForNonAsciiNames(true);
        }

        /** Appends one member; returns its SHA-256. */
        byte[] add(SourceFile f, PublishProgress progress) throws IOException {
            TarArchiveEntry e = new TarArchiveEntry(f.member());
            e.setSize(f.size());
            e.setMode(TarArchiveEntry.DEFAULT_FILE_MODE & ~0777 | f.mode());
            e.setModTime(0L);
            e.setUserId(0);
            e.setGroupId(0);
            e.setUserName("");
            e.setGroupName("");
            tar.putArchiveEntry(e);
            MessageDigest d = BlobId.sha256();
            long copied = 0;
            // A file big enough for a writer to reach while it is copied is stamped with its
            // change time too: rewritten in place with its mtime put back (rsync --inplace -t), it
            // became a member that never was a file (audit 47). Small files' copies take
            // microseconds, and cost no second stat. A listing stamp with its change time (a
            // checked format's) already is one.
            FileStamp during = null;
            if (f.size() >= STAMPED_COPY_BYTES && f.stamp().changed() < 0) {
                try {
                    during = FileStamp.settled(f.file());
                } catch (IOException gone) {
                    throw unreadableSince(f, gone);
                }
            }
            try (InputStream in = source(f)) {
                for (int n; (n = read(f, in, buf)) > 0; ) {
                    if (copied + n > f.size()) {
                        throw changed(f);
                    }
                    tar.write(buf, 0, n);
                    d.update(buf, 0, n);
                    copied += n;
                    progress.advance(n);
                }
            }
            if (copied != f.size()) {
                throw changed(f);
            }
            // The same size is not the same bytes: rewritten in place while it was copied, the
            // member was its old start and its new end, bytes that never were a file (audit 46).
            f.stamp().requireSame(f.file(), "while it was packed (since the publish listed it)");
            if (during != null) {
                during.requireSame(f.file(), "while it was packed");
            }
            tar.closeArchiveEntry();
            byte[] hash = d.digest();
            members.add(f);
            hashes.add(BlobId.fromDigest(hash));
            bytes += tarBytes(f);
            return hash;
        }

        /**
         * The source file's bytes: what fails there is the input's (gone since the folder was
         * listed, a source file system's EIO), said naming it; a failure to write the shard is the
         * staging folder's (the review: both were "packing artifact 'x' into STAGING", an
         * unexpected failure).
         */
        private static InputStream source(SourceFile f) {
            try {
                return Files.newInputStream(f.file());
            } catch (IOException e) {
                throw unreadableSince(f, e);
            }
        }

        private static int read(SourceFile f, InputStream in, byte[] buf) {
            try {
                return in.read(buf);
            } catch (IOException e) {
                throw unreadableSince(f, e);
            }
        }

        static InvalidInputException unreadableSince(SourceFile f, IOException e) {
            return new InvalidInputException("File " + f.file() + " can no longer be read since the publish listed its folder ("
                    + e + ")", "Publish again once nothing moves or deletes files in the folder, and it is readable.", e);
        }

        /** Closes the file after a failure; the staging directory is removed by the caller. */
        void abort() {
            try {
                tar.close();
            } catch (IOException | RuntimeException e) {
                // Already failing; the first error is the one to report.
            }
        }

        /** Finishes the tar, records its members' data offsets in the index, stages the blob. */
        StagedBlob close(MemberIndexBuilder index, int shard) throws IOException {
            tar.finish();
            tar.close();
            Map<String, Long> offsets = dataOffsets(file);
            for (int i = 0; i < members.size(); i++) {
                SourceFile f = members.get(i);
                index.add(f.member(), shard, offsets.get(f.member()), f.size(), f.mode(), hashes.get(i));
            }
            return StagedBlob.ofStagedFile(file);
        }
    }

    private static InvalidInputException changed(SourceFile f) {
        return new InvalidInputException("File " + f.file() + " changed size while it was being packed",
                "Do not modify the source while publishing; publish again when it is stable.");
    }

    /** Data offsets of the regular-file members of a tar, as the tar reader sees them. */
    static Map<String, Long> dataOffsets(Path tarFile) throws IOException {
        Map<String, Long> out = new HashMap<>();
        try (TarFile tf = new TarFile(tarFile)) {
            for (TarArchiveEntry e : tf.getEntries()) {
                out.put(e.getName(), e.getDataOffset());
            }
        }
        return out;
    }

    /** A path in a message: its control characters as \xNN, never raw (a name can hold any byte but '/'). */
    private static String shown(Path p) {
        return TarShardIndexer.printable(String.valueOf(p));
    }
}
