package io.warpdata.daemon.warpd;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** warpctl status's "open files": files under the mount in the processes' descriptor tables, directories apart. */
class OpenFilesTest {
    @TempDir
    Path tmp;

    private void fd(Path proc, int pid, int fd, String target, long ino) throws Exception {
        fd(proc, pid, fd, target, Long.toUnsignedString(ino));
    }

    private void fd(Path proc, int pid, int fd, String target, String ino) throws Exception {
        Path fds = Files.createDirectories(proc.resolve(pid + "/fd"));
        Path infos = Files.createDirectories(proc.resolve(pid + "/fdinfo"));
        Files.createSymbolicLink(fds.resolve(Integer.toString(fd)), Path.of(target));
        Files.writeString(infos.resolve(Integer.toString(fd)), "pos:\t0\nflags:\t0100000\nmnt_id:\t42\nino:\t" + ino + "\n");
    }

    @Test
    void countsFilesUnderTheMountAndDirectoriesApart() throws Exception {
        Path proc = tmp.resolve("proc");
        // Inodes 1 (the root) and 7 are directories of the mount.
        fd(proc, 100, 3, "/warp/vision/pets@abc/images/cat/0.png", 12);
        fd(proc, 100, 4, "/warp/vision/pets@abc/main/part-0.parquet", 13);
        fd(proc, 100, 5, "/warp/vision/pets@abc/images", 7);
        fd(proc, 200, 3, "/warp", 1);
        fd(proc, 200, 4, "/warpx/other.bin", 7);
        fd(proc, 200, 5, "socket:[1234]", 99);
        Files.createDirectories(proc.resolve("self"));
        Files.writeString(proc.resolve("uptime"), "1 1");

        OpenFiles.Count c = OpenFiles.count(proc, Path.of("/warp"), ino -> ino == 1 || ino == 7);

        assertThat(c.files()).isEqualTo(2);
        assertThat(c.directories()).isEqualTo(2);
    }

    @Test
    void readsAMemberFilesComputedInodeAsUnsigned() throws Exception {
        Path proc = tmp.resolve("proc");
        // A member file's inode has bit 63 set: the kernel prints it as an unsigned number.
        long member = (1L << 63) | (3L << 31) | 5;
        fd(proc, 100, 3, "/warp/vision/pets@abc/images/cat/0.png", member);
        fd(proc, 100, 4, "/warp/vision/pets@abc/images", 7);
        fd(proc, 100, 5, "/warp/vision/pets@abc/images/cat/1.png", "not-a-number");
        java.util.List<Long> asked = new java.util.ArrayList<>();

        OpenFiles.Count c = OpenFiles.count(proc, Path.of("/warp"), ino -> asked.add(ino) && ino == 7);

        assertThat(c.files()).isEqualTo(2);
        assertThat(c.directories()).isEqualTo(1);
        assertThat(asked).containsExactlyInAnyOrder(member, 7L);
    }

    @Test
    void seesThisProcessesOpenFilesInTheRealProc() throws Exception {
        Path mount = Files.createDirectories(tmp.resolve("mnt/ds")).getParent().toRealPath();
        Path file = Files.writeString(mount.resolve("ds/a.bin"), "x");
        long dirIno = (Long) Files.getAttribute(mount.resolve("ds"), "unix:ino");
        java.util.function.LongPredicate isDir = ino -> ino == dirIno;
        OpenFiles.Count before = OpenFiles.count(Path.of("/proc"), mount, isDir);

        try (FileChannel open = FileChannel.open(file); DirectoryStream<Path> dir = Files.newDirectoryStream(mount.resolve("ds"))) {
            OpenFiles.Count during = OpenFiles.count(Path.of("/proc"), mount, isDir);

            // Java holds a listed directory open twice (its stream and a descriptor it keeps).
            assertThat(during.files() - before.files()).isEqualTo(1);
            assertThat(during.directories() - before.directories()).isPositive();
            assertThat(open.isOpen() && dir.iterator().hasNext()).isTrue();
        }
    }
}
