package io.warpdata.daemon.control;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SourceAccessTest {
    @TempDir
    Path tmp;

    private final Peer nobody = new Peer(65534, 65534, "nobody", Set.of(65534));
    private final SourceAccess access = new SourceAccess();

    private Path tree() throws IOException {
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path data = Files.createDirectories(tmp.resolve("data/sub"));
        Files.setPosixFilePermissions(tmp.resolve("data"), PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.setPosixFilePermissions(data, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.setPosixFilePermissions(Files.writeString(data.resolve("a.txt"), "a"), PosixFilePermissions.fromString("rw-r--r--"));
        return tmp.resolve("data");
    }

    @Test
    void permissionClassesFollowPosixOrder() {
        // The owner class decides for the owner even when "other" would allow more.
        assertThat(SourceAccess.allows(nobody, 65534, 0, 0044, 4)).isFalse();
        assertThat(SourceAccess.allows(nobody, 0, 65534, 0040, 4)).isTrue();
        assertThat(SourceAccess.allows(nobody, 0, 0, 0004, 4)).isTrue();
        assertThat(SourceAccess.allows(nobody, 0, 0, 0640, 4)).isFalse();
    }

    @Test
    void worldReadableTreeIsAccepted() throws IOException {
        Path data = tree();
        assertThatCode(() -> access.checkReadable(nobody, data)).doesNotThrowAnyException();
    }

    @Test
    void unreadableFileDeepInTreeIsRefusedByName() throws IOException {
        Path data = tree();
        Path secret = Files.writeString(data.resolve("sub/secret.bin"), "s");
        Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));
        assertThatThrownBy(() -> access.checkReadable(nobody, data))
                .isInstanceOfSatisfying(ControlException.class, e -> {
                    assertThat(e.type()).isEqualTo("AccessDenied");
                    assertThat(e.getMessage()).contains(secret.toString(), "nobody");
                });
    }

    @Test
    void fileBehindUnsearchableDirectoryIsRefused() throws IOException {
        Path data = tree();
        Files.setPosixFilePermissions(data.resolve("sub"), PosixFilePermissions.fromString("rwx------"));
        assertThatThrownBy(() -> access.checkReadable(nobody, data.resolve("sub/a.txt")))
                .hasMessageContaining(data.resolve("sub").toString());
    }

    @Test
    void rootMayReadAnything() throws IOException {
        Path data = tree();
        Files.setPosixFilePermissions(data.resolve("sub/a.txt"), PosixFilePermissions.fromString("---------"));
        assertThatCode(() -> access.checkReadable(new Peer(0, 0, "root", Set.of(0)), data)).doesNotThrowAnyException();
    }
}
