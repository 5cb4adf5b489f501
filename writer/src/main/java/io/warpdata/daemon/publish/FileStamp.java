package io.warpdata.daemon.publish;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * What a file was when publish hashed it: which file (device and inode, through any link), its
 * size, and when its bytes and its inode last changed. A publish uploads a table's files and
 * tar shards from where they are, after hashing them; a file rewritten in place, or a link
 * moved to another, in between would put other bytes in the store under the first bytes' hash,
 * and a later publish would skip that object as present (the review of audit 45's link race).
 *
 * @param identity {@code dev:ino}
 * @param size     bytes
 * @param modified last modification, ns
 * @param changed  last inode change (a restored mtime still moves it), ns
 */
record FileStamp(String identity, long size, long modified, long changed) {
    static FileStamp of(Path file) throws IOException {
        Map<String, Object> a = Files.readAttributes(file, "unix:dev,ino,size,lastModifiedTime,ctime");
        return new FileStamp(a.get("dev") + ":" + a.get("ino"), (Long) a.get("size"),
                nanos(a.get("lastModifiedTime")), nanos(a.get("ctime")));
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
            now = of(file);
        } catch (IOException e) {
            throw new InvalidInputException("Cannot read " + file + " " + when + ": " + e.getMessage(),
                    "Check that nothing moves or deletes it during the publish, then publish again.", e);
        }
        if (!now.equals(this)) {
            throw new InvalidInputException(file + " changed " + when + " (" + describe(now) + "): what was hashed is"
                    + " not what would be stored; nothing of it was kept",
                    "Publish again once its writer has finished (for a folder behind a 'latest' link, once the link"
                            + " stays put).");
        }
    }

    private String describe(FileStamp now) {
        if (!now.identity.equals(identity)) {
            return "it is another file now: a link moved, or it was replaced";
        }
        if (now.size != size) {
            return size + " bytes then, " + now.size + " now";
        }
        return "it was written to";
    }
}
