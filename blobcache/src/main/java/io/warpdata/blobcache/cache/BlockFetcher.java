package io.warpdata.blobcache.cache;

import io.warpdata.store.BlobStore;
import io.warpdata.store.StoreException;
import io.warpdata.store.StoreHealth;
import io.warpdata.store.StoreLayout;
import io.warpdata.store.StoreNotAnsweringException;
import io.warpdata.store.StoreUnavailableException;
import io.warpdata.store.StoreUnreachableException;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ranged reads from the store with bounded retries, and verification of every fetched block
 * against its SHA-256 before anyone sees it. Reads the bare store and tells its
 * {@link StoreHealth} (shared with the catalog, which reads through a
 * {@link io.warpdata.store.HealthCheckedStore}) of each attempt itself: an attempt while the store
 * is known unreachable fails at once ({@link StoreHealth#enter()}). Stateless apart from
 * counters; thread-safe.
 */
final class BlockFetcher {
    /** How long a key whose read gave up gets one attempt per read ({@link #gaveUp}). */
    static final Duration GAVE_UP_MEMORY = Duration.ofSeconds(30);
    /**
     * Attempts of one read that the store may leave unanswered (it took the connection and sent
     * nothing for its answer timeout) before the read gives up: one may be a stuck connection to
     * a healthy store; a second says the store is not answering this key. Its other keys may be
     * answered meanwhile (then the store's health does not fail reads at once), and each silent
     * attempt costs the answer timeout: a read used to wait its whole deadline, 60 s, and the
     * kernel's retry as long again, where a hung store is promised 15 s.
     */
    static final int MAX_SILENT_ATTEMPTS = 2;

    private static final Logger LOG = LoggerFactory.getLogger(BlockFetcher.class);

    private final BlobStore store;
    /** Told of every attempt; null: the store's health is not tracked (tests, tools). */
    private final StoreHealth health;
    private final ReadMetrics metrics;
    private final RetryPolicy policy;
    private final Remotes remotes;
    /** Blobs whose bad block was logged in the last minute. */
    private final OncePerMinute badLogged = new OncePerMinute();
    /**
     * Keys whose last read gave up (its deadline passed, or the store went silent on it twice),
     * for {@link #GAVE_UP_MEMORY}: their next reads get one attempt, not another deadline. A
     * reader that gets EIO reads again at once (the kernel retries a failed page read), and each
     * read used to wait its own 60 s: one {@code cat} of a store answering 500 took 119 s and 206
     * GETs of the same blob.
     */
    private final Cache<String, Boolean> gaveUp = Caffeine.newBuilder()
            .maximumSize(4096)
            .expireAfterWrite(GAVE_UP_MEMORY)
            .build();

    BlockFetcher(BlobStore store, ReadMetrics metrics, RetryPolicy policy) {
        this(store, null, metrics, policy, Remotes.NONE);
    }

    /**
     * @param health  told of each attempt, and asked before it (null: not tracked)
     * @param remotes the remote tiers tried, verified, before the store ({@link Remotes})
     */
    BlockFetcher(BlobStore store, StoreHealth health, ReadMetrics metrics, RetryPolicy policy, Remotes remotes) {
        this.store = store;
        this.health = health;
        this.metrics = metrics;
        this.policy = policy;
        this.remotes = remotes;
    }

    /**
     * Fills {@code dst[off, off + len)} with {@code [offset, offset + len)} of {@code key} from
     * the first remote tier whose bytes pass {@code check}; false if there is none (or none
     * served): the caller reads the store.
     */
    boolean fromRemotes(String key, long offset, byte[] dst, int off, int len, int blockSize, long blobSize,
                        Remotes.Check check, long deadlineNanos) {
        return fromRemotes(key, offset, dst, off, len, blockSize, blobSize, check, null, deadlineNanos);
    }

    /** As above, showing {@code widened} the whole blocks a tier served for a range widened to them. */
    boolean fromRemotes(String key, long offset, byte[] dst, int off, int len, int blockSize, long blobSize,
                        Remotes.Check check, Remotes.Widened widened, long deadlineNanos) {
        return !remotes.isEmpty() && remotes.read(key, offset, dst, off, len, blockSize, blobSize, check, widened,
                deadlineNanos);
    }

    /** Offers a block-aligned range verified from the store to the tiers warpd fills; never blocks. */
    void fillRemotes(String key, long offset, byte[] verified, int off, int len, int blockSize) {
        if (!remotes.isEmpty()) {
            remotes.fill(key, offset, verified, off, len, blockSize);
        }
    }

    /**
     * A whole small object named by its hash from the first remote tier whose bytes pass
     * {@code check}, or null (none, or none served): the caller reads the store.
     */
    byte[] objectFromRemotes(String key, int maxBytes, java.util.function.Predicate<byte[]> check, long deadlineNanos) {
        return remotes.isEmpty() ? null : remotes.get(key, maxBytes, check, deadlineNanos).orElse(null);
    }

    /** Offers a whole object verified from the store to the tiers warpd fills; never blocks. */
    void fillRemotesObject(String key, byte[] verified) {
        if (!remotes.isEmpty()) {
            remotes.offer(key, verified);
        }
    }

    Remotes remotes() {
        return remotes;
    }

    BlobStore store() {
        return store;
    }

    RetryPolicy policy() {
        return policy;
    }

    /** An absolute deadline (System.nanoTime based) one read deadline from now. */
    long deadlineFromNow() {
        return System.nanoTime() + policy.readDeadline().toNanos();
    }

    /**
     * Fetches blocks {@code [first, first+count)} of {@code blob} with one ranged GET into
     * {@code dst[dstOff, ...)}, verifies each block, and refetches a failing block once.
     *
     * @throws BlockVerificationException if a block fails verification twice
     * @throws StoreException if the store fails for good or the deadline passes
     */
    void fetchRun(BlobRef blob, BlockHashList list, int first, int count, byte[] dst, int dstOff,
            long deadlineNanos) {
        long offset = (long) first * list.blockSize();
        int len = runLength(list, first, count);
        String key = StoreLayout.blob(blob.id());
        readWithRetry(key, offset, dst, dstOff, len, deadlineNanos);
        int pos = dstOff;
        for (int b = first; b < first + count; b++) {
            verifyOrRefetch(blob, list, b, dst, pos, deadlineNanos);
            pos += list.blockLength(b);
        }
    }

    /**
     * Verifies block {@code b} held at {@code data[pos, ...)}; on a mismatch refetches it once
     * into the same place and verifies again.
     *
     * @return true if the bytes were right the first time, false if only the refetch was
     * @throws BlockVerificationException if the refetched bytes fail too (logged, naming the blob)
     */
    boolean verifyOrRefetch(BlobRef blob, BlockHashList list, int b, byte[] data, int pos, long deadlineNanos) {
        int bl = list.blockLength(b);
        if (list.verify(b, data, pos, bl)) {
            return true;
        }
        metrics.verificationFailures.increment();
        readWithRetry(StoreLayout.blob(blob.id()), (long) b * list.blockSize(), data, pos, bl, deadlineNanos);
        if (!list.verify(b, data, pos, bl)) {
            metrics.verificationFailures.increment();
            // Once a minute per blob: a reader retrying a damaged file logged a line a try (audit 38).
            if (badLogged.first(blob.id())) {
                LOG.warn("Block {} of blob {} from {} failed SHA-256 verification twice; failing the read (logged once a"
                        + " minute per blob; warp_verification_failures_total counts each)", b, blob.id(), store.describe());
            }
            throw new BlockVerificationException(blob.id(), b);
        }
        return false;
    }

    /** Bytes in blocks {@code [first, first+count)}. */
    static int runLength(BlockHashList list, int first, int count) {
        long len = 0;
        for (int b = first; b < first + count; b++) {
            len += list.blockLength(b);
        }
        if (len > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException("run of " + count + " blocks is too long: " + len + " bytes");
        }
        return (int) len;
    }

    /** One ranged read, retried on {@link StoreUnavailableException} until the deadline. */
    void readWithRetry(String key, long offset, byte[] dst, int dstOff, int len, long deadlineNanos) {
        retrying(key, offset, len, null, deadlineNanos, from -> {
            store.read(key, offset, dst, dstOff, len);
            return null;
        });
    }

    /**
     * One ranged read of {@code dst[0, len)} from {@code offset}, streamed: {@code arrived} hears
     * how many bytes of {@code dst} are in place as they come in. A retry after a failure part way
     * asks only for the bytes from {@code resumeAt} on (what the caller has already used), so a
     * reset near the end of a large GET does not fetch its start again.
     */
    void readStreaming(String key, long offset, byte[] dst, int len, IntConsumer arrived, IntSupplier resumeAt,
            long deadlineNanos) {
        retrying(key, offset, len, resumeAt, deadlineNanos, from -> {
            store.read(key, offset + from, dst, from, len - from, n -> arrived.accept(from + n));
            return null;
        });
    }

    /** A whole small object, retried on {@link StoreUnavailableException} until the deadline. */
    byte[] getWithRetry(String key, int maxBytes, long deadlineNanos) {
        return retrying(key, -1, 0, null, deadlineNanos, from -> store.get(key, maxBytes));
    }

    /** One attempt's GET; what it got: a whole object, or null for a ranged read into the caller's buffer. */
    @FunctionalInterface
    private interface Get<T> {
        /** @param from the first byte of the range this attempt asks for (0 unless resumed) */
        T attempt(int from);
    }

    /**
     * The one retry loop of every GET: counts it, times it, tells the store health of it, and
     * backs off on {@link StoreUnavailableException} until the deadline.
     *
     * @param offset   the range's offset in {@code key}, named in errors; negative for a whole object
     * @param len      the range's length (unused for a whole object, whose bytes are its length)
     * @param resumeAt null, or asked at the top of each attempt for the first byte still wanted:
     *                 at {@code len} or past it, nothing is fetched
     */
    private <T> T retrying(String key, long offset, int len, IntSupplier resumeAt, long deadlineNanos, Get<T> get) {
        boolean oneAttempt = gaveUp.getIfPresent(key) != null;
        int silent = 0;
        for (int attempt = 0; ; attempt++) {
            int from = resumeAt == null ? 0 : resumeAt.getAsInt();
            if (resumeAt != null && from >= len) {
                return null;
            }
            long start = System.nanoTime();
            try {
                T got;
                // Fails at once, without a request, while the store is known unreachable: such an
                // attempt is no GET (it was counted as one, so GETs rose during outages).
                long entered = enter();
                metrics.getsIssued.increment();
                metrics.getsInFlight.increment();
                try {
                    try {
                        got = get.attempt(from);
                    } catch (RuntimeException e) {
                        ended(entered, e);
                        metrics.getFailed(System.nanoTime() - start);
                        throw e;
                    }
                    ended(entered, null);
                } finally {
                    metrics.getsInFlight.decrement();
                }
                metrics.getCompleted(System.nanoTime() - start, got instanceof byte[] b ? b.length : len - from);
                if (oneAttempt) {
                    gaveUp.invalidate(key);
                }
                return got;
            } catch (StoreUnavailableException e) {
                if (e instanceof StoreUnreachableException) {
                    throw e; // nothing will answer for a while: fails at once, as the store's health says
                }
                String what = offset < 0 ? "reading " + key : "reading " + key + " at offset " + (offset + from);
                if (e instanceof StoreNotAnsweringException) {
                    silent++;
                }
                if (oneAttempt) {
                    throw giveUp(key, what, attempt, " (a read of it gave up less than " + GAVE_UP_MEMORY.toSeconds()
                            + " s ago, so it gets one)", e);
                }
                if (silent >= MAX_SILENT_ATTEMPTS) {
                    throw giveUp(key, what, attempt, " (the store answered none of the last " + silent + ")", e);
                }
                if (!backOff(attempt, deadlineNanos, what)) {
                    throw giveUp(key, what, attempt, " within the read deadline of " + policy.readDeadline().toSeconds()
                            + " s", e);
                }
            }
        }
    }

    /**
     * Before an attempt: fails it at once while the store is known unreachable (except one probe
     * per interval), as {@link io.warpdata.store.HealthCheckedStore} does for the catalog.
     *
     * @return the attempt's start, for {@link #ended}
     * @throws io.warpdata.store.StoreUnreachableException if the attempt is not to be made now
     */
    private long enter() {
        return health == null ? 0 : health.enter();
    }

    /** After an attempt: {@code failure} null if the store answered. */
    private void ended(long entered, RuntimeException failure) {
        if (health != null) {
            health.ended(entered, failure);
        }
    }

    /**
     * Remembers that the read of {@code key} gave up (its next reads get one attempt each, for
     * {@link #GAVE_UP_MEMORY}) and says so, for the caller to throw.
     */
    private StoreUnavailableException giveUp(String key, String what, int attempt, String why,
                                             StoreUnavailableException cause) {
        gaveUp.put(key, Boolean.TRUE);
        return new StoreUnavailableException("Gave up " + what + " from " + store.describe() + " after "
                + (attempt + 1) + (attempt == 0 ? " attempt" : " attempts") + why + ": " + cause.getMessage(), cause);
    }

    /**
     * Sleeps before retry {@code attempt}, unless that would pass the deadline. (A store that
     * cannot be reached at all is not retried: {@link #retrying} fails at once, and
     * {@link io.warpdata.store.StoreHealth} notices when it is back.)
     *
     * @return false if the retry would come after the deadline: the read gives up
     */
    private boolean backOff(int attempt, long deadlineNanos, String what) {
        long bound = policy.initialBackoff().toNanos() << Math.min(attempt, 20);
        bound = Math.min(Math.max(bound, 1), policy.maxBackoff().toNanos());
        long sleep = ThreadLocalRandom.current().nextLong(bound + 1);
        if (deadlineNanos - System.nanoTime() <= sleep) {
            return false;
        }
        metrics.retries.increment();
        try {
            TimeUnit.NANOSECONDS.sleep(sleep);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreUnavailableException("Interrupted while " + what + " from " + store.describe(), e);
        }
        return true;
    }
}
