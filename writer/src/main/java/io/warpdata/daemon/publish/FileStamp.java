package io.warpdata.daemon.publish;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * What an input file was when publish first read it: which file (device and inode, through any
 * link), its size, and when its bytes and its inode last changed. Publish reads a file more than
 * once (a table's footer, then its hash, then its upload; a tar's index, then its hash and
 * upload; a packed file's scan, then its copy): a file rewritten in place, or a link moved to
 * another, in between would make a version whose facts come from one file and bytes from another,
 * a member that never existed, or other bytes in the store under the first bytes' hash, which a
 * later publish skips as present (audits 45 and 46). Each read is checked against the stamp of the first.
 *
 * @param identity a 32-bit hash of the file system's key for the file (device and inode), not the
 *                 key, as one is kept per packed file (1.28M for an ImageNet folder): a collision
 *                 can only hide a change, never invent one
 * @param size     bytes
 * @param modified last modification, ns
 * @param changed  last inode change (a restored mtime still moves it), ns; -1 when not read (a
 *                 folder walk's attributes carry none), then not compared
 */
record FileStamp(long identity, long size, long modified, long changed) {
    static FileStamp of(Path file) throws IOException {
        Map<String, Object> a = Files.readAttributes(file, "unix:fileKey,size,lastModifiedTime,ctime");
        return new FileStamp(java.util.Objects.hashCode(a.get("fileKey")), (Long) a.get("size"),
                nanos(a.get("lastModifiedTime")), nanos(a.get("ctime")));
    }

    /** From attributes a walk already read (no second stat per file): without the change time. */
    static FileStamp of(java.nio.file.attribute.BasicFileAttributes a) {
        return new FileStamp(java.util.Objects.hashCode(a.fileKey()), a.size(), a.lastModifiedTime().to(java.util.concurrent.TimeUnit.NANOSECONDS), -1);
    }

    /**
     * {@link #of(Path)}, a file that cannot be read said as the input's fault.
     *
     * @throws InvalidInputException if it cannot be read
     */
    static FileStamp read(Path file) {
        try {
            return of(file);
        } catch (IOException e) {
            throw new InvalidInputException("Cannot read " + file + ": " + e.getMessage(),
                    "Check that the file exists and is readable by you, then publish again.", e);
        }
    }

    /**
     * Size, modification time and, where both stamps have it, change time. A stamp without a
     * change time (a packed file's, from its folder's listing) compares the first two.
     */
    private boolean sameAs(FileStamp now) {
        // Not the identity: a FUSE file system without stable inode numbers renumbers an
        // untouched file (the reviews), and a file put in its place has its own change time.
        return size == now.size && modified == now.modified && (changed < 0 || now.changed < 0 || changed == now.changed);
    }

    private static long nanos(Object time) {
        return ((java.nio.file.attribute.FileTime) time).to(java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    /**
     * @throws InvalidInputException if {@code file} is no longer what this stamp says
     */
    void requireSame(Path file, String when) {
        FileStamp now;
        try {
            // Without a change time to compare, the plain attributes (one per packed file: cheaper
            // than the unix view's map).
            now = changed < 0 ? of(Files.readAttributes(file, java.nio.file.attribute.BasicFileAttributes.class)) : of(file);
        } catch (IOException e) {
            throw new InvalidInputException("Cannot read " + file + " " + when + ": " + e.getMessage(),
                    "Check that nothing moves or deletes it during the publish, then publish again.", e);
        }
        if (!sameAs(now)) {
            throw new InvalidInputException(file + " changed " + when + " (" + describe(now) + "): what was hashed is"
                    + " not what would be stored; nothing of it was kept",
                    "Publish again once its writer has finished (for a folder behind a 'latest' link, once the link"
                            + " stays put).");
        }
    }

    private String describe(FileStamp now) {
        if (now.identity != identity) {
            return "it is another file now: a link moved, or it was replaced";
        }
        if (now.size != size) {
            return size + " bytes then, " + now.size + " now";
        }
        if (now.modified != modified) {
            return "it was written to";
        }
        // Only the inode's change time: written with its time put back, or linked, or its
        // owner, permissions or attributes changed (the review: not always a writer).
        return "its inode changed: written with its time put back, linked, or its owner, permissions or attributes changed";
    }
}
