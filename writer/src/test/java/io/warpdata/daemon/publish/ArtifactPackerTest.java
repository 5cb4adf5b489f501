package io.warpdata.daemon.publish;

import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.MemberIndex;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarFile;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ArtifactPackerTest {
    @TempDir
    Path tmp;

    private PackedArtifact pack(Path src, String staging, long shardSize) {
        return new ArtifactPacker(tmp.resolve(staging), shardSize).pack("images", src, PublishProgress.NONE);
    }

    @Test
    void packingSameDirectoryTwiceGivesIdenticalShards() throws Exception {
        Path src = TestData.tree(tmp.resolve("src"), 300, 100, 5000, 1);
        PackedArtifact a = pack(src, "s1", 64 * 1024);
        // Touch every file: mtimes must not leak into the shards.
        try (var s = Files.walk(src)) {
            s.filter(Files::isRegularFile).forEach(p -> p.toFile().setLastModified(1_000_000_000L));
        }
        PackedArtifact b = pack(src, "s2", 64 * 1024);
        assertThat(a.shards()).hasSizeGreaterThan(3);
        assertThat(b.shards().stream().map(StagedBlob::id).toList())
                .isEqualTo(a.shards().stream().map(StagedBlob::id).toList());
        assertThat(b.index().id()).isEqualTo(a.index().id());
        for (int i = 0; i < a.shards().size(); i++) {
            assertThat(Files.readAllBytes(b.shards().get(i).file().orElseThrow()))
                    .isEqualTo(Files.readAllBytes(a.shards().get(i).file().orElseThrow()));
        }
        assertThat(a.memberCount()).isEqualTo(300);
    }

    @Test
    void recordedOffsetsPointAtEachMembersBytes() throws Exception {
        Path src = TestData.tree(tmp.resolve("src"), 120, 1, 3000, 2);
        Files.writeString(src.resolve("empty.txt"), "");
        PackedArtifact a = pack(src, "s", 16 * 1024);
        MemberIndex idx = a.members();
        assertThat(idx.size()).isEqualTo(121);
        for (int i = 0; i < idx.size(); i++) {
            byte[] expected = Files.readAllBytes(src.resolve(idx.path(i)));
            byte[] actual = new byte[(int) idx.length(i)];
            try (RandomAccessFile f = new RandomAccessFile(a.shards().get(idx.shard(i)).file().orElseThrow().toFile(), "r")) {
                f.seek(idx.offset(i));
                f.readFully(actual);
            }
            assertThat(actual).as(idx.path(i)).isEqualTo(expected);
            assertThat(idx.hash(i)).isEqualTo(BlobId.of(expected));
        }
    }

    @Test
    void headersAreNormalisedAndLongNamesUsePax() throws Exception {
        Path src = tmp.resolve("src");
        String longDir = "a".repeat(120) + "/" + "b".repeat(90);
        Files.createDirectories(src.resolve(longDir));
        Files.writeString(src.resolve(longDir + "/c.txt"), "long");
        Path exe = Files.writeString(src.resolve("run.sh"), "#!/bin/sh\n");
        Files.setPosixFilePermissions(exe, PosixFilePermissions.fromString("rwxr-x---"));
        Files.writeString(src.resolve("plain.txt"), "plain");
        Files.setPosixFilePermissions(src.resolve("plain.txt"), PosixFilePermissions.fromString("rw-------"));
        PackedArtifact a = pack(src, "s", 1 << 20);
        assertThat(a.shards()).hasSize(1);
        try (TarFile tf = new TarFile(a.shards().get(0).file().orElseThrow())) {
            List<TarArchiveEntry> entries = tf.getEntries();
            assertThat(entries).extracting(TarArchiveEntry::getName)
                    .containsExactly(longDir + "/c.txt", "plain.txt", "run.sh");
            for (TarArchiveEntry e : entries) {
                assertThat(e.getModTime().getTime()).isZero();
                assertThat(e.getLongUserId()).isZero();
                assertThat(e.getLongGroupId()).isZero();
                assertThat(e.getUserName()).isEmpty();
                assertThat(e.getGroupName()).isEmpty();
            }
            assertThat(entries.get(1).getMode() & 07777).isEqualTo(0644);
            assertThat(entries.get(2).getMode() & 07777).isEqualTo(0755);
        }
        assertThat(a.members().find(longDir + "/c.txt")).isGreaterThanOrEqualTo(0);
    }

    /**
     * Content-defined boundaries: changing one file of 10,000 re-uploads a shard or two. The
     * figures are printed for the report.
     */
    @Test
    void changingOneFileOfTenThousandChangesFewShards() throws Exception {
        Path src = TestData.tree(tmp.resolve("src"), 10_000, 200, 1800, 3);
        long target = 512 * 1024;
        PackedArtifact before = pack(src, "before", target);

        Path changed = src.resolve("d05/f05000.bin");
        byte[] b = Files.readAllBytes(changed);
        b[0] ^= 1;
        Files.write(changed, b);
        PackedArtifact edited = pack(src, "edited", target);

        Files.write(src.resolve("d10/f10000-new.bin"), new byte[1500]);
        PackedArtifact added = pack(src, "added", target);

        Path grown = src.resolve("d22/f02020.bin");
        Files.write(grown, new byte[1700], java.nio.file.StandardOpenOption.APPEND);
        PackedArtifact resized = pack(src, "resized", target);

        int editedNew = newShards(before, edited);
        int addedNew = newShards(edited, added);
        int resizedNew = newShards(added, resized);
        System.out.printf("CDC: %d files, target %d KiB, %d shards; one file changed -> %d new shard(s); "
                        + "one file added -> %d; one file grown by 1.7 KiB -> %d%n", 10_000, target / 1024,
                before.shards().size(), editedNew, addedNew, resizedNew);
        assertThat(before.shards().size()).isGreaterThanOrEqualTo(20);
        assertThat(editedNew).isBetween(1, 2);
        assertThat(addedNew).isBetween(1, 3);
        assertThat(resizedNew).isBetween(1, 3);
    }

    private static int newShards(PackedArtifact old, PackedArtifact now) {
        Set<BlobId> had = new HashSet<>();
        old.shards().forEach(s -> had.add(s.id()));
        return (int) now.shards().stream().filter(s -> !had.contains(s.id())).count();
    }

    @Test
    void symlinkInsideRootIsStoredAsTheTargetsContent() throws Exception {
        Path src = tmp.resolve("src");
        Files.createDirectories(src.resolve("x"));
        Files.writeString(src.resolve("x/real.txt"), "hello");
        Files.createSymbolicLink(src.resolve("link.txt"), Path.of("x/real.txt"));
        PackedArtifact a = pack(src, "s", 1 << 20);
        int i = a.members().find("link.txt");
        assertThat(i).isGreaterThanOrEqualTo(0);
        assertThat(a.members().length(i)).isEqualTo(5);
        assertThat(a.members().hash(i)).isEqualTo(BlobId.of("hello".getBytes()));
    }

    @Test
    void symlinkLeavingRootIsRefusedNamingIt() throws Exception {
        Path src = tmp.resolve("src");
        Files.createDirectories(src);
        Files.writeString(tmp.resolve("secret.txt"), "secret");
        Files.createSymbolicLink(src.resolve("escape.txt"), tmp.resolve("secret.txt"));
        assertThatThrownBy(() -> pack(src, "s", 1 << 20))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("escape.txt")
                .hasMessageContaining("leaving the source directory");
        assertThat(tmp.resolve("s")).doesNotExist();
    }

    @Test
    void aSymlinkLoopAFolderSymlinkAndAControlCharacterAreEachNamedForWhatTheyAre() throws Exception {
        Path loop = Files.createDirectories(tmp.resolve("loop"));
        Files.createSymbolicLink(loop.resolve("l1"), Path.of("l2"));
        Files.createSymbolicLink(loop.resolve("l2"), Path.of("l1"));
        assertThatThrownBy(() -> pack(loop, "s", 1 << 20)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("a symlink loop");

        Path folder = Files.createDirectories(tmp.resolve("folder"));
        Files.createDirectories(folder.resolve("sub"));
        Files.writeString(folder.resolve("sub/a.txt"), "a");
        Files.createSymbolicLink(folder.resolve("sublink"), Path.of("sub"));
        assertThatThrownBy(() -> pack(folder, "s", 1 << 20)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("a symlink to a folder")
                .satisfies(e -> assertThat(((InvalidInputException) e).nextStep()).contains("copy of the file or folder"));

        Path odd = Files.createDirectories(tmp.resolve("odd"));
        Files.createSymbolicLink(odd.resolve("l\u001bx"), tmp.resolve("secret"));
        assertThatThrownBy(() -> pack(odd, "s", 1 << 20)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("l\\x1bx").satisfies(e -> assertThat(e.getMessage()).doesNotContain("\u001b"));
    }

    /**
     * A folder without a dataset_manifest.json: its .safetensors files are checked too. Written by
     * Python from the format's description (8-byte length, JSON header, data), then cut by head -c.
     */
    @Test
    void aSafetensorsFileCutShortInAPlainFolderIsRefusedNamingIt() throws Exception {
        Path src = Files.createDirectories(tmp.resolve("src"));
        Process p = new ProcessBuilder("/usr/bin/python3", "-c", """
                import json, struct, sys
                header = json.dumps({"w": {"dtype": "F32", "shape": [256], "data_offsets": [0, 1024]}}).encode()
                with open(sys.argv[1] + "/whole.safetensors", "wb") as f:
                    f.write(struct.pack("<Q", len(header)) + header + bytes(1024))
                with open(sys.argv[1] + "/whole.safetensors", "rb") as f:
                    data = f.read()
                with open(sys.argv[1] + "/cut.safetensors", "wb") as f:
                    f.write(data[:-100])
                """, src.toString()).redirectErrorStream(true).start();
        assertThat(p.waitFor()).as(new String(p.getInputStream().readAllBytes())).isZero();
        assertThatThrownBy(() -> pack(src, "s", 1 << 20))
                .isInstanceOf(io.warpdata.manifest.formats.SafetensorsException.class)
                .hasMessageContaining("cut.safetensors");
        assertThat(tmp.resolve("s")).doesNotExist();
        Files.delete(src.resolve("cut.safetensors"));
        assertThat(pack(src, "s2", 1 << 20).memberCount()).isEqualTo(1);
    }

    /** A safetensors dataset (written by Python from the format) with a folder named as the mount's tensor folder. */
    @Test
    void aMemberNamedLikeTheTensorFolderOfASafetensorsFileIsRefused() throws Exception {
        Path src = Files.createDirectories(tmp.resolve("st"));
        Process p = new ProcessBuilder("/usr/bin/python3", "-c", """
                import json, os, struct, sys
                header = json.dumps({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}).encode()
                data = struct.pack("<Q", len(header)) + header + bytes(16)
                with open(sys.argv[1] + "/part-0.safetensors", "wb") as f:
                    f.write(data)
                with open(sys.argv[1] + "/dataset_manifest.json", "w") as f:
                    json.dump({"format_version": "1", "total_samples": 1, "total_bytes": len(data),
                               "shards": [{"file": "part-0.safetensors", "samples_count": 1, "bytes": len(data)}]}, f)
                os.makedirs(sys.argv[1] + "/part-0.tensors")
                with open(sys.argv[1] + "/part-0.tensors/w.npy", "wb") as f:
                    f.write(b"not the tensor")
                """, src.toString()).redirectErrorStream(true).start();
        assertThat(p.waitFor()).as(new String(p.getInputStream().readAllBytes())).isZero();
        assertThatThrownBy(() -> SafetensorsDataset.check("emb", src)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("part-0.tensors").hasMessageContaining("which it would hide");
        Files.delete(src.resolve("part-0.tensors/w.npy"));
        Files.delete(src.resolve("part-0.tensors"));
        assertThat(SafetensorsDataset.check("emb", src).tensors()).isEqualTo(1);
    }

    /** A Latin-1 name (bytes that are not UTF-8), written by Python with a bytes path. */
    @Test
    void aNameThatIsNotUtf8IsRefusedNotRenamed() throws Exception {
        Path src = Files.createDirectories(tmp.resolve("src"));
        Files.writeString(src.resolve("ok.txt"), "fine");
        Process p = new ProcessBuilder("/usr/bin/python3", "-c",
                "import os,sys; open(os.path.join(os.fsencode(sys.argv[1]), b'latin1-\\xe9'), 'w').write('x')",
                src.toString()).redirectErrorStream(true).start();
        assertThat(p.waitFor()).as(new String(p.getInputStream().readAllBytes())).isZero();
        assertThatThrownBy(() -> pack(src, "s", 1 << 20))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("latin1-")
                .hasMessageContaining("not valid UTF-8");
        assertThat(tmp.resolve("s")).doesNotExist();
        // A name that really holds U+FFFD, or a '?', is what it says and publishes.
        Path fine = Files.createDirectories(tmp.resolve("fine"));
        Files.writeString(fine.resolve("odd-\uFFFD?.txt"), "x");
        assertThat(pack(fine, "f", 1 << 20).memberCount()).isEqualTo(1);
    }

    @Test
    void fifoIsRefusedNamingIt() throws Exception {
        Path src = tmp.resolve("src");
        Files.createDirectories(src);
        Path fifo = src.resolve("pipe");
        Assumptions.assumeTrue(new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor() == 0, "mkfifo");
        assertThatThrownBy(() -> pack(src, "s", 1 << 20))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining(fifo.toString())
                .hasMessageContaining("fifo");
    }

    @Test
    void socketIsRefusedNamingIt() throws Exception {
        Path src = tmp.resolve("src");
        Files.createDirectories(src);
        Path sock = src.resolve("sock");
        try (ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.bind(UnixDomainSocketAddress.of(sock));
            assertThatThrownBy(() -> pack(src, "s", 1 << 20))
                    .isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining(sock.toString())
                    .hasMessageContaining("socket");
        }
    }

    @Test
    void deviceFileIsRefusedNamingIt() throws Exception {
        Path src = tmp.resolve("src");
        Files.createDirectories(src);
        Path dev = src.resolve("null");
        Assumptions.assumeTrue(new ProcessBuilder("mknod", dev.toString(), "c", "1", "3").start().waitFor() == 0,
                "mknod needs CAP_MKNOD");
        assertThatThrownBy(() -> pack(src, "s", 1 << 20))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining(dev.toString())
                .hasMessageContaining("character device");
    }

    @Test
    void missingDirectoryIsRefused() {
        assertThatThrownBy(() -> pack(tmp.resolve("nope"), "s", 1 << 20))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("nope")
                .hasMessageContaining("not a directory");
    }
}
