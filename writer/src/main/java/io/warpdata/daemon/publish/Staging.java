package io.warpdata.daemon.publish;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The staging directory of a publish or a view: a fresh directory below {@code --staging-dir}
 * that holds what is written before it is uploaded, and is removed when closed, best effort.
 *
 * <p>A publish that is killed ({@code SIGKILL}, the OOM killer, a crash of warpd) cannot remove
 * its directory, and each left a whole copy of the packed data behind (hundreds of MB in the
 * cache directory or {@code /tmp}) that nothing ever removed. So each directory holds a lock file
 * locked while its publish runs, and the next publish (and warpd at start, for its own) removes
 * the directories of the same kind whose lock nobody holds: their publish is gone. Directories
 * without a lock file (left by a version before this one) are removed once a day old.
 */
public final class Staging implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Staging.class);
    /** Held locked by the publish that owns the directory. */
    static final String LOCK = ".warp-staging.lock";
    /** A folder still being made ({@code .PREFIX...}) changed more recently than this may be a publish starting. */
    static final Duration JUST_MADE = Duration.ofMinutes(1);
    /** Directories without a lock file this old are leftovers of an earlier version. */
    static final Duration UNLOCKED_LEFTOVER_AGE = Duration.ofDays(1);

    private final Path dir;
    private final FileChannel lockFile;

    private Staging(Path dir, FileChannel lockFile) {
        this.dir = dir;
        this.lockFile = lockFile;
    }

    /** The directory. */
    public Path dir() {
        return dir;
    }

    /**
     * A fresh directory below {@code parent} (created if missing), named {@code prefix...}, locked
     * until closed; leftovers of killed publishes named {@code prefix...} are removed first.
     *
     * @param room what the directory must have room for, for the message
     * @throws InvalidInputException if it cannot be created
     */
    public static Staging create(Path parent, String prefix, String room) {
        Path making;
        try {
            Files.createDirectories(parent);
            removeLeftovers(parent, prefix);
            // Made as .PREFIX..., locked, then renamed: a folder named PREFIX... is locked from
            // the moment it has that name, so no age tells a publish starting from one that is
            // gone (the review: a 2 s window, and before it a minute, which left a warpd restarted
            // during a publish with its full copy until a publish a minute later; audit 42).
            making = Files.createTempDirectory(parent, "." + prefix);
        } catch (IOException e) {
            throw new InvalidInputException("Cannot create a staging directory under " + parent + ": " + e,
                    "Pass --staging-dir DIR with " + room + ".", e);
        }
        Path dir = making;
        FileChannel ch = null;
        try {
            ch = FileChannel.open(making.resolve(LOCK), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            if (ch.tryLock() == null) {
                throw new IOException("its lock file is locked by another process");
            }
            // The lock is the open file's, and goes with it through the rename.
            dir = Files.move(making, parent.resolve(making.getFileName().toString().substring(1)),
                    StandardCopyOption.ATOMIC_MOVE);
            return new Staging(dir, ch);
        } catch (IOException | OverlappingFileLockException e) {
            closeQuietly(ch);
            delete(dir);
            throw new InvalidInputException("Cannot lock the staging directory " + dir + ": " + e,
                    "Pass --staging-dir DIR on a local file system that supports locks, with " + room + ".", e);
        }
    }

    /**
     * Removes the directories named {@code prefix...} in {@code parent} that belong to this user
     * and whose publish is gone (their lock file not locked, or none and a day old).
     *
     * @return the bytes removed
     */
    public static long removeLeftovers(Path parent, String prefix) {
        List<Path> candidates;
        try (Stream<Path> s = Files.list(parent)) {
            candidates = s.filter(p -> (p.getFileName().toString().startsWith(prefix)
                    || p.getFileName().toString().startsWith("." + prefix))
                    && Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS) && mine(p)).toList();
        } catch (IOException e) {
            return 0;
        }
        long removed = 0;
        int count = 0;
        for (Path d : candidates) {
            if (abandoned(d)) {
                long bytes = size(d);
                delete(d);
                if (!Files.exists(d, LinkOption.NOFOLLOW_LINKS)) {
                    removed += bytes;
                    count++;
                }
            }
        }
        if (count > 0) {
            LOG.info("removed {} staging director{} ({} bytes) left in {} by publishes that were killed", count,
                    count == 1 ? "y" : "ies", removed, parent);
        }
        return removed;
    }

    /**
     * Whether nobody holds {@code d}'s lock (its publish is gone), or it has none and is old. A
     * folder named PREFIX... is locked from the moment it has that name ({@link #create}); one
     * still being made ({@code .PREFIX...}) may be a publish between making it and locking it, so
     * it is left alone for a minute. One without a lock file (an earlier version's) is a day old.
     */
    private static boolean abandoned(Path d) {
        Path lock = d.resolve(LOCK);
        Instant changed;
        try {
            changed = Files.getLastModifiedTime(d, LinkOption.NOFOLLOW_LINKS).toInstant();
        } catch (IOException e) {
            return false;
        }
        if (d.getFileName().toString().startsWith(".") && changed.isAfter(Instant.now().minus(JUST_MADE))) {
            return false;
        }
        if (!Files.exists(lock, LinkOption.NOFOLLOW_LINKS)) {
            return d.getFileName().toString().startsWith(".")
                    || changed.isBefore(Instant.now().minus(UNLOCKED_LEFTOVER_AGE));
        }
        try (FileChannel ch = FileChannel.open(lock, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
            FileLock held = ch.tryLock();
            if (held == null) {
                return false; // another process's publish runs
            }
            held.release();
            return true;
        } catch (OverlappingFileLockException e) {
            return false; // a publish of this process runs
        } catch (IOException e) {
            return false;
        }
    }

    private static boolean mine(Path p) {
        try {
            return ((Number) Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS)).intValue()
                    == io.warpdata.daemon.control.ProcessIdentity.uid();
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return false;
        }
    }

    private static long size(Path d) {
        AtomicLong total = new AtomicLong();
        try (Stream<Path> s = Files.walk(d)) {
            s.forEach(p -> {
                try {
                    if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                        total.addAndGet(Files.size(p));
                    }
                } catch (IOException e) {
                    // Gone meanwhile.
                }
            });
        } catch (IOException | java.io.UncheckedIOException e) {
            // What was counted.
        }
        return total.get();
    }

    /** Removes the directory and releases its lock, best effort: a leftover file is not worth failing a finished publish. */
    @Override
    public void close() {
        delete(dir);
        closeQuietly(lockFile);
    }

    /** Removes {@code dir} and all below it, best effort. */
    static void delete(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    // Left behind; see above.
                }
            });
        } catch (IOException | java.io.UncheckedIOException e) {
            // Not listable (already gone, or unreadable): nothing more to do.
        }
    }

    private static void closeQuietly(FileChannel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException e) {
                // Releasing the lock is all that mattered.
            }
        }
    }
}
