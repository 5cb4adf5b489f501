package io.warpdata.daemon.warpd;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The cache directory's folders are warpd's user's only (they hold dataset bytes). */
class PrivateDirectoriesTest {
    @TempDir
    Path tmp;

    private static String mode(Path p) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
    }

    private static long myUid(Path p) throws IOException {
        return ((Number) Files.getAttribute(p, "unix:uid")).longValue();
    }

    @Test
    void aCacheDirectoryWarpdMakesAndItsFoldersAreTheOwnersOnly() throws IOException {
        Path cache = tmp.resolve("a/b/cache");

        PrivateDirectories.prepare(cache, PrivateDirectories.FOLDERS, myUid(tmp));

        assertThat(mode(cache)).isEqualTo("rwx------");
        for (String f : PrivateDirectories.FOLDERS) {
            assertThat(mode(cache.resolve(f))).as(f).isEqualTo("rwx------");
        }
        assertThat(mode(tmp.resolve("a/b"))).as("parents are made as mkdir -p makes them").isNotEqualTo("rwx------");
    }

    @Test
    void anExistingCacheDirectoryIsLeftAsItIsAndWarpdsOldFoldersLoseOthersAccess() throws IOException {
        Path cache = Files.createDirectory(tmp.resolve("shared"));
        Files.setPosixFilePermissions(cache, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path old = Files.createDirectory(cache.resolve("v1"));
        Files.setPosixFilePermissions(old, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path mine = Files.createDirectory(cache.resolve("notes"));
        Files.setPosixFilePermissions(mine, PosixFilePermissions.fromString("rwxr-xr-x"));

        PrivateDirectories.prepare(cache, PrivateDirectories.FOLDERS, myUid(tmp));

        assertThat(mode(cache)).as("the user's directory").isEqualTo("rwxr-xr-x");
        assertThat(mode(old)).as("an older warpd's folder: group kept, others removed").isEqualTo("rwxr-x---");
        assertThat(mode(cache.resolve("catalog"))).isEqualTo("rwx------");
        assertThat(mode(mine)).as("not warpd's").isEqualTo("rwxr-xr-x");
    }

    @Test
    void aFolderOfAnotherUserIsNotChanged() throws IOException {
        Path cache = Files.createDirectory(tmp.resolve("c"));
        Path v1 = Files.createDirectory(cache.resolve("v1"));
        Files.setPosixFilePermissions(v1, PosixFilePermissions.fromString("rwxr-xr-x"));

        PrivateDirectories.prepare(cache, List.of("v1"), myUid(tmp) + 12345);

        assertThat(mode(v1)).isEqualTo("rwxr-xr-x");
    }
}
