package io.warpdata.daemon.control;

import java.io.IOException;
import java.net.ConnectException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Objects;
import java.util.Optional;

/**
 * Creates the control socket safely and removes it again.
 *
 * <ul>
 * <li>The parent directory is created 0700 (0750 and the socket group's when one is given); an
 *     existing one must be a real directory (a symlink is refused, checked without following
 *     it), owned by us or root, and not writable by others unless sticky.</li>
 * <li>An existing socket path that is a symlink or not a socket is refused; a socket on which a
 *     daemon answers is refused (another warpd runs); a socket nobody answers on is stale (a
 *     crash) and is replaced.</li>
 * <li>The socket is bound under a temporary name, given mode 0660 and its group, and only then
 *     renamed into place, so nobody ever connects to it with the wrong mode.</li>
 * </ul>
 */
public final class SocketFile implements AutoCloseable {
    private static final int S_IFMT = 0170000;
    private static final int S_IFSOCK = 0140000;

    private final Path path;
    private final ServerSocketChannel channel;
    private final Object fileKey;

    private SocketFile(Path path, ServerSocketChannel channel, Object fileKey) {
        this.path = path;
        this.channel = channel;
        this.fileKey = fileKey;
    }

    /**
     * Binds a listening socket at {@code path}.
     *
     * @param socketGid group that may connect (socket and directory get it), or empty
     * @throws ControlException of type {@link ControlException#SOCKET_UNSAFE} naming the path
     *         and what to do, if the path is unsafe, in use, or cannot be created
     */
    public static SocketFile bind(Path path, Optional<Integer> socketGid) {
        Path socket = path.toAbsolutePath().normalize();
        Path dir = Objects.requireNonNull(socket.getParent(), "socket path has no parent");
        try {
            prepareDirectory(dir, socketGid);
            refuseUnsafeExisting(socket);
            Path tmp = dir.resolve("." + socket.getFileName() + "." + ProcessHandle.current().pid() + ".tmp");
            Files.deleteIfExists(tmp);
            ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            try {
                ch.bind(UnixDomainSocketAddress.of(tmp));
                Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-rw----"));
                if (socketGid.isPresent()) {
                    Files.setAttribute(tmp, "unix:gid", socketGid.get());
                }
                Files.move(tmp, socket, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                Object key = Files.readAttributes(socket, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
                return new SocketFile(socket, ch, key);
            } catch (IOException | RuntimeException e) {
                ch.close();
                Files.deleteIfExists(tmp);
                throw e;
            }
        } catch (IOException e) {
            throw unsafe("cannot create the control socket " + socket + ": " + e,
                    "check that " + dir + " is writable by the daemon's user, or pass --socket PATH", e);
        }
    }

    private static void prepareDirectory(Path dir, Optional<Integer> socketGid) throws IOException {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS) && !Files.isSymbolicLink(dir)) {
            Path parent = dir.getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            try {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
                // Set explicitly: the umask may have taken bits away, and the group is added only now.
                if (socketGid.isPresent()) {
                    Files.setAttribute(dir, "unix:gid", socketGid.get(), LinkOption.NOFOLLOW_LINKS);
                    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-x---"));
                } else {
                    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
                }
            } catch (FileAlreadyExistsException e) {
                // Someone created it between our check and now: fall through and check what it is.
            }
        }
        int owner = checkDirectory(dir);
        int mode = (Integer) Files.getAttribute(dir, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        int me = ProcessIdentity.uid();
        boolean sticky = (mode & 01000) != 0;
        // A socket group needs to enter the directory: one an earlier warpd made without a group
        // (0700, or another group) is given this one, as a new one would be (its socket was
        // 0660 root:group, and the group still got EACCES on the directory). Only a directory of
        // warpd's own that holds nothing but the socket: a shared one like /tmp is left alone.
        if (socketGid.isPresent() && owner == me && !sticky && onlySocketsIn(dir)) {
            int gid = (Integer) Files.getAttribute(dir, "unix:gid", LinkOption.NOFOLLOW_LINKS);
            if (gid != socketGid.get() || (mode & 0050) != 0050) {
                Files.setAttribute(dir, "unix:gid", socketGid.get(), LinkOption.NOFOLLOW_LINKS);
                Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-x---"));
            }
        }
    }

    /**
     * Refuses a socket directory that is a symbolic link, not a directory, someone else's, or
     * writable by others without the sticky bit.
     *
     * @return its owner's uid
     */
    private static int checkDirectory(Path dir) throws IOException {
        if (Files.isSymbolicLink(dir)) {
            throw unsafe("the socket directory " + dir + " is a symbolic link; refusing to follow it",
                    "remove it (rm " + dir + ") or pass --socket in a directory you own", null);
        }
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            throw unsafe("the socket directory " + dir + " exists and is not a directory",
                    "remove it or pass --socket PATH", null);
        }
        int owner = (Integer) Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        int mode = (Integer) Files.getAttribute(dir, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        int me = ProcessIdentity.uid();
        if (owner != me && owner != 0) {
            throw unsafe("the socket directory " + dir + " belongs to uid " + owner + ", not to us (uid " + me + ") or root",
                    "remove it, or pass --socket in a directory you own", null);
        }
        boolean writableByOthers = (mode & 0022) != 0;
        boolean sticky = (mode & 01000) != 0;
        if (writableByOthers && !sticky) {
            throw unsafe("the socket directory " + dir + " is writable by other users (mode "
                    + Integer.toOctalString(mode & 07777) + "); someone could replace the socket",
                    "chmod go-w " + dir + ", or pass --socket in a private directory", null);
        }
        return owner;
    }

    /** Whether {@code dir} holds nothing but sockets (a directory made for warpd's socket, not one of a user's). */
    private static boolean onlySocketsIn(Path dir) throws IOException {
        try (java.nio.file.DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path e : entries) {
                int mode = (Integer) Files.getAttribute(e, "unix:mode", LinkOption.NOFOLLOW_LINKS);
                if ((mode & S_IFMT) != S_IFSOCK) {
                    return false;
                }
            }
        }
        return true;
    }

    private static void refuseUnsafeExisting(Path socket) throws IOException {
        int mode;
        try {
            mode = (Integer) Files.getAttribute(socket, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return;
        }
        if (Files.isSymbolicLink(socket)) {
            throw unsafe(socket + " is a symbolic link, not a socket; refusing to follow or replace it",
                    "remove it (rm " + socket + ") if it is not yours, then start warpd again", null);
        }
        if ((mode & S_IFMT) != S_IFSOCK) {
            throw unsafe(socket + " exists and is not a socket; refusing to replace it",
                    "remove or move it, or pass --socket PATH", null);
        }
        if (answers(socket)) {
            throw unsafe("another warpd is already serving the control socket " + socket,
                    "stop it first (warpctl --socket " + socket + " status shows it), or pass --socket PATH", null);
        }
        // A socket nobody answers on: left over from a crash; the rename replaces it.
    }

    /**
     * Refuses a socket another warpd serves, before this one mounts anything: found only when
     * binding, it mounted, then unmounted again with the error.
     */
    public static void requireNotServed(Path socket) {
        Path dir = socket.toAbsolutePath().normalize().getParent();
        try {
            // What bind refuses, refused before anything is mounted (audit 37: warpd mounted, then
            // unmounted with the error).
            if (dir != null && (Files.exists(dir, LinkOption.NOFOLLOW_LINKS) || Files.isSymbolicLink(dir))) {
                checkDirectory(dir);
            }
            if (Files.isSymbolicLink(socket)) {
                // Not "another warpd is serving it" when it points at a live socket (audit 37).
                throw unsafe(socket + " is a symbolic link, not a socket; refusing to follow or replace it",
                        "remove it (rm " + socket + ") if it is not yours, then start warpd again", null);
            }
        } catch (IOException e) {
            throw unsafe("cannot check the control socket's directory " + dir + ": " + e,
                    "check that " + dir + " is readable by the daemon's user, or pass --socket PATH", e);
        }
        if (Files.exists(socket, LinkOption.NOFOLLOW_LINKS) && answers(socket)) {
            throw unsafe("another warpd is already serving the control socket " + socket,
                    "stop it first (warpctl --socket " + socket + " status shows it), or pass --socket PATH", null);
        }
    }

    /** True if something accepts connections at {@code socket}. */
    static boolean answers(Path socket) {
        try (SocketChannel probe = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            probe.connect(UnixDomainSocketAddress.of(socket));
            return true;
        } catch (ConnectException e) {
            return false;
        } catch (AccessDeniedException e) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static ControlException unsafe(String message, String next, Throwable cause) {
        return new ControlException(ControlException.SOCKET_UNSAFE, message, next, cause);
    }

    public Path path() {
        return path;
    }

    public ServerSocketChannel channel() {
        return channel;
    }

    /** Stops listening and removes the socket file if it is still the one we created. */
    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException e) {
            // Closing a listening socket does not fail in a way we could act on.
        }
        try {
            Object key = Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
            if (Objects.equals(key, fileKey)) {
                Files.deleteIfExists(path);
            }
        } catch (IOException e) {
            // Already gone, or replaced by someone else's socket: leave it.
        }
    }
}
