package io.warpdata.daemon.warpd;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The folders of the cache directory that warpd keeps to itself. They hold copies of dataset
 * bytes (cached blocks, manifests and member indexes, staged publishes), while a mount without
 * {@code --allow-other} shows them to warpd's user only; made with the usual umask (0755) they gave
 * every local user what the mount refused them.
 * <ul>
 *   <li>a cache directory warpd makes is its owner's only (0700);</li>
 *   <li>one that exists is left as it is (it may be a shared disk's folder, or systemd's
 *       {@code CacheDirectory=} with its own mode, 0750 for the unit's group), but warpd's folders
 *       in it are made 0700, and those an older warpd made readable by its group or others are
 *       made 0700 too (the unit's group is also the control socket's users: they reach data
 *       through warpd, not by reading its cache; audit 20).</li>
 * </ul>
 */
final class PrivateDirectories {
    private static final Logger LOG = LoggerFactory.getLogger(PrivateDirectories.class);
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> NOT_OWNER = EnumSet.of(PosixFilePermission.GROUP_READ,
            PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_READ,
            PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);

    /** The cache directory's folder of the catalog's last known state (pointers, manifests). */
    static final String CATALOG = "catalog";
    /** The cache directory's folder of publishes staged through warpd. */
    static final String PUBLISH_STAGING = "publish-staging";
    /** warpd's folders in the cache directory: the block cache, the catalog's known state, staged publishes. */
    static final List<String> FOLDERS = List.of(io.warpdata.blobcache.cache.BlockCache.FOLDER, CATALOG, PUBLISH_STAGING);

    private PrivateDirectories() {
    }

    /**
     * Makes the cache directory and {@code folders} of it, as above.
     *
     * @param uid warpd's user: only folders it owns are changed
     * @throws IOException if one cannot be made or changed
     */
    static void prepare(Path cacheDir, List<String> folders, long uid) throws IOException {
        make(cacheDir);
        requireTrusted(cacheDir, uid);
        for (String f : folders) {
            Path dir = cacheDir.resolve(f);
            if (!make(dir)) {
                requireOwn(dir, uid);
                makeOwnersOnly(dir, uid);
            }
        }
    }

    /**
     * Refuses a cache directory another user could change under warpd: one owned by a user other
     * than warpd's or root, or writable by others (or its group) without the sticky bit. In one,
     * that user could swap warpd's folders for their own and have forged blocks served, or point
     * them elsewhere for warpd to clean up.
     */
    private static void requireTrusted(Path dir, long uid) throws IOException {
        long owner = ((Number) Files.getAttribute(dir, "unix:uid")).longValue();
        int mode = ((Number) Files.getAttribute(dir, "unix:mode")).intValue();
        if (owner != uid && owner != 0) {
            throw new UnsafeCacheDirectoryException(dir + " belongs to uid " + owner + ", not to warpd's user (uid " + uid
                    + ") or root: that user could replace the cached blocks warpd serves");
        }
        boolean sticky = (mode & 01000) != 0;
        if ((mode & 0022) != 0 && !sticky) {
            throw new UnsafeCacheDirectoryException(dir + " can be written by other users (mode "
                    + Integer.toOctalString(mode & 07777) + "): they could swap warpd's folders in it for their own");
        }
    }

    /** Refuses one of warpd's folders that is a symlink or belongs to another user. */
    private static void requireOwn(Path dir, long uid) throws IOException {
        if (Files.isSymbolicLink(dir)) {
            throw new UnsafeCacheDirectoryException(dir + " is a symlink (to " + Files.readSymbolicLink(dir)
                    + "): warpd makes its folders itself and never follows one");
        }
        long owner = ((Number) Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS)).longValue();
        if (owner != uid) {
            throw new UnsafeCacheDirectoryException(dir + " belongs to uid " + owner + ", not to warpd's user (uid " + uid
                    + "): warpd trusts only the folders it made");
        }
    }

    /** A cache directory warpd will not use; the message says why. */
    static final class UnsafeCacheDirectoryException extends IOException {
        UnsafeCacheDirectoryException(String message) {
            super(message);
        }
    }

    /** @return true if {@code dir} was made now, for its owner only; false if it was there */
    private static boolean make(Path dir) throws IOException {
        if (Files.isDirectory(dir)) {
            return false;
        }
        Path parent = dir.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        try {
            // The umask only takes bits away: 0700 stays 0700.
            Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
            return true;
        } catch (FileAlreadyExistsException raced) {
            return false;
        }
    }

    private static void makeOwnersOnly(Path dir, long uid) throws IOException {
        if (Files.isSymbolicLink(dir) || !Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Object owner = Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        if (!(owner instanceof Number n) || n.longValue() != uid) {
            return;
        }
        Set<PosixFilePermission> perms = Files.getPosixFilePermissions(dir, LinkOption.NOFOLLOW_LINKS);
        String was = PosixFilePermissions.toString(perms);
        if (perms.removeAll(NOT_OWNER)) {
            Files.setPosixFilePermissions(dir, perms);
            LOG.info("{} was {} (made by an older warpd); it holds cached dataset bytes, so it is now its owner's"
                    + " only ({})", dir, was, PosixFilePermissions.toString(perms));
        }
    }
}
