package io.warpdata.daemon.control;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.stream.Stream;

/**
 * Publish through the daemon reads files with the daemon's rights, so before anything is read
 * it checks that the <em>peer</em> could read every source itself: every directory on the way
 * needs search (x) permission, every directory read (r+x), every file read (r), by the POSIX
 * owner/group/other bits against the peer's uid and groups. Symlinks are checked at their
 * target. ACLs are not consulted (they can only be stricter for the daemon's own reads). Root
 * may read everything.
 */
public final class SourceAccess {
    private static final int R = 4;
    private static final int X = 1;

    /**
     * @throws ControlException of type {@link ControlException#ACCESS_DENIED} naming the first
     *         path the peer could not read, or {@link ControlException#BAD_REQUEST} for a
     *         relative or missing path
     */
    public void checkReadable(Peer peer, Path source) {
        if (!source.isAbsolute()) {
            throw new ControlException(ControlException.BAD_REQUEST, "source path " + source + " is not absolute",
                    "warpctl sends absolute paths; if you speak the protocol yourself, resolve paths first");
        }
        if (peer.isRoot()) {
            return;
        }
        try {
            Path real;
            try {
                real = source.toRealPath();
            } catch (NoSuchFileException e) {
                throw new ControlException(ControlException.BAD_REQUEST, "source " + source + " does not exist",
                        "check the path");
            }
            checkAncestors(peer, real);
            if (Files.isDirectory(real)) {
                Files.walkFileTree(real, new SimpleFileVisitor<>() {
                    @Override
                    public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                        require(peer, dir, R | X, "list");
                        return FileVisitResult.CONTINUE;
                    }

                    @Override
                    public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                        if (attrs.isSymbolicLink()) {
                            Path target = file.toRealPath();
                            checkAncestors(peer, target);
                            require(peer, target, Files.isDirectory(target) ? R | X : R, "read");
                        } else {
                            require(peer, file, R, "read");
                        }
                        return FileVisitResult.CONTINUE;
                    }
                });
            } else {
                require(peer, real, R, "read");
            }
        } catch (IOException e) {
            throw new ControlException(ControlException.ACCESS_DENIED, "cannot check access to " + source + ": " + e,
                    "make the source readable, or publish in-process with warpctl publish --no-daemon");
        }
    }

    private static void checkAncestors(Peer peer, Path real) throws IOException {
        Path p = real.getParent();
        Stream.Builder<Path> chain = Stream.builder();
        while (p != null) {
            chain.add(p);
            p = p.getParent();
        }
        for (Path dir : chain.build().toList().reversed()) {
            require(peer, dir, X, "enter");
        }
    }

    private static void require(Peer peer, Path path, int want, String verb) throws IOException {
        int uid = (Integer) Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        int gid = (Integer) Files.getAttribute(path, "unix:gid", LinkOption.NOFOLLOW_LINKS);
        int mode = (Integer) Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        if (!allows(peer, uid, gid, mode, want)) {
            throw new ControlException(ControlException.ACCESS_DENIED,
                    peer.describe() + " cannot " + verb + " " + path + " (owner uid " + uid + ", gid " + gid + ", mode "
                            + String.format("%04o", mode & 07777) + "); publish through the daemon reads only what you could read yourself",
                    "make " + path + " readable to you (chmod/chgrp), or leave it out of the publish");
        }
    }

    /** POSIX permission classes: the owner bits for the owner, else the group bits for a member, else the other bits. */
    static boolean allows(Peer peer, int uid, int gid, int mode, int want) {
        int bits;
        if (peer.uid() == uid) {
            bits = (mode >> 6) & 7;
        } else if (peer.groups().contains(gid)) {
            bits = (mode >> 3) & 7;
        } else {
            bits = mode & 7;
        }
        return (bits & want) == want;
    }
}
