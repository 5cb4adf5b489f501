package io.warpdata.daemon.warpd;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;
import java.util.function.LongPredicate;

/**
 * Files open in the mount, counted from {@code /proc}. The kernel opens the mount's files without
 * asking warpd (OPEN answers ENOSYS, "no_open": no open, no release ever reaches warpd), so only
 * the processes' descriptor tables know which are open: every {@code /proc/PID/fd/N} whose target
 * lies under the mount is one, a directory when the inode its {@code fdinfo} names is one of the
 * mount's directories (the kernel keeps no O_DIRECTORY in a descriptor's flags).
 * warpd counts the processes it may look at: all of them as root, its own user's otherwise.
 */
final class OpenFiles {
    private OpenFiles() {
    }

    /** Descriptors open under the mount: regular files and directories. */
    record Count(long files, long directories) {
    }

    /**
     * @param proc  the proc file system ({@code /proc}; tests pass a tree of their own)
     * @param mount the mount point as the kernel names it (its real path)
     * @param isDirectory whether an inode of the mount is a directory
     */
    static Count count(Path proc, Path mount, LongPredicate isDirectory) {
        String root = mount.toString();
        String under = root.endsWith("/") ? root : root + "/";
        long files = 0;
        long dirs = 0;
        try (DirectoryStream<Path> pids = Files.newDirectoryStream(proc, p -> p.getFileName().toString().matches("[0-9]+"))) {
            for (Path pid : pids) {
                try (DirectoryStream<Path> fds = Files.newDirectoryStream(pid.resolve("fd"))) {
                    for (Path fd : fds) {
                        String target;
                        try {
                            target = Files.readSymbolicLink(fd).toString();
                        } catch (IOException | UnsupportedOperationException e) {
                            continue; // closed meanwhile
                        }
                        if (target.equals(root) || target.startsWith(under)) {
                            OptionalLong ino = inode(pid.resolve("fdinfo").resolve(fd.getFileName().toString()));
                            if (ino.isPresent() && isDirectory.test(ino.getAsLong())) {
                                dirs++;
                            } else {
                                files++;
                            }
                        }
                    }
                } catch (IOException | SecurityException e) {
                    // Gone, or another user's process we may not look at.
                }
            }
        } catch (IOException e) {
            return new Count(0, 0);
        }
        return new Count(files, dirs);
    }

    /**
     * The {@code ino:} of a descriptor's fdinfo (Linux 5.14+), if it has one. Unsigned: a member
     * file's inode number has bit 63 set (vfs's MemberInodes).
     */
    private static OptionalLong inode(Path fdinfo) {
        try {
            for (String line : Files.readAllLines(fdinfo)) {
                if (line.startsWith("ino:")) {
                    return OptionalLong.of(Long.parseUnsignedLong(line.substring("ino:".length()).trim()));
                }
            }
        } catch (IOException | NumberFormatException e) {
            return OptionalLong.empty();
        }
        return OptionalLong.empty();
    }
}
