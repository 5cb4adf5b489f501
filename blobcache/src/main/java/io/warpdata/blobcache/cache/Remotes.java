package io.warpdata.blobcache.cache;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The remote tiers in the order they are tried, and the one place their bytes are verified,
 * their counters kept and their backoff decided: a range a tier returns is handed on only if it
 * passes the caller's {@link Check} (the SHA-256 of each block, of the member, or of the whole
 * blob). A tier that fails (error, 4xx/5xx, timeout, wrong-sized answer) or returns a wrong byte
 * is counted and skipped for a backoff, and the next one is asked; when none serves, the caller
 * reads the store, as with no remote tier at all. Never throws for a tier's sake.
 *
 * <p>After a backoff exactly one read tries the tier again (the others keep skipping it
 * meanwhile), so a hanging mirror costs at most one timeout per backoff period, not one per read.
 * One line is logged when a tier goes and one when it comes back; nothing per read. Each read
 * carries the health it was let in under (its ticket), and only a read holding the current ticket
 * changes it: the first failure of an up tier takes it down (one WARN), the probe after the
 * backoff brings it back (one INFO) or keeps it down (nothing logged). Reads that were in flight
 * when the tier went down, or came back, change nothing whatever they find: N reads failing at
 * once log one line, and a stale success does not bring back a tier that another read found dead.
 *
 * <p>Whole objects named by the hash of all their bytes (block hash lists) are asked of the same
 * tiers with {@link #get}, under the same rules; never a version manifest (its metadata is not
 * hashed), a pointer or a listing.
 *
 * <p>Ranges asked of a tier are aligned to the blob's block size (whole blocks, the last one
 * possibly short), so that an HTTP cache slicing at the block size holds exactly what is asked.
 */
final class Remotes implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Remotes.class);
    /**
     * 30 s: long enough that a dead or hanging mirror costs one timeout (2 s by default) per 30 s
     * of reading, short enough that a restarted cache is used again within half a minute.
     */
    static final Duration DEFAULT_BACKOFF = Duration.ofSeconds(30);

    /**
     * What a read keeps for the store after asking tiers: a tier is asked only while its timeout
     * and this (or a third of the time left, when less) are left before the read's deadline. Two
     * mirrors hanging for a raised --mirror-timeout of 30 s each took a read's whole 60 s, and the
     * read failed with EIO without reaching the store; now the second is skipped for that read
     * and the store gets the rest.
     */
    static final Duration STORE_RESERVE = Duration.ofSeconds(20);

    /** What the bytes of a range must be; hashes them, never changes them. */
    @FunctionalInterface
    interface Check {
        boolean ok(byte[] data, int off, int len);
    }

    /**
     * Sees the whole blocks a tier served for a range it was asked to widen (a member read on its
     * own), once the asked bytes passed their check: {@code data[0, len)} are bytes
     * {@code [offset, offset + len)} of the blob, block aligned, not verified as blocks. Called on
     * the reading thread, before {@link #read} returns; {@code data} is not the caller's to keep.
     */
    interface Widened {
        void served(long offset, byte[] data, int len);
    }

    /**
     * Where a tier stands: up, skipped until a time, or being tried by one read after a backoff.
     * Each state is a new object, compared by identity: the ticket a read was let in under.
     */
    private sealed interface Health {
        final class Up implements Health {
        }

        record Down(long untilNanos) implements Health {
        }

        final class Probing implements Health {
        }
    }

    /**
     * Where a tier's health changes are reported: a log line each way by default ({@link #LOG_LINES});
     * tests count them.
     */
    interface HealthLog {
        /** The tier was up and a read found it failing: it is skipped for {@code backoff}. */
        void down(String tier, Duration backoff, String reason);

        /** The probe after a backoff found the tier answering. */
        void back(String tier);
    }

    /** One WARN when a tier goes, one INFO when it comes back. */
    static final HealthLog LOG_LINES = new HealthLog() {
        @Override
        public void down(String tier, Duration backoff, String reason) {
            LOG.warn("mirror {} skipped for {} s: {}; reads go to the next mirror or the store meanwhile."
                            + " Check the cache (docs/fleet.md); 'warpctl cache stats' shows its counters",
                    tier, backoff.toSeconds(), reason);
        }

        @Override
        public void back(String tier) {
            LOG.info("mirror {} is back: answering again", tier);
        }
    };

    /** One tier with its health and counters. */
    private static final class Entry {
        final RemoteTier tier;
        final AtomicReference<Health> health = new AtomicReference<>(new Health.Up());
        final LongAdder hits = new LongAdder();
        final LongAdder misses = new LongAdder();
        final LongAdder servedBytes = new LongAdder();
        final LongAdder verificationFailures = new LongAdder();
        final LongAdder errors = new LongAdder();
        final LongAdder timeouts = new LongAdder();
        final LongAdder skipped = new LongAdder();
        /** "Not there" answers before any hit; past {@link RemoteTierStats#NEVER_HELD} one line is logged. */
        final java.util.concurrent.atomic.AtomicLong notHeldBeforeAHit = new java.util.concurrent.atomic.AtomicLong();

        Entry(RemoteTier tier) {
            this.tier = tier;
        }
    }

    static final Remotes NONE = new Remotes(List.of(), new ReadMetrics());
    /**
     * Widened reads up to this size use a per-thread scratch buffer: two default blocks, which
     * holds any member of up to 1 MiB widened to the blocks it spans (members are fetched on their
     * own up to 256 KiB); fetch threads are few (GETs in flight) and die when idle.
     */
    static final int SCRATCH_BYTES = 2 << 20;
    private final ThreadLocal<byte[]> scratch = ThreadLocal.withInitial(() -> new byte[SCRATCH_BYTES]);

    private final List<Entry> entries;
    private final ReadMetrics metrics;
    private final Duration backoff;
    private final long backoffNanos;
    private final LongSupplier nanoTime;
    private final HealthLog healthLog;
    private final boolean anyFillable;

    Remotes(List<RemoteTier> tiers, ReadMetrics metrics) {
        this(tiers, metrics, DEFAULT_BACKOFF, System::nanoTime);
    }

    /**
     * @param backoff how long a failing tier is skipped
     * @param nanoTime the clock (tests move it)
     */
    Remotes(List<RemoteTier> tiers, ReadMetrics metrics, Duration backoff, LongSupplier nanoTime) {
        this(tiers, metrics, backoff, nanoTime, LOG_LINES);
    }

    /** @param healthLog where a tier going down or coming back is reported ({@link #LOG_LINES}) */
    Remotes(List<RemoteTier> tiers, ReadMetrics metrics, Duration backoff, LongSupplier nanoTime, HealthLog healthLog) {
        this.entries = tiers.stream().map(Entry::new).toList();
        this.metrics = metrics;
        this.backoff = backoff;
        this.backoffNanos = backoff.toNanos();
        this.nanoTime = nanoTime;
        this.healthLog = healthLog;
        if (backoffNanos <= 0) {
            throw new IllegalArgumentException("remote tier backoff must be positive, was " + backoff);
        }
        this.anyFillable = tiers.stream().anyMatch(RemoteTier::fillable);
    }

    boolean isEmpty() {
        return entries.isEmpty();
    }

    /**
     * Fills {@code dst[off, off + len)} with bytes {@code [offset, offset + len)} of store key
     * {@code key} from the first remote tier whose bytes pass {@code check}. A range that is not
     * aligned to {@code blockSize} is widened to whole blocks for the tier (the last block ending
     * at {@code blobSize}); only the asked bytes are checked and copied.
     *
     * @param deadlineNanos the read's deadline ({@link System#nanoTime()}): tiers are asked only
     *        while their timeout and {@link #STORE_RESERVE} are left before it
     * @return true if a tier served them (verified); false if none did: read the store
     */
    boolean read(String key, long offset, byte[] dst, int off, int len, int blockSize, long blobSize, Check check,
                 long deadlineNanos) {
        return read(key, offset, dst, off, len, blockSize, blobSize, check, null, deadlineNanos);
    }

    /** As {@link #read(String, long, byte[], int, int, int, long, Check, long)}, showing {@code widened} the blocks a widened read got. */
    boolean read(String key, long offset, byte[] dst, int off, int len, int blockSize, long blobSize, Check check,
                 Widened widened, long deadlineNanos) {
        if (entries.isEmpty() || len <= 0 || blockSize <= 0) {
            return false;
        }
        long a0 = offset - offset % blockSize;
        long end = offset + len;
        long a1 = end % blockSize == 0 || end >= blobSize ? end : Math.min(blobSize, end - end % blockSize + blockSize);
        if (a0 == offset && a1 == end) {
            return readAligned(key, offset, dst, off, len, blockSize, check, deadlineNanos);
        }
        if (a1 - a0 > Integer.MAX_VALUE - 16) {
            return false;
        }
        int width = (int) (a1 - a0);
        // A member read widened to its blocks lands in this thread's scratch, not in a new array
        // per read (nothing lands in it after readAligned returns: RemoteTier.read's contract).
        byte[] wide = width <= SCRATCH_BYTES ? scratch.get() : new byte[width];
        int at = (int) (offset - a0);
        if (!readAligned(key, a0, wide, 0, width, blockSize, (d, o, l) -> check.ok(d, o + at, len), deadlineNanos)) {
            return false;
        }
        System.arraycopy(wide, at, dst, off, len);
        if (widened != null) {
            widened.served(a0, wide, width);
        }
        return true;
    }

    private boolean readAligned(String key, long offset, byte[] dst, int off, int len, int blockSize, Check check,
                                long deadlineNanos) {
        for (Entry e : entries) {
            Health ticket = admit(e, deadlineNanos);
            if (ticket == null) {
                continue;
            }
            boolean held;
            try {
                held = e.tier.read(key, offset, dst, off, len, blockSize);
            } catch (RuntimeException failure) {
                failure(e, ticket, failure);
                continue;
            }
            if (!held) {
                notHeld(e);
                answered(e, ticket);
                continue;
            }
            if (check.ok(dst, off, len)) {
                e.hits.increment();
                e.servedBytes.add(len);
                answered(e, ticket);
                return true;
            }
            poisoned(e, ticket, "bytes [" + offset + ", +" + len + ") of " + key);
            e.tier.rejected(key, offset, len, blockSize);
        }
        return false;
    }

    /**
     * A whole small object named by its hash (a block hash list) from the
     * first remote tier whose bytes pass {@code check}, with the same backoff and counters as
     * ranged reads.
     *
     * @param maxBytes a larger object is a failure of that tier
     * @param check whether the bytes are the object (their SHA-256 against the id they are named by)
     * @param deadlineNanos as {@link #read}'s
     * @return the verified bytes, or empty if no tier served them: read the store
     */
    Optional<byte[]> get(String key, int maxBytes, Predicate<byte[]> check, long deadlineNanos) {
        for (Entry e : entries) {
            Health ticket = admit(e, deadlineNanos);
            if (ticket == null) {
                continue;
            }
            Optional<byte[]> held;
            try {
                held = e.tier.get(key, maxBytes);
            } catch (RuntimeException failure) {
                failure(e, ticket, failure);
                continue;
            }
            if (held.isEmpty()) {
                notHeld(e);
                answered(e, ticket);
                continue;
            }
            if (check.test(held.get())) {
                e.hits.increment();
                e.servedBytes.add(held.get().length);
                answered(e, ticket);
                return held;
            }
            poisoned(e, ticket, key);
            e.tier.rejected(key, -1, 0, 0);
        }
        return Optional.empty();
    }

    /** Offers a whole object verified from the store to every tier warpd fills; never blocks or throws. */
    void offer(String key, byte[] verified) {
        if (!anyFillable) {
            return;
        }
        for (Entry e : entries) {
            if (e.tier.fillable()) {
                try {
                    e.tier.fillObject(key, verified);
                } catch (RuntimeException bug) {
                    LOG.debug("remote tier {}: fill of {} refused: {}", e.tier.describe(), key, bug.toString());
                }
            }
        }
    }

    /**
     * A "not there" answer (404). A mirror that answers so to everything (a wrong BASE, a cache
     * forwarding to the wrong bucket path) looked healthy for ever: up, no errors, 0% hits. Once,
     * after {@link RemoteTierStats#NEVER_HELD} such answers and not one hit, a line says what to check.
     */
    private void notHeld(Entry e) {
        e.misses.increment();
        if (e.hits.sum() == 0 && e.notHeldBeforeAHit.incrementAndGet() == RemoteTierStats.NEVER_HELD) {
            LOG.warn("mirror {} has answered 'not there' to all of its first {} requests and served nothing: if it"
                    + " should hold this store's objects, check its URL's BASE and the bucket path it forwards to"
                    + " (curl -r 0-0 <mirror>/blobs/sha256/... of an object the store has)", e.tier.describe(), RemoteTierStats.NEVER_HELD);
        }
    }

    private void failure(Entry e, Health ticket, RuntimeException failure) {
        e.errors.increment();
        e.misses.increment();
        if (failure instanceof RemoteTier.Failure f && f.timeout()) {
            e.timeouts.increment();
        }
        failed(e, ticket, failure.getMessage() == null ? failure.toString() : failure.getMessage());
    }

    private void poisoned(Entry e, Health ticket, String what) {
        e.verificationFailures.increment();
        e.misses.increment();
        metrics.verificationFailures.increment();
        // A poisoned cache keeps serving the same bytes: skip it for the backoff.
        failed(e, ticket, "served " + what + " that fail SHA-256 verification (check or empty that cache)");
    }

    /**
     * Offers bytes verified from the store to every tier warpd fills (S3 tiers). Never blocks,
     * never throws. The range must be block-aligned (whole blocks, the last one possibly short).
     */
    void fill(String key, long offset, byte[] verified, int off, int len, int blockSize) {
        if (!anyFillable || len <= 0 || blockSize <= 0 || offset % blockSize != 0) {
            return;
        }
        for (Entry e : entries) {
            if (e.tier.fillable()) {
                try {
                    e.tier.fill(key, offset, verified, off, len, blockSize);
                } catch (RuntimeException bug) {
                    LOG.debug("remote tier {}: fill of {} refused: {}", e.tier.describe(), key, bug.toString());
                }
            }
        }
    }

    /**
     * Whether a read may ask this tier now: not when waiting its timeout would leave the store
     * less than {@link #STORE_RESERVE} (or a third of the time left) of the read; after a backoff
     * only one read is let through.
     *
     * @return the health the read is let in under (its ticket), or null: skip the tier
     */
    private Health admit(Entry e, long deadlineNanos) {
        long left = deadlineNanos - System.nanoTime();
        if (left - e.tier.timeout().toNanos() < Math.min(STORE_RESERVE.toNanos(), left / 3)) {
            e.skipped.increment();
            return null;
        }
        while (true) {
            Health h = e.health.get();
            switch (h) {
                case Health.Up up -> {
                    return up;
                }
                case Health.Probing probing -> {
                    e.skipped.increment();
                    return null;
                }
                case Health.Down down -> {
                    if (nanoTime.getAsLong() - down.untilNanos() < 0) {
                        e.skipped.increment();
                        return null;
                    }
                    Health probe = new Health.Probing();
                    if (e.health.compareAndSet(h, probe)) {
                        return probe;
                    }
                }
            }
        }
    }

    /** The tier answered (bytes that verified, or "not here"): a probe brings it back. */
    private void answered(Entry e, Health ticket) {
        if (ticket instanceof Health.Probing && e.health.compareAndSet(ticket, new Health.Up())) {
            healthLog.back(e.tier.describe());
        }
    }

    /**
     * The tier failed or served wrong bytes: a read let in while it was up takes it down and
     * reports it; a probe keeps it down for another backoff, quietly; a read let in under an
     * older health changes nothing (another read already decided).
     */
    private void failed(Entry e, Health ticket, String reason) {
        if (e.health.compareAndSet(ticket, new Health.Down(nanoTime.getAsLong() + backoffNanos))
                && ticket instanceof Health.Up) {
            healthLog.down(e.tier.describe(), backoff, reason);
        }
    }

    /** Counters by tier, in the order the tiers are tried. */
    List<RemoteTierStats> snapshot() {
        List<RemoteTierStats> out = new ArrayList<>(entries.size());
        for (Entry e : entries) {
            String state = e.health.get() instanceof Health.Up ? "up" : "down";
            long[] fills = e.tier.fillCounts();
            out.add(new RemoteTierStats(e.tier.describe(), state, e.hits.sum(), e.misses.sum(), e.servedBytes.sum(),
                    e.verificationFailures.sum(), e.errors.sum(), e.timeouts.sum(), e.skipped.sum(),
                    fills[0], fills[1], fills[2]));
        }
        return out;
    }

    /** Closes every tier (an S3 tier writes what is queued first, for a few seconds at most). */
    @Override
    public void close() {
        for (Entry e : entries) {
            try {
                e.tier.close();
            } catch (RuntimeException ex) {
                LOG.debug("closing mirror {}: {}", e.tier.describe(), ex.toString());
            }
        }
    }
}
