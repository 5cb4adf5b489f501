package io.warpdata.daemon.publish;

import io.warpdata.store.StoreException;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.UnaryOperator;

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
     * A file system's clock tick: the kernel stamps files from a coarse clock (1-10 ms; 4 ms at
     * HZ=250), so two writes within one tick leave the same modification time. Twice the
     * coarsest, for margin.
     */
    static final long TICK_NANOS = 20_000_000L;
    /** The tick of a file system that keeps whole seconds (FAT keeps two). */
    static final long COARSE_TICK_NANOS = 2_000_000_000L;
    /** Waits for a file to settle before it is said to be still being written. */
    static final int SETTLE_TRIES = 3;

    /** The wall clock, and a way to wait on it: {@link #settle}'s, replaced in tests. */
    interface Clock {
        long nanos();

        void sleep(long nanos) throws InterruptedException;
    }

    /** The system's wall clock (file times are wall-clock times). */
    static final Clock WALL = new Clock() {
        @Override
        public long nanos() {
            Instant now = Instant.now();
            return now.getEpochSecond() * 1_000_000_000L + now.getNano();
        }

        @Override
        public void sleep(long nanos) throws InterruptedException {
            TimeUnit.NANOSECONDS.sleep(nanos);
        }
    };

    /** The clock tick its file system stamped it with: {@link #COARSE_TICK_NANOS} if its times are whole seconds. */
    long tickNanos() {
        long second = 1_000_000_000L;
        return modified % second == 0 && (changed < 0 || changed % second == 0) ? COARSE_TICK_NANOS : TICK_NANOS;
    }

    /**
     * Whether this stamp, taken between wall-clock times {@code fromNanos} and {@code toNanos},
     * could stay as it is through a write after it: its modification or change time lies within a
     * tick of then, so a write in the same tick gets the same time. A time further in the future
     * ({@code touch -d}) cannot: a write now gets an earlier time than it. This trusts the file
     * system's clock to be this machine's: a network file system whose server's clock is more
     * than a tick off is not covered.
     */
    boolean racy(long fromNanos, long toNanos) {
        return settledAt(fromNanos, toNanos) != Long.MIN_VALUE;
    }

    private static boolean within(long time, long after, long atMost) {
        return time > after && time <= atMost;
    }

    /**
     * When a write can no longer share a tick with this stamp's racy times ({@link #racy}), or
     * {@link Long#MIN_VALUE} if neither is.
     */
    private long settledAt(long fromNanos, long toNanos) {
        long tick = tickNanos();
        long at = Long.MIN_VALUE;
        if (within(modified, fromNanos - tick, toNanos + tick)) {
            at = modified + tick;
        }
        if (changed >= 0 && within(changed, fromNanos - tick, toNanos + tick)) {
            at = Math.max(at, changed + tick);
        }
        return at;
    }

    /**
     * A first stamp of an input publish reads more than once: {@link #of(Path)}, taken once its
     * file system's clock has moved a tick past the file's last change (see {@link #settle}).
     *
     * @throws InvalidInputException if it keeps changing
     * @throws StoreException          if interrupted while it waits ("Publish interrupted", as an upload's)
     */
    static FileStamp settled(Path file) throws IOException {
        return settled(file, WALL);
    }

    static FileStamp settled(Path file, Clock clock) throws IOException {
        long since = clock.nanos();
        FileStamp first = of(file);
        try {
            return settle(List.of(first), since, s -> s, s -> file, s -> {
                try {
                    return of(file);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }, clock).get(0);
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /**
     * {@code items}, stamped ({@code stampOf}) from wall-clock time {@code sinceNanos} on, with
     * the racy ones ({@link #racy}) stamped again ({@code restamp}) once the clock has moved a
     * tick past their last change. A file changed just before it was stamped (a writer still at
     * work) and again within the same tick, at the same size, would otherwise look untouched to
     * {@link #requireSame} (git's "racy" files; git reads them again, publish waits: a tick, once
     * for a whole folder's listing, and only when something changed in the last one).
     *
     * @throws InvalidInputException naming a file still changing after {@link #SETTLE_TRIES} waits
     * @throws StoreException          if interrupted while it waits ("Publish interrupted", as an upload's)
     */
    static <T> List<T> settle(List<T> items, long sinceNanos, Function<T, FileStamp> stampOf, Function<T, Path> fileOf,
                              UnaryOperator<T> restamp, Clock clock) {
        List<T> out = items;
        long since = sinceNanos;
        for (int attempt = 0; ; attempt++) {
            long now = clock.nanos();
            long until = Long.MIN_VALUE;
            BitSet racy = new BitSet();
            for (int k = 0; k < out.size(); k++) {
                long at = stampOf.apply(out.get(k)).settledAt(since, now);
                if (at != Long.MIN_VALUE) {
                    racy.set(k);
                    until = Math.max(until, at);
                }
            }
            if (racy.isEmpty()) {
                return out;
            }
            if (attempt == SETTLE_TRIES) {
                Path file = fileOf.apply(out.get(racy.nextSetBit(0)));
                throw new InvalidInputException(file + " is still being written: it changed again within each of "
                        + SETTLE_TRIES + " clock ticks publish waited for it to settle",
                        "Publish again once its writer has finished.");
            }
            try {
                if (until > now) {
                    clock.sleep(until - now);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new StoreException("Publish interrupted", "Publish again; uploaded blobs are reused.", e);
            }
            since = clock.nanos();
            out = new ArrayList<>(out);
            for (int k = racy.nextSetBit(0); k >= 0; k = racy.nextSetBit(k + 1)) {
                out.set(k, restamp.apply(out.get(k)));
            }
        }
    }

    /**
     * {@link #settled(Path)}, a file that cannot be read said as the input's fault.
     *
     * @throws InvalidInputException if it cannot be read, or keeps changing
     * @throws StoreException          if interrupted while it waits
     */
    static FileStamp read(Path file) {
        try {
            return settled(file);
        } catch (IOException e) {
            throw cannotRead(file, e);
        }
    }

    /**
     * {@link #of(Path)} without waiting: for a file publish wrote itself, which nobody else
     * writes. A file that cannot be read said as the input's fault.
     */
    static FileStamp readNow(Path file) {
        try {
            return of(file);
        } catch (IOException e) {
            throw cannotRead(file, e);
        }
    }

    private static InvalidInputException cannotRead(Path file, IOException e) {
        return new InvalidInputException("Cannot read " + file + ": " + e.getMessage(),
                "Check that the file exists and is readable by you, then publish again.", e);
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
