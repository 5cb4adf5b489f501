package io.warpdata.daemon.publish;

import io.warpdata.manifest.ArtifactKind;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.ManifestValidationException;
import io.warpdata.manifest.MemberIndex;
import io.warpdata.manifest.MemberIndexBuilder;
import io.warpdata.manifest.Names;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;
import org.apache.commons.compress.archivers.tar.TarFile;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
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
 *
 * <p>A file is refused unless it is a whole tar: at least one 512-byte header with a valid
 * checksum at byte 0, at least one member, every member's data (padded to 512 bytes) inside the
 * file, and after the last member only zeros, at least one 512-byte end-of-archive record. A
 * tar reader stops quietly at the first header it cannot read, so without these checks a small
 * non-tar file (text, a PNG, zeros) published as an empty artifact and a tar cut inside its
 * second header published its first member only.
 */
public final class TarShardIndexer {

    /**
     * Indexes {@code tars}; the artifact's shards are the tars in the order of their first members
     * as the mount lists them (component order), which is the given order when names follow it.
     * A scan in listing order goes on from a shard into the next one, and read-ahead reads that
     * one ahead (the read path's {@code BlobMember.next}); tars given in another order (shards
     * named other than their members, a glob's order) had it read the wrong shard ahead (audit
     * 49's ten tars, the first 48 MB in listing order: 97.9 MB fetched in 32 GETs, against 73.2 MB
     * in 22 in that order; docs/cache.md, "Read-ahead").
     *
     * @throws InvalidInputException naming the tar and entry that cannot be published
     */
    public PackedArtifact index(String artifact, List<Path> tars, PublishProgress progress) {
        return index(artifact, tars, progress, java.util.Optional.empty());
    }

    /** As above, staging the parts of a parted member index as files under {@code partsDir}. */
    public PackedArtifact index(String artifact, List<Path> tars, PublishProgress progress,
                                java.util.Optional<Path> partsDir) {
        if (tars.isEmpty()) {
            throw new InvalidInputException("Artifact '" + artifact + "' has no tar files",
                    "Check the glob given to --artifact " + artifact + "=...");
        }
        long totalBytes = 0;
        Map<Path, Path> given = new HashMap<>();
        for (Path t : tars) {
            if (!Files.isRegularFile(t)) {
                throw new InvalidInputException("Artifact '" + artifact + "' tar " + t + " does not exist or is not a file",
                        "Check the path given to --artifact " + artifact + "=...");
            }
            // One file given twice (the same --artifact twice, two globs that match it) is not a
            // tar holding each member twice (audit 32).
            Path before;
            try {
                before = given.putIfAbsent(t.toRealPath(), t);
            } catch (IOException e) {
                throw unreadable(artifact, t, e);
            }
            if (before != null) {
                throw new InvalidInputException("Artifact '" + artifact + "' is given the tar file " + t + " twice"
                        + (before.equals(t) ? "" : " (also as " + before + ")"),
                        "Give each tar file once: was --artifact " + artifact + "=... given more than once, or do two"
                                + " of its globs match the same file?");
            }
            try {
                totalBytes += Files.size(t);
            } catch (IOException e) {
                throw unreadable(artifact, t, e);
            }
        }
        progress.start("index " + artifact, totalBytes);
        try {
            MemberIndexBuilder index = new MemberIndexBuilder();
            Map<String, Path> seen = new HashMap<>();
            List<StagedBlob> shards = new ArrayList<>();
            long members = 0;
            long memberBytes = 0;
            byte[] buf = new byte[64 * 1024];
            byte[][] firstMember = new byte[tars.size()][];
            for (int s = 0; s < tars.size(); s++) {
                Path asGiven = tars.get(s);
                // Indexed, then hashed and uploaded: one file throughout (audit 46: rewritten
                // while indexed, the index held the old members' hashes, the store the new bytes),
                // read where a link leads now, once (audit 47: a link moved away and back between
                // two reads went unseen). Its name stays the one given.
                Path tar = CommittedDataset.Part.of(asGiven, "").file();
                FileStamp stamp = FileStamp.read(tar);
                long length = checkHeaderAtStart(artifact, tar);
                try (TarFile tf = new TarFile(tar, StandardCharsets.UTF_8.name())) {
                    List<TarArchiveEntry> entries = tf.getEntries();
                    checkWhole(artifact, tar, length, entries);
                    List<String> rawNames = entries.stream().anyMatch(e -> mayHideBadBytes(e.getName()))
                            ? rawNames(tar, entries.size()) : null;
                    for (int i = 0; i < entries.size(); i++) {
                        TarArchiveEntry e = entries.get(i);
                        checkName(artifact, tar, e.getName(), rawNames == null ? null : rawNames.get(i));
                        if (e.isDirectory()) {
                            continue;
                        }
                        String name = memberName(e.getName());
                        checkEntry(artifact, tar, e, name);
                        Path other = seen.putIfAbsent(name, tar);
                        if (other != null) {
                            throw new InvalidInputException("Artifact '" + artifact + "': member '" + printable(name)
                                    + (other.equals(tar) ? "' appears twice in " + tar
                                    + " (tar readers disagree on which copy is meant)"
                                    : "' appears in " + other + " and in " + tar),
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
                        byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
                        if (firstMember[s] == null || MemberIndex.compare(utf8, firstMember[s]) < 0) {
                            firstMember[s] = utf8;
                        }
                        members++;
                        memberBytes += e.getSize();
                    }
                } catch (IOException e) {
                    // Changed while indexed reads as damage: the change is the cause to name (audit 47).
                    stamp.requireSame(tar, "while it was indexed");
                    refuseSparseByPax(artifact, tar);
                    refuseGlobalHeaderAlone(artifact, tar, length);
                    InvalidInputException where = whereItBreaks(artifact, tar, length);
                    // Its first header is a tar header (checkHeaderAtStart): a reader stopping further on is
                    // damage or a cut, e.g. inside a long name or PAX record (audit 32), not "no tar".
                    throw where != null ? where : truncated(artifact, tar, "the tar reader stopped inside it ("
                            + e.getMessage() + ")", e);
                } catch (InvalidInputException e) {
                    stamp.requireSame(tar, "while it was indexed");
                    // A PAX sparse file (tar --format=posix -S) misleads the reader into damage it reports.
                    refuseSparseByPax(artifact, tar);
                    throw e;
                }
                shards.add(StagedBlob.ofFile(tar, stamp));
                try {
                    progress.advance(Files.size(tar));
                } catch (IOException e) {
                    throw unreadable(artifact, tar, e);
                }
            }
            List<Path> inOrder = inListingOrder(tars, firstMember, shards, index);
            MemberIndex built;
            try {
                built = index.build();
            } catch (ManifestValidationException e) {
                // The one thing left to find once every name and duplicate was checked: a member
                // that is also a folder of others ('a' and 'a/b'), perhaps in two different tars.
                throw new InvalidInputException("Artifact '" + artifact + "' (" + (tars.size() == 1 ? "tar " + tars.get(0)
                        : tars.size() + " tar files, " + tars.get(0).getParent()) + "): " + e.getMessage(),
                        "A path cannot be both a file and the folder of other files: rename one of the two members"
                                + " (rebuild the tar) and publish again.", e);
            }
            index = null; // its arrays go before the parts are written
            PackedArtifact packed = new PackedArtifact(ArtifactKind.WEBDATASET_SHARDS, shards, built,
                    StagedIndex.of(built, StagedIndex.PART_MEMBERS, partsDir), members, memberBytes,
                    new java.util.TreeMap<>(), inOrder.stream().map(t -> t.getFileName().toString()).toList(), "");
            String leftOut = shardNamesLeftOut(artifact, inOrder);
            if (leftOut != null) {
                return packed.withoutShardNames(leftOut); // said in the result's notes, once
            }
            return packed;
        } finally {
            progress.finish();
        }
    }

    /**
     * Puts the shards (and the tars they are) in the order of their first members, stable for ties
     * and for tars without a file member (last): {@code shards} is reordered and the members in
     * {@code index} renumbered. Returns the tars in that order.
     */
    private static List<Path> inListingOrder(List<Path> tars, byte[][] firstMember, List<StagedBlob> shards,
                                             MemberIndexBuilder index) {
        Integer[] order = new Integer[tars.size()];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        java.util.Arrays.sort(order, (a, b) -> firstMember[a] == null || firstMember[b] == null
                ? Boolean.compare(firstMember[a] == null, firstMember[b] == null)
                : MemberIndex.compare(firstMember[a], firstMember[b]));
        int[] newShard = new int[order.length];
        List<Path> inOrder = new ArrayList<>(order.length);
        List<StagedBlob> reordered = new ArrayList<>(order.length);
        for (int k = 0; k < order.length; k++) {
            newShard[order[k]] = k;
            inOrder.add(tars.get(order[k]));
            reordered.add(shards.get(order[k]));
        }
        shards.clear();
        shards.addAll(reordered);
        index.renumberShards(newShard);
        return inOrder;
    }

    /**
     * Why the tars cannot be shown under their file names ({@code ARTIFACT.tars/NAME}), or null
     * when they can: two tars share a name (from different folders), or a name is not one a file
     * in the mount may have. The members are published all the same.
     */
    static String shardNamesLeftOut(String artifact, List<Path> tars) {
        Map<String, Path> seen = new HashMap<>();
        for (Path t : tars) {
            String name = t.getFileName().toString();
            String why = null;
            try {
                io.warpdata.manifest.Names.requireFileName("shard", name);
            } catch (ManifestValidationException e) {
                why = "'" + printable(name) + "' is not a file name the mount shows (" + e.getMessage() + ")";
            }
            if (why == null && (name.indexOf('\uFFFD') >= 0 || !Files.exists(t.resolveSibling(name)))) {
                // Bytes this JVM's file-name charset cannot decode (a Latin-1 name, a C locale): the
                // name recorded would not be the one published (review).
                why = "'" + printable(name) + "' is not valid UTF-8 here, so it cannot be recorded as it is";
            }
            Path other = seen.putIfAbsent(name, t);
            if (why == null && other != null) {
                why = other + " and " + t + " share a name";
            }
            if (why != null) {
                return notShown(artifact, why);
            }
        }
        return null;
    }

    /** The note of an artifact whose tars are left out of {@code ARTIFACT.tars/}, saying {@code why}. */
    static String notShown(String artifact, String why) {
        return "artifact " + artifact + ": its tar files are not shown as files in the mount (" + artifact
                + io.warpdata.manifest.Artifact.SHARD_FOLDER_SUFFIX + "/): " + why + "; its members are, in "
                + artifact + "/";
    }

    /** A tar record: headers, data padding and the end-of-archive marker come in these. */
    private static final int RECORD = TarHeaders.RECORD;

    /**
     * Refuses a file that does not begin with a tar header: shorter than one record, a first
     * record of zeros (no members), or a first record whose checksum does not match.
     *
     * @return the file's length
     */
    private static long checkHeaderAtStart(String artifact, Path tar) {
        byte[] header = new byte[RECORD];
        long length;
        try (FileChannel ch = FileChannel.open(tar)) {
            length = ch.size();
            ByteBuffer b = ByteBuffer.wrap(header);
            while (b.hasRemaining() && ch.read(b, b.position()) > 0) {
                // fill the first record
            }
        } catch (IOException e) {
            throw unreadable(artifact, tar, e);
        }
        String compressed = compression(header);
        if (compressed != null) {
            throw new InvalidInputException("Artifact '" + artifact + "' file " + tar + " is a " + compressed
                    + "-compressed file, not a tar: Warp reads members of plain tars in place, by their offsets",
                    "Decompress it first (e.g. " + (compressed.equals("gzip") ? "gunzip -k" : compressed.equals("bzip2")
                            ? "bunzip2 -k" : compressed.equals("xz") ? "unxz -k" : "unzstd") + " " + tar
                            + ") and give the .tar; Warp's own shards and the store compress nothing either.");
        }
        if (length < RECORD) {
            throw notATar(artifact, tar, "it has " + length + " byte(s), fewer than one tar header (512 bytes)");
        }
        if (TarHeaders.allZero(header, 0, RECORD)) {
            throw empty(artifact, tar, "its first 512 bytes are zeros, so it holds no member (an empty tar, or"
                    + " not a tar)");
        }
        if (!TarHeaders.checksumMatches(header)) {
            throw notATar(artifact, tar, "there is no tar header at byte 0 (the header checksum does not match)");
        }
        return length;
    }

    /** The compressor whose magic bytes {@code header} starts with (a .tar.gz given as a tar), or null. */
    private static String compression(byte[] h) {
        if ((h[0] & 0xff) == 0x1f && (h[1] & 0xff) == 0x8b) {
            return "gzip";
        }
        if (h[0] == 'B' && h[1] == 'Z' && h[2] == 'h') {
            return "bzip2";
        }
        if ((h[0] & 0xff) == 0xfd && h[1] == '7' && h[2] == 'z' && h[3] == 'X' && h[4] == 'Z' && h[5] == 0) {
            return "xz";
        }
        if ((h[0] & 0xff) == 0x28 && (h[1] & 0xff) == 0xb5 && (h[2] & 0xff) == 0x2f && (h[3] & 0xff) == 0xfd) {
            return "zstd";
        }
        return null;
    }

    /**
     * Refuses a tar with no member, one whose members end past its length, or one whose last
     * member is followed by anything but zeros ending in a whole end-of-archive record: a tar
     * cut short, or damaged inside a header the reader stopped at. Then, on the same open file,
     * each member's own header record ({@link #checkHeaders}).
     */
    private static void checkWhole(String artifact, Path tar, long length, List<TarArchiveEntry> entries)
            throws IOException {
        if (entries.isEmpty()) {
            refuseGlobalHeaderAlone(artifact, tar, length);
            // Its first record is a tar header (checkHeaderAtStart), yet no entry came of it: the file
            // ends inside that header's long name or PAX records (audit 32), or after it.
            throw truncated(artifact, tar, "its first header is not followed by an entry the tar reader can read"
                    + " (the file ends inside a long name's or PAX header's records, or after them)");
        }
        long end = 0;
        String last = null;
        for (TarArchiveEntry e : entries) {
            if (e.getLinkFlag() == LF_GNU_DUMPDIR) {
                throw dumpDir(artifact, tar, e.getName());
            }
            if (e.isDirectory() && e.getSize() > 0 && e.getLinkFlag() != TarConstants.LF_DIR) {
                // Before anything else: the reader skipped its data and read on inside it.
                throw fileNamedLikeAFolder(artifact, tar, e.getName(), e.getSize());
            }
            long dataEnd = e.getDataOffset() + (e.isFile() ? e.getSize() : 0);
            if (dataEnd > length) {
                throw truncated(artifact, tar, "member '" + e.getName() + "' ends at byte " + dataEnd
                        + ", past the end of the file (" + length + " bytes)");
            }
            long padded = e.getDataOffset() + (e.isFile() ? (e.getSize() + RECORD - 1) / RECORD * RECORD : 0);
            if (padded >= end) {
                end = padded;
                last = e.getName();
            }
        }
        if (end > length) {
            throw truncated(artifact, tar, "the padding of member '" + last + "' ends at byte " + end
                    + ", past the end of the file (" + length + " bytes)");
        }
        try (FileChannel ch = FileChannel.open(tar)) {
            ByteBuffer b = ByteBuffer.allocate(64 * 1024);
            for (long at = end; at < length; ) {
                b.clear();
                int n = ch.read(b, at);
                if (n <= 0) {
                    break;
                }
                for (int i = 0; i < n; i++) {
                    if (b.get(i) == 0) {
                        continue;
                    }
                    if (at + i - end >= 2 * RECORD) {
                        // After a whole end-of-archive marker: a complete tar with more behind it (another
                        // tar appended, or other bytes), which GNU tar and Python read up to the marker (audit 32).
                        throw new InvalidInputException("Artifact '" + artifact + "' tar " + tar + " holds "
                                + (length - (at + i)) + " more byte(s) from byte " + (at + i) + ", after its"
                                + " end-of-archive marker (another tar appended to it, or other data): tar readers"
                                + " stop at the marker, so what follows would be lost",
                                "Publish each tar as a file of its own (cat a.tar b.tar makes such a file: give"
                                        + " a.tar and b.tar), or cut the file at the marker: truncate -s " + (end + 2 * RECORD)
                                        + " " + tar + " (after checking that nothing in the rest is wanted).");
                    }
                    throw truncated(artifact, tar, "byte " + (at + i) + ", after the last member '" + last
                            + "', is neither a header the tar reader accepts nor part of the end-of-archive"
                            + " marker (zeros)");
                }
                at += n;
            }
            checkHeaders(artifact, tar, entries, ch);
        }
        if (length - end < RECORD) {
            throw truncated(artifact, tar, (length == end ? "it ends right after its last member '" + last + "'"
                    : "it ends " + (length - end) + " byte(s) after its last member '" + last + "'")
                    + ", without the end-of-archive marker (512-byte records of zeros)");
        }
    }

    /**
     * Why the indexing reader refused a tar, read again entry by entry: a regular file named like
     * a folder (as a PAX path or GNU long name; a plain header's is caught before), or the member
     * whose data runs past the end of the file; null when the damage is something else.
     */
    private static InvalidInputException whereItBreaks(String artifact, Path tar, long length) {
        try (TarArchiveInputStream in = new TarArchiveInputStream(new BufferedInputStream(Files.newInputStream(tar)))) {
            for (TarArchiveEntry e; (e = in.getNextEntry()) != null; ) {
                if (e.getLinkFlag() == LF_GNU_DUMPDIR) {
                    return dumpDir(artifact, tar, e.getName());
                }
                if (e.getName().endsWith("/") && e.getSize() > 0 && e.getLinkFlag() != TarConstants.LF_DIR) {
                    return fileNamedLikeAFolder(artifact, tar, e.getName(), e.getSize());
                }
                long at = in.getBytesRead();
                if (at + e.getSize() > length) {
                    return truncated(artifact, tar, "member '" + printable(e.getName()) + "' (" + e.getSize()
                            + " bytes from byte " + at + ") ends at byte " + (at + e.getSize())
                            + ", past the end of the file (" + length + " bytes)");
                }
            }
        } catch (IOException | RuntimeException e) {
            return null;
        }
        return null;
    }

    /**
     * Refuses a member whose own header record (the 512 bytes before its data) fails its
     * checksum: the reader took a damaged record, or stray bytes after the last member, for a
     * header (a record of text published a 0-byte member named after the text).
     */
    private static void checkHeaders(String artifact, Path tar, List<TarArchiveEntry> entries, FileChannel ch)
            throws IOException {
        byte[] header = new byte[RECORD];
        for (TarArchiveEntry e : entries) {
            if (e.isSparse()) {
                continue; // its sparse records follow the header; refused as a sparse file anyway
            }
            long at = e.getDataOffset() - RECORD;
            ByteBuffer b = ByteBuffer.wrap(header);
            while (b.hasRemaining() && at >= 0 && ch.read(b, at + b.position()) > 0) {
                // fill the record
            }
            if (at < 0 || b.hasRemaining() || !TarHeaders.checksumMatches(header)) {
                throw truncated(artifact, tar, "the header of entry '" + printable(e.getName()) + "' at byte "
                        + Math.max(at, 0) + " fails its checksum (GNU tar says 'Skipping to next header' here)");
            }
        }
    }

    /** Whether a decoded name may stand for bytes that are not UTF-8: only then is the tar read again. */
    private static boolean mayHideBadBytes(String name) {
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == '?' || c > 0x7F) {
                return true;
            }
        }
        return false;
    }

    /**
     * The entries' names as their bytes stand in the tar, each byte one char (ISO-8859-1), from a
     * second read of the headers; null if that read disagrees on the entries (the first read's
     * checks then stand alone). The reader decodes a ustar or GNU name that is not UTF-8 with '?'
     * for each bad byte, so only the bytes tell {@code caf\xe9} from a real {@code caf?}.
     */
    private static List<String> rawNames(Path tar, int count) {
        try (TarFile raw = new TarFile(tar, StandardCharsets.ISO_8859_1.name())) {
            List<TarArchiveEntry> entries = raw.getEntries();
            if (entries.size() != count) {
                return null;
            }
            List<String> names = new ArrayList<>(count);
            for (TarArchiveEntry e : entries) {
                names.add(e.getName());
            }
            return names;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * Refuses a name that is not UTF-8. {@code raw} is the name read byte for byte (null: not
     * known); a name from a PAX header is UTF-8 by definition and reads the same both ways, and
     * one whose PAX bytes were not UTF-8 holds U+FFFD.
     */
    private static void checkName(String artifact, Path tar, String name, String raw) {
        boolean bad = name.indexOf('\uFFFD') >= 0;
        if (!bad && raw != null && !raw.equals(name)) {
            try {
                StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(raw.getBytes(StandardCharsets.ISO_8859_1)));
            } catch (java.nio.charset.CharacterCodingException notUtf8) {
                bad = true;
            }
        }
        if (bad) {
            String shown = raw != null ? printable(raw) : printable(name);
            throw new InvalidInputException("Artifact '" + artifact + "' tar " + tar + " entry '" + shown
                    + "' has a name that is not valid UTF-8", "Rename it to UTF-8 (a Latin-1 \u00e9 would"
                    + " otherwise become U+FFFD or '?'), e.g. with convmv, then rebuild the tar.");
        }
    }

    /** A name fit for a message: control characters (C0 and C1: a terminal's escapes) as \xNN ({@link io.warpdata.manifest.Printable}). */
    static String printable(String name) {
        return io.warpdata.manifest.Printable.of(name);
    }

    private static InvalidInputException fileNamedLikeAFolder(String artifact, Path tar, String name, long size) {
        return new InvalidInputException("Artifact '" + artifact + "' tar " + tar + " entry '" + printable(name)
                + "' is a regular file (" + size + " bytes) whose name ends in '/': tar readers disagree on it (GNU tar"
                + " refuses it, Python's tarfile reads a file, Warp's reader a folder), so it is not published",
                "Rebuild the tar without the trailing '/' on that name (or as a folder entry with no data).");
    }


    private static InvalidInputException notATar(String artifact, Path tar, String why) {
        return new InvalidInputException("Artifact '" + artifact + "' file " + tar + " is not a tar file: " + why,
                "--artifact " + artifact + "=FILE takes tar / WebDataset shards (uncompressed tar). To publish a file"
                        + " as content, put it in a folder and give the folder: --artifact " + artifact + "=DIR.");
    }

    /**
     * Refuses, as empty, a tar that is a whole PAX global header ('g', with all of its records)
     * followed by zeros alone (Python's tarfile writes one with {@code pax_headers=} though no
     * member was added): the tar reader fails on it, and it is not cut short (session 27's review).
     */
    private static void refuseGlobalHeaderAlone(String artifact, Path tar, long length) {
        if (onlyAGlobalHeader(tar, length)) {
            throw empty(artifact, tar, "it holds a PAX global header and no member");
        }
    }

    private static boolean onlyAGlobalHeader(Path tar, long length) {
        if (length > (1 << 20)) {
            return false; // a global header is a few records; this many bytes are more than that
        }
        List<Byte> types = new ArrayList<>();
        try {
            TarHeaders.Walked walked = TarHeaders.walk(tar, h -> types.add(h.type()) && types.size() < 2);
            if (walked.end() != TarHeaders.End.ZEROS || !types.equals(List.of((byte) 'g'))) {
                return false;
            }
            byte[] all = Files.readAllBytes(tar);
            return TarHeaders.allZero(all, (int) walked.at(), all.length); // zeros to the end: no member hides after them
        } catch (IOException e) {
            return false; // the caller's own error says what is wrong with the file
        }
    }

    /** A tar with nothing in it (GNU tar writes an empty one as 10 KiB of zeros), or a file of zeros. */
    private static InvalidInputException empty(String artifact, Path tar, String why) {
        return new InvalidInputException("Artifact '" + artifact + "' file " + tar + " is not a tar file to publish: "
                + why, "An empty tar has nothing to publish: check that it was written in full ('tar -tf " + tar
                + "' lists its members), or leave it out. If the file is content rather than a tar, put it in a folder"
                + " and give the folder: --artifact " + artifact + "=DIR.");
    }

    /** GNU tar's incremental "dump directory" entry type ({@code tar -g}): a folder with its listing as data. */
    private static final byte LF_GNU_DUMPDIR = 'D';

    private static InvalidInputException dumpDir(String artifact, Path tar, String name) {
        return new InvalidInputException("Artifact '" + artifact + "' tar " + tar + " entry '" + printable(name)
                + "' is a GNU incremental dump directory (type 'D': the tar was written with -g or"
                + " --listed-incremental), which tar readers other than GNU tar take for a file or a folder",
                "Write the tar again without -g / --listed-incremental (a plain 'tar -cf'), or extract it with GNU"
                        + " tar and give the folder.");
    }

    /**
     * Refuses a tar holding a PAX-format sparse file ({@code tar --format=posix -S}: an extended
     * header with {@code GNU.sparse.*} records), which the reader otherwise takes for damage. Walks
     * the headers by their checksums and sizes; stops quietly at the first it cannot read.
     */
    private static void refuseSparseByPax(String artifact, Path tar) {
        try {
            TarHeaders.walk(tar, h -> {
                String records = h.pax();
                if (records != null && records.contains("GNU.sparse.")) {
                    int name = records.indexOf("GNU.sparse.name=");
                    int nl = name < 0 ? -1 : records.indexOf('\n', name);
                    String file = name < 0 ? "at byte " + h.at() : records.substring(name + 16, nl < 0 ? records.length() : nl);
                    throw new InvalidInputException("Artifact '" + artifact + "' tar " + tar + " entry '"
                            + printable(file) + "' is a sparse file (PAX format, tar --format=posix -S),"
                            + " which cannot be published",
                            "Rebuild the tar without --sparse (GNU tar) so that the file's bytes are stored whole.");
                }
                return true;
            });
        } catch (IOException e) {
            // The reader's own error stands.
        }
    }

    private static InvalidInputException truncated(String artifact, Path tar, String why) {
        return truncated(artifact, tar, why, null);
    }

    private static InvalidInputException truncated(String artifact, Path tar, String why, IOException cause) {
        return new InvalidInputException("Artifact '" + artifact + "' tar " + tar + " is cut short or damaged: " + why,
                "Copy or write the tar again in full (compare its size with the original's); nothing was published.",
                cause);
    }

    /**
     * The member's path: its name in the tar without leading {@code ./} ({@code tar -C dir -cf x.tar .},
     * the usual way to tar a folder, names every member {@code ./class/0001.jpg}) or {@code /}
     * ({@code /data/x.jpg} is {@code data/x.jpg}, as GNU tar extracts it; commons-compress already
     * drops it from a PAX {@code path} or a GNU long name, so a plain header's absolute name is
     * treated alike). Anything else is kept as it is and checked by {@link #checkEntry}.
     */
    static String memberName(String tarName) {
        String n = tarName;
        while (n.startsWith("./") || n.startsWith("/")) {
            n = n.substring(n.startsWith("/") ? 1 : 2);
        }
        return n;
    }

    private static void checkEntry(String artifact, Path tar, TarArchiveEntry e, String name) {
        String kind = e.isSymbolicLink() ? "symlink" : e.isLink() ? "hard link"
                : e.isCharacterDevice() ? "character device" : e.isBlockDevice() ? "block device"
                : e.isFIFO() ? "fifo" : e.isSparse() ? "sparse file" : e.isFile() ? null : "special entry";
        if (kind != null) {
            throw new InvalidInputException("Artifact '" + artifact + "' tar " + tar + " entry '" + printable(name)
                    + "' is a " + kind + ", which cannot be published", e.isSparse()
                    ? "Rebuild the tar without --sparse (GNU tar) so that the file's bytes are stored whole."
                    : e.isSymbolicLink() || e.isLink()
                    ? "Rebuild the tar with regular files only (GNU tar: --dereference for symlinks, --hard-dereference"
                            + " for hard links)."
                    : "Rebuild the tar with regular files only: leave the " + kind + " out (it has no bytes to read).");
        }
        try {
            Names.requireMemberPath("member", name);
        } catch (ManifestValidationException ex) {
            // Without the field's name ("member: member path has ...": audit 32).
            String why = ex.getMessage().startsWith(ex.field() + ": ") ? ex.getMessage().substring(ex.field().length() + 2)
                    : ex.getMessage();
            throw new InvalidInputException("Artifact '" + artifact + "' tar " + tar + " entry '" + printable(name)
                    + "' has a hostile or invalid name: " + printable(why),
                    why.contains("backslash") ? "Rename it without '\\' (member paths separate folders with '/';"
                            + " a backslash reads as a Windows separator) and rebuild the tar."
                    : why.contains("longer than 255") ? "Shorten that part of the name to at most 255 bytes (a file"
                            + " name's limit) and rebuild the tar."
                    : "Rebuild the tar with relative member names without '..' or empty components.");
        }
    }

    private static InvalidInputException unreadable(String artifact, Path p, IOException e) {
        return new InvalidInputException("Artifact '" + artifact + "' tar " + p + " cannot be read: " + e,
                "Make it readable by the publishing user.", e);
    }
}
