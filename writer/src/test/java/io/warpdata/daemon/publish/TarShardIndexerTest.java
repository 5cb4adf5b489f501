package io.warpdata.daemon.publish;

import io.warpdata.manifest.ArtifactKind;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.MemberIndex;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TarShardIndexerTest {
    @TempDir
    Path tmp;

    /** Writes a tar of (name, content) pairs; a null content makes a directory entry. */
    static Path tar(Path file, String... nameContent) throws Exception {
        try (OutputStream os = Files.newOutputStream(file);
             TarArchiveOutputStream tar = new TarArchiveOutputStream(os)) {
            tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
            for (int i = 0; i < nameContent.length; i += 2) {
                String name = nameContent[i];
                String content = nameContent[i + 1];
                TarArchiveEntry e = new TarArchiveEntry(name, true);
                if (content == null) {
                    e = new TarArchiveEntry(name.endsWith("/") ? name : name + "/", true);
                    tar.putArchiveEntry(e);
                } else {
                    byte[] b = content.getBytes(StandardCharsets.UTF_8);
                    e.setSize(b.length);
                    tar.putArchiveEntry(e);
                    tar.write(b);
                }
                tar.closeArchiveEntry();
            }
        }
        return file;
    }

    @Test
    void tarsKeepTheirFileNamesUnlessTwoShareOneOrOneCannotBeAFileInTheMount() throws Exception {
        Files.createDirectories(tmp.resolve("x"));
        Files.createDirectories(tmp.resolve("y"));
        Path a = tar(tmp.resolve("x/shard-0.tar"), "a.jpg", "1");
        Path b = tar(tmp.resolve("y/shard-0.tar"), "b.jpg", "2");
        Path c = tar(tmp.resolve("y/shard\\1.tar"), "c.jpg", "3");
        assertThat(index(a, c).shardNames()).as("a backslash: no member name holds one").isEmpty();
        assertThat(index(a, c).shardNamesLeftOut()).contains("is not a file name the mount shows");
        Path spaced = tar(tmp.resolve("y/shard 1 \u00fc=+.tar"), "s.jpg", "4");
        assertThat(index(spaced).shardNames()).as("any name a member may have").containsExactly("shard 1 \u00fc=+.tar");
        assertThat(index(tar(tmp.resolve("y/shard-1.tar"), "c.jpg", "3"), a).shardNames())
                .as("in the order of their first members").containsExactly("shard-0.tar", "shard-1.tar");
        List<String> notes = new java.util.ArrayList<>();
        PackedArtifact shared = new TarShardIndexer().index("web", List.of(a, b), new PublishProgress() {
            @Override
            public void note(String text) {
                notes.add(text);
            }
        });
        assertThat(shared.shardNames()).isEmpty();
        assertThat(shared.memberCount()).as("the members are published all the same").isEqualTo(2);
        assertThat(shared.shardNamesLeftOut()).contains("web.tars/", "share a name", "its members are, in web/");
        assertThat(notes).as("said once, in the result's notes (audit 32: printed twice)").isEmpty();
    }

    private PackedArtifact index(Path... tars) {
        return new TarShardIndexer().index("shards", List.of(tars), PublishProgress.NONE);
    }

    /**
     * Audit 49: tars whose names do not follow their members' (part-a holds samples 300-399,
     * part-b 0-99, ...) were shards in the order given, so a scan in listing order went on into a
     * shard other than the one read ahead. The shards are put in their first members' order; each
     * member still names the tar that holds it, and the tars keep their names.
     */
    @Test
    void shardsAreInTheOrderOfTheirFirstMembersNotTheOrderGiven() throws Exception {
        int[] block = {3, 0, 2, 1};
        List<Path> given = new java.util.ArrayList<>();
        for (int k = 0; k < block.length; k++) {
            String[] nc = new String[4];
            for (int j = 0; j < 2; j++) {
                nc[2 * j] = String.format("%06d.jpg", block[k] * 100 + j);
                nc[2 * j + 1] = "sample " + (block[k] * 100 + j);
            }
            given.add(tar(tmp.resolve("part-" + (char) ('a' + k) + ".tar"), nc));
        }
        PackedArtifact p = index(given.toArray(Path[]::new));
        assertThat(p.shardNames()).containsExactly("part-b.tar", "part-d.tar", "part-c.tar", "part-a.tar");
        for (int s = 0; s < 4; s++) {
            assertThat(p.shards().get(s).id()).as("shard " + s)
                    .isEqualTo(BlobId.of(Files.readAllBytes(tmp.resolve(p.shardNames().get(s)))));
        }
        MemberIndex idx = p.members();
        for (int i = 0; i < idx.size(); i++) {
            assertThat(idx.shard(i)).as(idx.path(i) + ": shards follow the listing").isEqualTo(i / 2);
            Path holder = tmp.resolve(p.shardNames().get(idx.shard(i)));
            byte[] got = new byte[(int) idx.length(i)];
            try (RandomAccessFile f = new RandomAccessFile(holder.toFile(), "r")) {
                f.seek(idx.offset(i));
                f.readFully(got);
            }
            assertThat(new String(got, StandardCharsets.UTF_8)).isEqualTo("sample " + Integer.parseInt(idx.path(i).substring(0, 6)));
        }
    }

    @Test
    void indexesExistingShardsInPlaceSkippingDirectories() throws Exception {
        Path a = tar(tmp.resolve("a.tar"), "s0/", null, "s0/000.jpg", "jpeg0", "s0/000.cls", "7");
        Path b = tar(tmp.resolve("b.tar"), "s1/001.jpg", "jpeg-one", "s1/001.cls", "3");
        PackedArtifact p = index(a, b);
        assertThat(p.kind()).isEqualTo(ArtifactKind.WEBDATASET_SHARDS);
        assertThat(p.memberCount()).isEqualTo(4);
        assertThat(p.shards().get(0).id()).isEqualTo(BlobId.of(Files.readAllBytes(a)));
        MemberIndex idx = p.members();
        int i = idx.find("s1/001.jpg");
        assertThat(idx.shard(i)).isEqualTo(1);
        byte[] got = new byte[(int) idx.length(i)];
        try (RandomAccessFile f = new RandomAccessFile(b.toFile(), "r")) {
            f.seek(idx.offset(i));
            f.readFully(got);
        }
        assertThat(new String(got, StandardCharsets.UTF_8)).isEqualTo("jpeg-one");
        assertThat(idx.find("s0")).isEqualTo(-1);
    }

    @ParameterizedTest
    @ValueSource(strings = {"../escape.txt", "a/../../b", "a//b", "a/.."})
    void hostileMemberNamesAreRefusedNamingTarAndEntry(String name) throws Exception {
        Path t = tar(tmp.resolve("bad.tar"), "ok.txt", "fine", name, "evil");
        assertThatThrownBy(() -> index(t))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining(t.toString())
                .hasMessageContaining("'" + name + "'");
    }

    @Test
    void linkEntriesAreRefused() throws Exception {
        Path t = tmp.resolve("links.tar");
        try (OutputStream os = Files.newOutputStream(t); TarArchiveOutputStream tar = new TarArchiveOutputStream(os)) {
            TarArchiveEntry e = new TarArchiveEntry("link", TarConstants.LF_SYMLINK);
            e.setLinkName("/etc/shadow");
            tar.putArchiveEntry(e);
            tar.closeArchiveEntry();
        }
        assertThatThrownBy(() -> index(t))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("'link'")
                .hasMessageContaining("symlink");
    }

    @Test
    void aMemberTwiceInOneTarIsSaidSoAndACompressedTarIsNamedAsSuch() throws Exception {
        Path dup = tar(tmp.resolve("dup.tar"), "same.txt", "one", "same.txt", "two");
        assertThatThrownBy(() -> index(dup))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("member 'same.txt' appears twice in " + dup);
        Path plain = tar(tmp.resolve("plain.tar"), "a.txt", "alpha");
        Path gz = tmp.resolve("plain.tar.gz");
        try (OutputStream os = new java.util.zip.GZIPOutputStream(Files.newOutputStream(gz))) {
            os.write(Files.readAllBytes(plain));
        }
        assertThatThrownBy(() -> index(gz))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("is a gzip-compressed file, not a tar")
                .satisfies(e -> assertThat(((InvalidInputException) e).nextStep()).contains("gunzip -k " + gz));
    }

    @Test
    void duplicateMemberAcrossShardsIsRefused() throws Exception {
        Path a = tar(tmp.resolve("a.tar"), "x/1.jpg", "one");
        Path b = tar(tmp.resolve("b.tar"), "x/1.jpg", "uno");
        assertThatThrownBy(() -> index(a, b))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("x/1.jpg")
                .hasMessageContaining(a.toString())
                .hasMessageContaining(b.toString());
    }

    /** audit 32: the same file twice was reported as a tar holding each member twice. */
    @Test
    void theSameTarGivenTwiceIsRefusedAsGivenTwice() throws Exception {
        Path a = tar(tmp.resolve("a.tar"), "x/1.jpg", "one");
        Path other = Files.createDirectories(tmp.resolve("d")).resolve("../a.tar");
        for (Path again : List.of(a, other)) {
            assertThatThrownBy(() -> index(a, again))
                    .isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining("is given the tar file " + again + " twice")
                    .hasMessageNotContaining("appears twice")
                    .satisfies(e -> assertThat(((InvalidInputException) e).nextStep())
                            .contains("given more than once", "globs"));
        }
    }

    @Test
    void fileThatIsNotATarIsRefused() throws Exception {
        Path t = Files.writeString(tmp.resolve("notatar.tar"), "x".repeat(2000));
        assertThatThrownBy(() -> index(t))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining(t.toString());
    }

    /** A tar written by Python's tarfile (not by Warp's writer): {@code n} members of {@code size} bytes each. */
    private Path pythonTar(String name, int n, int size) throws Exception {
        Path out = tmp.resolve(name);
        run("/usr/bin/python3", "-c", """
                import io, sys, tarfile
                with tarfile.open(sys.argv[1], 'w', format=tarfile.GNU_FORMAT) as t:
                    for i in range(int(sys.argv[2])):
                        data = bytes([65 + i % 26]) * int(sys.argv[3])
                        info = tarfile.TarInfo('s/%03d.jpg' % i)
                        info.size = len(data)
                        t.addfile(info, io.BytesIO(data))
                """, out.toString(), Integer.toString(n), Integer.toString(size));
        return out;
    }

    /** The first {@code bytes} bytes of {@code in}, cut by coreutils' head -c. */
    private Path headC(Path in, long bytes, String name) throws Exception {
        Path out = tmp.resolve(name);
        run("/bin/sh", "-c", "head -c " + bytes + " \"$0\" > \"$1\"", in.toString(), out.toString());
        return out;
    }

    private static void run(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as("%s: %s", List.of(cmd), out).isZero();
    }

    /** audit 32: GNU tar's PAX sparse files were reported as a damaged header, with advice to copy the tar again. */
    @Test
    void aPaxSparseFileByGnuTarIsRefusedAsASparseFile() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("sparse"));
        run("/bin/sh", "-c", "truncate -s 6000 \"$0\"/s.bin && printf HELLO | dd of=\"$0\"/s.bin bs=1 seek=5000"
                + " conv=notrunc 2>/dev/null && echo hi > \"$0\"/z.txt", dir.toString());
        Path t = tmp.resolve("sp.tar");
        run("tar", "-C", dir.toString(), "--format=posix", "-S", "-cf", t.toString(), "s.bin", "z.txt");
        assertThatThrownBy(() -> index(t))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("'s.bin' is a sparse file (PAX format")
                .hasMessageNotContaining("cut short")
                .satisfies(e -> assertThat(((InvalidInputException) e).nextStep()).contains("without --sparse"));
    }

    /** audit 32: an incremental tar's dump directory was called a file named like a folder. */
    @Test
    void aGnuIncrementalTarIsRefusedNamingItsDumpDirectory() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("g/d"));
        Files.writeString(dir.resolve("f"), "x");
        Path t = tmp.resolve("incr.tar");
        run("tar", "-C", tmp.resolve("g").toString(), "-g", tmp.resolve("snap").toString(), "-cf", t.toString(), ".");
        assertThatThrownBy(() -> index(t))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("is a GNU incremental dump directory (type 'D'")
                .hasMessageNotContaining("whose name ends in '/'")
                .satisfies(e -> assertThat(((InvalidInputException) e).nextStep()).contains("without -g"));
    }

    /** audit 32: a tar cut inside a long name's or PAX header's record was "not a tar file", with the reader's text. */
    @Test
    void aTarCutInsideALongNameOrPaxHeaderIsCutShortNotNotATar() throws Exception {
        for (String format : List.of("GNU_FORMAT", "PAX_FORMAT")) {
            Path whole = pythonTar(format + ".tar", "with tarfile.open(sys.argv[1], 'w', format=tarfile." + format + ") as t:\n"
                    + "    ti = tarfile.TarInfo('d/' + 'n' * 150 + '.jpg'); ti.size = 3000\n"
                    + "    t.addfile(ti, io.BytesIO(b'x' * 3000))\n");
            Path cut = headC(whole, 1024, format + "-cut.tar");
            assertThatThrownBy(() -> index(cut))
                    .as(format)
                    .isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining("is cut short or damaged")
                    .hasMessageNotContaining("is not a tar file")
                    .satisfies(e -> assertThat(((InvalidInputException) e).nextStep()).contains("in full"));
        }
    }

    /** audit 33: a tar cut right after its last member's data said "it ends 0 byte(s) after its last member". */
    @Test
    void aTarCutRightAfterItsLastMemberSaysSo() throws Exception {
        Path whole = pythonTar("w.tar", 1, 1024);
        Path cut = headC(whole, 512 + 1024, "w-cut.tar");
        assertThatThrownBy(() -> index(cut))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("it ends right after its last member 's/000.jpg', without the end-of-archive marker")
                .hasMessageNotContaining("0 byte(s)");
    }

    /** audit 32: bytes after a whole end-of-archive marker (cat a.tar b.tar) were called a cut tar. */
    @Test
    void dataAfterTheEndOfArchiveMarkerIsNamedAsSuchNotAsACut() throws Exception {
        Path one = pythonTar("one.tar", 2, 20_000);
        Path concat = tmp.resolve("concat.tar");
        run("/bin/sh", "-c", "cat \"$0\" \"$0\" > \"$1\"", one.toString(), concat.toString());
        Path garbage = tmp.resolve("garbage-after.tar");
        run("/bin/sh", "-c", "{ cat \"$0\"; printf 'GARBAGE-TRAILING'; } > \"$1\"", one.toString(), garbage.toString());
        for (Path t : List.of(concat, garbage)) {
            assertThatThrownBy(() -> index(t))
                    .as(t.toString())
                    .isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining("after its end-of-archive marker")
                    .hasMessageNotContaining("cut short")
                    .satisfies(e -> assertThat(((InvalidInputException) e).nextStep())
                            // 2 members of 512 + 20,480 bytes, then the 1,024 bytes of the marker
                            .contains("each tar as a file of its own", "truncate -s 43008 " + t));
        }
        // The advice works: cut there, the tar is whole.
        run("truncate", "-s", "43008", garbage.toString());
        assertThat(index(garbage).memberCount()).isEqualTo(2);
    }

    /** Session 27's review: a tar of a PAX global header alone (no member) was called cut short. */
    @Test
    void aTarOfAGlobalHeaderAloneIsEmptyNotCutShort() throws Exception {
        Path global = pythonTar("global.tar", "with tarfile.open(sys.argv[1], 'w', format=tarfile.PAX_FORMAT,"
                + " pax_headers={'comment': 'made by a tool'}) as t:\n    pass\n");
        assertThatThrownBy(() -> index(global))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("holds a PAX global header and no member").hasMessageNotContaining("cut short")
                .satisfies(e -> assertThat(((InvalidInputException) e).nextStep()).contains("An empty tar has nothing to publish"));
        // The same header cut inside its records is still cut short.
        byte[] whole = Files.readAllBytes(global);
        Path cut = tmp.resolve("global-cut.tar");
        Files.write(cut, java.util.Arrays.copyOf(whole, 700));
        assertThatThrownBy(() -> index(cut)).isInstanceOf(InvalidInputException.class).hasMessageContaining("cut short");
    }

    /** audit 32: a fifo was told to rebuild with --dereference; a bad name's reason repeated "member: member path". */
    @Test
    void aFifoIsToldToBeLeftOutAndABadNameIsExplainedOnce() throws Exception {
        Path fifo = pythonTar("fifo.tar", "with tarfile.open(sys.argv[1], 'w') as t:\n"
                + "    ti = tarfile.TarInfo('q'); ti.type = tarfile.FIFOTYPE; t.addfile(ti)\n");
        assertThatThrownBy(() -> index(fifo))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("'q' is a fifo")
                .satisfies(e -> assertThat(((InvalidInputException) e).nextStep()).contains("leave the fifo out")
                        .doesNotContain("dereference"));
        Path empty = pythonTar("empty-part.tar", "with tarfile.open(sys.argv[1], 'w') as t:\n"
                + "    ti = tarfile.TarInfo('a//b.jpg'); ti.size = 1; t.addfile(ti, io.BytesIO(b'x'))\n");
        assertThatThrownBy(() -> index(empty))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("has a hostile or invalid name: ")
                .hasMessageNotContaining("name: member:");
    }

    @Test
    void aWholeTarFromPythonsTarfileIsIndexed() throws Exception {
        Path t = pythonTar("whole.tar", 3, 700);
        PackedArtifact p = index(t);
        assertThat(p.memberCount()).isEqualTo(3);
        assertThat(p.members().length(p.members().find("s/002.jpg"))).isEqualTo(700);
    }

    /** A tar by Python's tarfile from a script that gets the output path as sys.argv[1]. */
    private Path pythonTar(String name, String script) throws Exception {
        Path out = tmp.resolve(name);
        run("/usr/bin/python3", "-c", "import io, sys, tarfile\n" + script, out.toString());
        return out;
    }

    @Test
    void aDamagedRecordAfterTheLastMemberIsRefusedNotPublishedAsAMember() throws Exception {
        // 512 bytes of text (no valid checksum) inserted before the end-of-archive records.
        Path t = pythonTar("garbage.tar", """
                buf = io.BytesIO()
                with tarfile.open(fileobj=buf, mode='w', format=tarfile.USTAR_FORMAT) as tf:
                    info = tarfile.TarInfo('ok.txt'); info.size = 3
                    tf.addfile(info, io.BytesIO(b'abc'))
                b = buf.getvalue()
                end = 1024  # header + one data record
                junk = b'hello garbage'.ljust(512, b'\\0')
                open(sys.argv[1], 'wb').write(b[:end] + junk + b[end:])
                """);
        assertThatThrownBy(() -> index(t))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining(t.toString())
                .hasMessageContaining("checksum");
    }

    @Test
    void aRegularFileWhoseNameEndsInASlashIsRefusedNotDropped() throws Exception {
        for (boolean first : new boolean[] {false, true}) {
            Path t = pythonTar("slash-" + first + ".tar", """
                    with tarfile.open(sys.argv[1], 'w', format=tarfile.USTAR_FORMAT) as tf:
                        names = ['zz/', 'ok/a.txt'] if FIRST else ['ok/a.txt', 'zz/']
                        for n in names:
                            data = b'x' * (2000 if n == 'zz/' else 3)
                            info = tarfile.TarInfo(n); info.size = len(data); info.type = tarfile.REGTYPE
                            tf.addfile(info, io.BytesIO(data))
                    """.replace("FIRST", first ? "True" : "False"));
            assertThatThrownBy(() -> index(t))
                    .as("the file-named-like-a-folder " + (first ? "first" : "last"))
                    .isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining("'zz/'")
                    .hasMessageContaining("2000 bytes");
        }
    }

    @Test
    void namesThatAreNotUtf8AreRefusedInEveryTarFormat() throws Exception {
        for (String format : List.of("GNU_FORMAT", "USTAR_FORMAT", "PAX_FORMAT")) {
            // surrogateescape writes the byte 0xE9 itself, as a Latin-1 file system would.
            Path t = pythonTar("latin1-" + format + ".tar", """
                    with tarfile.open(sys.argv[1], 'w', format=tarfile.%s, encoding='utf-8',
                                      errors='surrogateescape') as tf:
                        info = tarfile.TarInfo(b'caf\\xe9.txt'.decode('utf-8', 'surrogateescape')); info.size = 1
                        tf.addfile(info, io.BytesIO(b'x'))
                    """.formatted(format));
            assertThatThrownBy(() -> index(t))
                    .as(format)
                    .isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining("not valid UTF-8");
        }
        // A real '?' and a real U+00E9 are names like any other.
        Path ok = pythonTar("utf8.tar", """
                with tarfile.open(sys.argv[1], 'w', format=tarfile.GNU_FORMAT) as tf:
                    for n in ('caf\u00e9.txt', 'what?.txt', 'cam:front.jpg'):
                        info = tarfile.TarInfo(n); info.size = 1
                        tf.addfile(info, io.BytesIO(b'x'))
                """);
        PackedArtifact p = index(ok);
        assertThat(p.memberCount()).isEqualTo(3);
        assertThat(p.members().find("caf\u00e9.txt")).isNotNegative();
        assertThat(p.members().find("what?.txt")).isNotNegative();
        assertThat(p.members().find("cam:front.jpg")).isNotNegative();
    }

    /** Absolute names in a plain header, a PAX path and a GNU long name: all made relative, as GNU tar extracts them. */
    @Test
    void anAbsoluteNameIsMadeRelativeInEveryHeaderFormat() throws Exception {
        String longDir = "d".repeat(120);
        Path t = pythonTar("abs.tar", """
                with tarfile.open(sys.argv[1], 'w', format=tarfile.USTAR_FORMAT) as tf:
                    info = tarfile.TarInfo('/etc/ustar.txt'); info.size = 1
                    tf.addfile(info, io.BytesIO(b'u'))
                """);
        Path pax = pythonTar("abs-pax.tar", """
                with tarfile.open(sys.argv[1], 'w', format=tarfile.PAX_FORMAT) as tf:
                    info = tarfile.TarInfo('/abs/caf\u00e9.txt'); info.size = 1
                    tf.addfile(info, io.BytesIO(b'p'))
                """);
        Path gnu = pythonTar("abs-gnu.tar", """
                with tarfile.open(sys.argv[1], 'w', format=tarfile.GNU_FORMAT) as tf:
                    info = tarfile.TarInfo('/%s/long.txt'); info.size = 1
                    tf.addfile(info, io.BytesIO(b'g'))
                """.formatted(longDir));
        assertThat(index(t).members().find("etc/ustar.txt")).isNotNegative();
        assertThat(index(pax).members().find("abs/caf\u00e9.txt")).isNotNegative();
        assertThat(index(gnu).members().find(longDir + "/long.txt")).isNotNegative();
    }

    /** Each refusal says what to do about its own cause (they shared one "rebuild" or "copy again" advice). */
    @Test
    void refusalsSayWhatToDoAboutTheirOwnCause() throws Exception {
        Path slash = pythonTar("backslash.tar", """
                with tarfile.open(sys.argv[1], 'w') as tf:
                    info = tarfile.TarInfo('a/back\\\\slash.txt'); info.size = 1
                    tf.addfile(info, io.BytesIO(b'x'))
                """);
        assertThatThrownBy(() -> index(slash)).isInstanceOf(InvalidInputException.class)
                .satisfies(e -> assertThat(((InvalidInputException) e).nextStep()).contains("without '\\'"));
        Path longPart = pythonTar("long.tar", """
                with tarfile.open(sys.argv[1], 'w', format=tarfile.PAX_FORMAT) as tf:
                    info = tarfile.TarInfo('d/' + 'x' * 300); info.size = 1
                    tf.addfile(info, io.BytesIO(b'x'))
                """);
        assertThatThrownBy(() -> index(longPart)).isInstanceOf(InvalidInputException.class)
                .satisfies(e -> assertThat(((InvalidInputException) e).nextStep()).contains("at most 255 bytes"));
        Path paxSlash = pythonTar("pax-slash.tar", """
                with tarfile.open(sys.argv[1], 'w', format=tarfile.PAX_FORMAT) as tf:
                    info = tarfile.TarInfo('dirlike\u00e9/'); info.size = 3; info.type = tarfile.REGTYPE
                    tf.addfile(info, io.BytesIO(b'abc'))
                """);
        assertThatThrownBy(() -> index(paxSlash)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("whose name ends in '/'")
                .satisfies(e -> assertThat(((InvalidInputException) e).nextStep()).contains("without the trailing '/'"));
        Path empty = tmp.resolve("empty.tar");
        run("tar", "-cf", empty.toString(), "--files-from", "/dev/null");
        assertThatThrownBy(() -> index(empty)).isInstanceOf(InvalidInputException.class)
                .satisfies(e -> assertThat(((InvalidInputException) e).nextStep()).contains("An empty tar has nothing"));
        Path dup = pythonTar("dup.tar", """
                with tarfile.open(sys.argv[1], 'w', format=tarfile.PAX_FORMAT) as tf:
                    for _ in range(2):
                        info = tarfile.TarInfo('\\x1b[31mdup\\n'); info.size = 1
                        tf.addfile(info, io.BytesIO(b'x'))
                """);
        assertThatThrownBy(() -> index(dup)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("appears twice").hasMessageContaining("\\x1b[31mdup\\x0a")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\u001b").doesNotContain("\n"));
    }

    @Test
    void namesInMessagesShowControlCharactersEscaped() throws Exception {
        Path t = pythonTar("escape.tar", """
                with tarfile.open(sys.argv[1], 'w', format=tarfile.PAX_FORMAT) as tf:
                    info = tarfile.TarInfo('\\x1b[31mRED/../x'); info.size = 1
                    tf.addfile(info, io.BytesIO(b'x'))
                """);
        assertThatThrownBy(() -> index(t))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("\\x1b[31mRED")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\u001b"));
    }

    /** Python's tarfile writes what no file system holds: a member 'a' and a member 'a/b'. */
    @Test
    void aMemberThatIsAlsoAFolderIsRefusedNamingTheTar() throws Exception {
        Path t = tmp.resolve("filedir.tar");
        run("/usr/bin/python3", "-c", """
                import io, sys, tarfile
                with tarfile.open(sys.argv[1], 'w') as t:
                    for name in ('a', 'a/b'):
                        info = tarfile.TarInfo(name)
                        info.size = 1
                        t.addfile(info, io.BytesIO(b'x'))
                """, t.toString());
        assertThatThrownBy(() -> index(t))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("Artifact 'shards'")
                .hasMessageContaining(t.toString())
                .hasMessageContaining("'a/b'");
    }

    /** GNU tar's usual way to tar a folder, {@code tar -C dir -cf x.tar .}, names members {@code ./class/0001.jpg}. */
    @Test
    void aFolderTarredByGnuTarWithItsDotPrefixIsIndexedWithoutIt() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("imgs/dog"));
        Files.writeString(dir.resolve("0.png"), "woof");
        Files.writeString(Files.createDirectories(tmp.resolve("imgs/cat")).resolve("1.png"), "meow");
        Path t = tmp.resolve("gnu.tar");
        run("tar", "-C", tmp.resolve("imgs").toString(), "-cf", t.toString(), ".");
        PackedArtifact p = index(t);
        assertThat(p.memberCount()).isEqualTo(2);
        MemberIndex idx = p.members();
        assertThat(idx.find("./dog/0.png")).isEqualTo(-1);
        int i = idx.find("dog/0.png");
        assertThat(i).isNotNegative();
        assertThat(idx.length(i)).isEqualTo(4);
        assertThat(idx.find("cat/1.png")).isNotNegative();
        assertThat(TarShardIndexer.memberName("././a/b")).isEqualTo("a/b");
        assertThat(TarShardIndexer.memberName("//etc/./passwd")).isEqualTo("etc/./passwd");
        assertThat(TarShardIndexer.memberName("a/./b")).as("only a leading ./ is dropped").isEqualTo("a/./b");
    }

    @Test
    void smallFilesThatAreNotTarsAreRefusedNamingTheFileAndTheWayToPublishContent() throws Exception {
        Path text = Files.writeString(tmp.resolve("note.txt"), "hi");
        Path png = tmp.resolve("dot.png");
        javax.imageio.ImageIO.write(new java.awt.image.BufferedImage(4, 4, java.awt.image.BufferedImage.TYPE_INT_RGB),
                "png", png.toFile());
        Path zeros = headC(Path.of("/dev/zero"), 10240, "zeros.bin");
        Path bigPng = tmp.resolve("noise.png");
        java.awt.image.BufferedImage noise = new java.awt.image.BufferedImage(32, 32,
                java.awt.image.BufferedImage.TYPE_INT_RGB);
        java.util.Random random = new java.util.Random(1);
        for (int i = 0; i < 32 * 32; i++) {
            noise.setRGB(i % 32, i / 32, random.nextInt());
        }
        javax.imageio.ImageIO.write(noise, "png", bigPng.toFile());
        assertThat(Files.size(png)).isLessThan(512);
        assertThat(Files.size(bigPng)).isGreaterThan(512);
        for (Path f : List.of(text, png, zeros, bigPng)) {
            assertThatThrownBy(() -> index(f))
                    .as(f.toString())
                    .isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining(f.toString())
                    .hasMessageContaining("is not a tar file")
                    .satisfies(e -> assertThat(((InvalidInputException) e).nextStep())
                            .contains("put it in a folder and give the folder"));
        }
    }

    @Test
    void aTarCutInsideItsSecondHeaderIsRefused() throws Exception {
        Path whole = pythonTar("two.tar", 2, 600);
        // member 0: header 0-512, data 512-1112, padded to 1536; member 1's header at 1536-2048
        Path cut = headC(whole, 1536 + 200, "cut-header.tar");
        assertThatThrownBy(() -> index(cut))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining(cut.toString())
                .hasMessageContaining("cut short");
    }

    @Test
    void aTarCutAtARecordBoundaryOrInsideMemberDataIsRefused() throws Exception {
        Path whole = pythonTar("three.tar", 3, 600);
        Path atBoundary = headC(whole, 1536, "cut-boundary.tar");
        Path inData = headC(whole, 1536 + 512 + 100, "cut-data.tar");
        Path inMarker = headC(whole, 3 * 1536 + 100, "cut-marker.tar");
        for (Path cut : List.of(atBoundary, inData, inMarker)) {
            assertThatThrownBy(() -> index(cut))
                    .as(cut.toString())
                    .isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining(cut.toString());
        }
        // A cut after the first whole zero record of the end marker loses nothing: accepted.
        assertThat(index(headC(whole, 3 * 1536 + 512, "cut-after-marker.tar")).memberCount()).isEqualTo(3);
    }

    @Test
    void aTarWhoseMemberEndsPastItsLengthIsRefused() throws Exception {
        // One member of 5000 bytes, cut to 2000: the header says more than the file holds.
        Path whole = pythonTar("one.tar", 1, 5000);
        Path cut = headC(whole, 2000, "short.tar");
        assertThatThrownBy(() -> index(cut))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining(cut.toString())
                .hasMessageContaining("s/000.jpg");
    }
}
