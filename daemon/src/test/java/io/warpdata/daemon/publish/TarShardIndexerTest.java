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

    private PackedArtifact index(Path... tars) {
        return new TarShardIndexer().index("shards", List.of(tars), PublishProgress.NONE);
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
    @ValueSource(strings = {"/etc/passwd", "../escape.txt", "a/../../b", "a//b"})
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
    void duplicateMemberAcrossShardsIsRefused() throws Exception {
        Path a = tar(tmp.resolve("a.tar"), "x/1.jpg", "one");
        Path b = tar(tmp.resolve("b.tar"), "x/1.jpg", "uno");
        assertThatThrownBy(() -> index(a, b))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("x/1.jpg")
                .hasMessageContaining(a.toString())
                .hasMessageContaining(b.toString());
    }

    @Test
    void fileThatIsNotATarIsRefused() throws Exception {
        Path t = Files.writeString(tmp.resolve("notatar.tar"), "x".repeat(2000));
        assertThatThrownBy(() -> index(t))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining(t.toString());
    }
}
