package io.warpdata.vfs;

import io.warpdata.catalog.AmbiguousVersionException;
import io.warpdata.catalog.DatasetNotFoundException;
import io.warpdata.manifest.WarpException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The one place where failures become errnos (Linux numbers), are logged and are counted.
 *
 * <p>Every errno number Warp answers with is a constant here, and nowhere else.
 *
 * <ul>
 *   <li>Nothing there ({@link NoSuchEntryException}, {@link DatasetNotFoundException}): ENOENT,
 *       not logged (shells probe for files all the time); an ambiguous version prefix
 *       ({@link AmbiguousVersionException}) is ENOENT too, but logged: the user deserves to know.</li>
 *   <li>Wrong node type: ENOTDIR / EISDIR / EINVAL, not logged.</li>
 *   <li>A node the kernel has forgotten ({@link StaleNodeException}): ESTALE, logged.</li>
 *   <li>Anything else (store down, timeouts, a corrupted manifest or index, a block failing
 *       verification, bugs): EIO for that call only, one log line naming the path (which names
 *       the dataset version) and the cause. Log lines are rate-limited so that a dead store
 *       does not flood the journal; suppressed lines are counted and reported.</li>
 * </ul>
 */
public final class Errno {
    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int EINTR = 4;
    public static final int EIO = 5;
    public static final int EBADF = 9;
    public static final int EAGAIN = 11;
    public static final int EACCES = 13;
    public static final int ENODEV = 19;
    public static final int ENOTDIR = 20;
    public static final int EISDIR = 21;
    public static final int EINVAL = 22;
    public static final int ENOTTY = 25;
    public static final int EROFS = 30;
    public static final int ERANGE = 34;
    public static final int ENAMETOOLONG = 36;
    public static final int ENOSYS = 38;
    public static final int ENODATA = 61;
    public static final int EPROTO = 71;
    public static final int EOPNOTSUPP = 95;
    public static final int ESTALE = 116;

    private static final Logger LOG = LoggerFactory.getLogger(Errno.class);
    /** Enough lines to see what is failing, few enough that a dead store cannot flood the log. */
    private static final int LINES_PER_WINDOW = 20;
    private static final long WINDOW_NANOS = 10_000_000_000L;

    private final LongSupplier nanoClock;
    private final LongAdder notFound = new LongAdder();
    private final LongAdder ioErrors = new LongAdder();
    private final Map<String, LongAdder> ioErrorsByType = new ConcurrentHashMap<>();
    /**
     * The failure types a read fails with when the store or the bytes fail, counted from 0 from
     * the start: an alert on {@code warp_mount_io_errors_total{type="StoreUnavailable"}} sees a
     * series before the first error, not none.
     */
    static final List<String> USUAL_IO_ERRORS = List.of("StoreUnavailable", "StoreUnreachable", "StoreNotAnswering",
            "VerificationFailed", "BlobNotFound", "NotCached");
    private final AtomicLong windowStart;
    private final AtomicLong linesInWindow = new AtomicLong();
    private final AtomicLong suppressed = new AtomicLong();
    private final LongAdder suppressedTotal = new LongAdder();
    /** When the first and the last error of the lines not logged yet happened, for their summary line. */
    private final java.util.concurrent.atomic.AtomicReference<java.time.Instant> firstSuppressed =
            new java.util.concurrent.atomic.AtomicReference<>();
    private volatile java.time.Instant lastSuppressed;
    /** The recent errors for `warpctl status`, oldest first, each once (by operation, path and type). */
    private final java.util.LinkedHashMap<String, Repeats> recent = new java.util.LinkedHashMap<>();
    private static final int RECENT_LINES = 20;

    /** @param nanoClock monotonic time for the log rate limit (System::nanoTime in production) */
    public Errno(LongSupplier nanoClock) {
        this.nanoClock = nanoClock;
        this.windowStart = new AtomicLong(nanoClock.getAsLong());
        USUAL_IO_ERRORS.forEach(t -> ioErrorsByType.put(t, new LongAdder()));
    }

    /**
     * The errno (positive) for a failure of {@code operation} on {@code path}; logs and counts
     * it as the class comment says.
     */
    public int of(Throwable failure, String operation, String path) {
        return of(failure, operation, () -> path);
    }

    /**
     * As {@link #of(Throwable, String, String)}, building the path only if a line is logged (the
     * FUSE adapter knows nodes, not paths, and most failures are quiet ENOENTs).
     */
    public int of(Throwable failure, String operation, Supplier<String> path) {
        if (failure instanceof NoSuchEntryException || failure instanceof DatasetNotFoundException) {
            notFound.increment();
            return ENOENT;
        }
        if (failure instanceof AmbiguousVersionException e) {
            notFound.increment();
            log(operation, path, e);
            return ENOENT;
        }
        if (failure instanceof StaleNodeException e) {
            log(operation, path, e);
            return ESTALE;
        }
        if (failure instanceof WrongNodeTypeException e) {
            if (operation.equals("readlink")) {
                return EINVAL;
            }
            return switch (e.actual()) {
                case DIRECTORY -> EISDIR;
                case FILE -> ENOTDIR;
                case SYMLINK -> ENOTDIR;
            };
        }
        ioErrors.increment();
        String type = failure instanceof WarpException w ? w.type() : failure.getClass().getSimpleName();
        ioErrorsByType.computeIfAbsent(type, t -> new LongAdder()).increment();
        log(operation, path, failure);
        return EIO;
    }

    private void log(String operation, Supplier<String> where, Throwable failure) {
        long now = nanoClock.getAsLong();
        long start = windowStart.get();
        if (now - start >= WINDOW_NANOS && windowStart.compareAndSet(start, now)) {
            linesInWindow.set(0);
            long dropped = suppressed.getAndSet(0);
            java.time.Instant from = firstSuppressed.getAndSet(null);
            if (dropped > 0) {
                // Said with when they happened: the line comes with the next error, which may be
                // long after (audit 38: "in the last 10 s" for errors 49 s old).
                LOG.warn("{} more mount errors were not logged, from {} to {} (at most {} lines each {} s;"
                        + " warp_mount_log_lines_suppressed_total counts them all)", dropped,
                        from == null ? lastSuppressed : from, lastSuppressed,
                        LINES_PER_WINDOW, WINDOW_NANOS / 1_000_000_000L);
            }
        }
        // Remembered for status whether logged or not (it kept only what the log let through: the
        // start of a burst, never its end). A member's name may hold any character but NUL and
        // '/': one with a newline or an escape sequence must not forge a log line.
        String path = io.warpdata.manifest.Printable.of(where.get());
        boolean plain = failure instanceof AmbiguousVersionException || failure instanceof StaleNodeException;
        String message = io.warpdata.manifest.Printable.of(String.valueOf(failure.getMessage()));
        String type = failure instanceof WarpException w ? w.type() : failure.getClass().getName();
        remember(operation + " " + path + " " + type, plain ? operation + " " + path + ": " + message
                : failure instanceof WarpException w ? operation + " " + path + " failed (EIO): " + w.type() + ": " + message
                : operation + " " + path + " failed (EIO): " + io.warpdata.manifest.Printable.of(failure.toString()));
        if (linesInWindow.incrementAndGet() > LINES_PER_WINDOW) {
            java.time.Instant at = java.time.Instant.now();
            firstSuppressed.compareAndSet(null, at);
            lastSuppressed = at;
            suppressed.incrementAndGet();
            suppressedTotal.increment();
            return;
        }
        if (plain) {
            LOG.warn("{} {}: {}", operation, path, message);
        } else if (failure instanceof WarpException w) {
            LOG.warn("{} {} failed (EIO): {}: {} -- next: {}", operation, path, w.type(), message, io.warpdata.manifest.Printable.of(w.nextStep()));
        } else {
            // Not a Warp error: a bug; the stack trace is what makes it fixable.
            LOG.error("{} {} failed (EIO) with an unexpected error", operation, path, failure);
        }
    }

    /**
     * Keeps {@code line} among the recent ones; the same line again moves to the end with a count
     * (audit 45: four DataLoader workers retrying one outage's reads filled all 20 lines with the
     * same 4 files within a second, pushing out the errors before them).
     */
    private void remember(String key, String line) {
        Instant now = Instant.now();
        synchronized (recent) {
            Repeats r = recent.remove(key);
            recent.put(key, r == null ? new Repeats(line, now, now, 1) : new Repeats(line, r.first(), now, r.times() + 1));
            if (recent.size() > RECENT_LINES) {
                recent.pollFirstEntry();
            }
        }
    }

    /**
     * How often an error came, first and last, and its latest line: the same error is the same
     * operation, path and type, whatever numbers its message carries (an offset, "5 times in all":
     * the review).
     */
    private record Repeats(String line, Instant first, Instant last, long times) {
    }

    /** The last logged error lines, oldest first. */
    public List<String> recentErrors() {
        synchronized (recent) {
            List<String> out = new java.util.ArrayList<>(recent.size());
            recent.values().forEach(r -> out.add(r.last() + " " + r.line()
                    + (r.times() > 1 ? " (" + r.times() + " times since " + r.first() + ")" : "")));
            return out;
        }
    }

    /** Log lines dropped by the rate limit so far. */
    public long suppressedLogLines() {
        return suppressedTotal.sum();
    }

    /** ENOENT answers so far. */
    public long notFoundCount() {
        return notFound.sum();
    }

    /** EIO answers so far. */
    public long ioErrorCount() {
        return ioErrors.sum();
    }

    /** EIO answers by error type (e.g. StoreUnavailable, VerificationFailed, ManifestCorrupted). */
    public Map<String, Long> ioErrorsByType() {
        Map<String, Long> out = new LinkedHashMap<>();
        ioErrorsByType.entrySet().stream().sorted(Map.Entry.comparingByKey())
                .forEach(e -> out.put(e.getKey(), e.getValue().sum()));
        return out;
    }
}
