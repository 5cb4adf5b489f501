package io.warpdata.daemon.warpd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
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
        assertThat(mode(old)).as("an older warpd's folder: its owner's only, as a new one").isEqualTo("rwx------");
        assertThat(mode(cache.resolve("catalog"))).isEqualTo("rwx------");
        assertThat(mode(mine)).as("not warpd's").isEqualTo("rwxr-xr-x");
    }

    @Test
    void aFolderOfAnotherUserIsRefusedAndNotChanged() throws IOException {
        Path cache = Files.createDirectory(tmp.resolve("c"));
        Files.setPosixFilePermissions(cache, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path v1 = Files.createDirectory(cache.resolve("v1"));
        Files.setPosixFilePermissions(v1, PosixFilePermissions.fromString("rwxrwxrwx"));
        long other = myUid(tmp) + 12345;
        Assumptions.assumeTrue(myUid(tmp) == 0, "needs root to give a folder to another user");
        Files.setAttribute(cache, "unix:uid", (int) other); // warpd's user's directory...
        Files.setAttribute(v1, "unix:uid", 0);               // ...holding a v1/ someone else made

        assertThatThrownBy(() -> PrivateDirectories.prepare(cache, List.of("v1"), other))
                .isInstanceOf(PrivateDirectories.UnsafeCacheDirectoryException.class)
                .hasMessageContaining("belongs to uid 0, not to warpd's user");
        assertThat(mode(v1)).isEqualTo("rwxrwxrwx");
    }

    /** Another local user made the cache directory, or its folders as symlinks to what warpd would clean up. */
    @Test
    void aCacheDirectoryAnotherUserCouldChangeIsRefusedBeforeAnythingInItIsTouched() throws IOException {
        Assumptions.assumeTrue(myUid(tmp) == 0, "needs root to give a directory to another user");
        Path theirs = Files.createDirectory(tmp.resolve("theirs"));
        Files.setAttribute(theirs, "unix:uid", 1002);
        assertThatThrownBy(() -> PrivateDirectories.prepare(theirs, PrivateDirectories.FOLDERS, 0))
                .isInstanceOf(PrivateDirectories.UnsafeCacheDirectoryException.class)
                .hasMessageContaining("belongs to uid 1002");
        assertThat(theirs.resolve("v1")).doesNotExist();

        Path open = Files.createDirectory(tmp.resolve("open"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        assertThatThrownBy(() -> PrivateDirectories.prepare(open, PrivateDirectories.FOLDERS, 0))
                .isInstanceOf(PrivateDirectories.UnsafeCacheDirectoryException.class)
                .hasMessageContaining("can be written by other users (mode 777)");
        Files.setAttribute(open, "unix:mode", 01777); // /tmp's: others cannot move warpd's folders
        PrivateDirectories.prepare(open, PrivateDirectories.FOLDERS, 0);
        assertThat(open.resolve("v1")).isDirectory();

        Path planted = Files.createDirectory(tmp.resolve("planted"));
        Path victim = Files.createDirectory(tmp.resolve("victim"));
        Files.writeString(victim.resolve("important.txt"), "keep me");
        Files.createSymbolicLink(planted.resolve("v1"), victim);
        assertThatThrownBy(() -> PrivateDirectories.prepare(planted, PrivateDirectories.FOLDERS, 0))
                .isInstanceOf(PrivateDirectories.UnsafeCacheDirectoryException.class)
                .hasMessageContaining("is a symlink");
        assertThat(victim.resolve("important.txt")).hasContent("keep me");
    }
}
