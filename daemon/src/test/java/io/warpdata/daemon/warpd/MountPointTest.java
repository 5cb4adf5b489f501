package io.warpdata.daemon.warpd;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MountPointTest {

    private static final List<String> MOUNTINFO = List.of(
            "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw",
            "98 22 0:50 / /warp rw,nosuid,nodev,relatime shared:60 - fuse.warp warp ro,user_id=0,group_id=0",
            "99 22 0:51 / /mnt/my\\040data rw,relatime - fuse.warp warp ro",
            "100 22 0:52 / /warp rw,relatime - tmpfs tmpfs rw");

    @Test
    void parsesMountPointTypeAndSourceWithEscapes() {
        List<MountPoint.Mount> mounts = MountPoint.parse(MOUNTINFO);
        assertThat(mounts).hasSize(4);
        assertThat(mounts.get(1)).isEqualTo(new MountPoint.Mount(Path.of("/warp"), "fuse.warp", "warp"));
        assertThat(mounts.get(2).mountPoint()).isEqualTo(Path.of("/mnt/my data"));
    }

    @Test
    void findsTheTopmostMountAtExactlyTheDirectory() {
        List<MountPoint.Mount> mounts = MountPoint.parse(MOUNTINFO);
        assertThat(MountPoint.find(mounts, Path.of("/warp"))).map(MountPoint.Mount::fsType).contains("tmpfs");
        assertThat(MountPoint.find(mounts, Path.of("/warp/ws"))).isEmpty();
    }

    @Test
    void refusesNonEmptyDirectoryNamingItsContents(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("notes.txt"), "x");
        assertThatThrownBy(() -> MountPoint.prepare(dir))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("not empty").hasMessageContaining("notes.txt");
    }

    @Test
    void createsMissingDirectoryAndAcceptsEmptyOne(@TempDir Path dir) {
        Path mount = dir.resolve("a/b");
        assertThat(MountPoint.prepare(mount)).contains(dir.resolve("a").toAbsolutePath().normalize());
        assertThat(mount).isEmptyDirectory();
        assertThat(MountPoint.prepare(mount)).as("it existed").isEmpty();
    }

    /** A warpd that could not mount (no access to /dev/fuse) left the directory it had made. */
    @Test
    void whatPrepareCreatedIsRemovedWhileEmptyAndNothingAboveIt(@TempDir Path dir) throws Exception {
        Path mount = dir.resolve("a/b/c");
        Path top = MountPoint.prepare(mount).orElseThrow();
        MountPoint.removeCreated(mount, top);
        assertThat(dir.resolve("a")).doesNotExist();
        assertThat(dir).exists();

        Path kept = dir.resolve("x/y");
        Path created = MountPoint.prepare(kept).orElseThrow();
        Files.writeString(dir.resolve("x/note"), "someone's");
        MountPoint.removeCreated(kept, created);
        assertThat(kept).doesNotExist();
        assertThat(dir.resolve("x/note")).as("not empty: kept").exists();
    }

    @Test
    void refusesAFile(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("f"), "x");
        assertThatThrownBy(() -> MountPoint.prepare(file)).hasMessageContaining("not a directory");
    }
}
