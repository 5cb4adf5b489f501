package io.warpdata.store;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * Whether the store answers, as every call tells it: through a {@link HealthCheckedStore} (the
 * catalog, publish), or attempt by attempt with {@link #enter()} and {@link #ended} (the block
 * cache's fetcher, which reads the bare store and shares this health with the catalog). Down
 * from the first call that fails with {@link StoreUnavailableException} (after the store's own
 * retries) until the next call that the store answers (a "not found" is an answer), and, for a
 * store that answers with errors, answers for {@link #FAILING_QUIET} without a failure. One log
 * line when it goes down, one when it is back; never one per request.
 *
 * <p>While the last failure was a connection that could not be made
 * ({@link StoreUnreachableException}), or a call that got nothing back while no other call was
 * answered either ({@link StoreNotAnsweringException}: a hung store), calls are not even tried: they fail at once, except one
 * probe every {@link #PROBE_INTERVAL}, so that an outage costs readers no time (a read of an
 * uncached block fails with EIO at once instead of retrying until its deadline), and the store
 * coming back is noticed within one interval. A 5xx or a throttling answer never does that: the
 * store is there, and the read path's retries ride it out.
 */
public final class StoreHealth {
    private static final Logger LOG = LoggerFactory.getLogger(StoreHealth.class);
    /**
     * 5 s between probes of an unreachable store: a restarted server is noticed within 5 s,
     * and a dead one costs one failed connection attempt per 5 s, whatever the load.
     */
    public static final Duration PROBE_INTERVAL = Duration.ofSeconds(5);
    /**
     * A store that answers some calls and fails others (5xx on ranged GETs while LISTs and
     * pointers are answered) is back only once it has answered for this long without a failure.
     * Audit 38: any answered call ended the outage, so {@code warp_store_reachable} flapped every
     * few seconds while every uncached read failed (16 outages in 80 s, 283 in one refresh), and
     * an alert on it with {@code for: 1m} never fired.
     */
    public static final Duration FAILING_QUIET = Duration.ofSeconds(10);
    /**
     * Failures with errors (5xx, throttling) within {@link #FAILING_QUIET} that make the store
     * failing: 3. One 503 that the read path's retry rode out is no outage (the review: with the
     * quiet time, it left the store "failing" for 10 s, and status --check failed, though no read did).
     */
    public static final int FAILING_AFTER = 3;

    /**
     * When and why the store went down.
     *
     * @param unreachable calls fail at once until a probe is answered (refused, or not answering)
     * @param notAnswering the store takes connections but sends nothing (stopped, blackholed)
     */
    public record Outage(Instant since, String error, boolean unreachable, boolean notAnswering) {
        /** "unreachable", "unreachable (not answering)" or "failing": what status says. */
        public String state() {
            return notAnswering ? "unreachable (not answering)" : unreachable ? "unreachable" : "failing";
        }
    }

    /** What status and metrics show. */
    public record Snapshot(String store, boolean offline, Optional<Outage> outage, long failures, long fastFailures,
                           long outages) {
        public boolean reachable() {
            return !offline && outage.isEmpty();
        }
    }

    private final String store;
    private final boolean offline;
    private final Clock clock;
    private final LongSupplier nanos;
    private final AtomicReference<Outage> outage = new AtomicReference<>();
    private final AtomicLong nextProbe = new AtomicLong();
    /** When a call last failed (System.nanoTime based), for {@link #FAILING_QUIET}. */
    private final AtomicLong lastFailed = new AtomicLong();
    /** Failures with errors in the window that started at {@link #failWindowStart}, for {@link #FAILING_AFTER}. */
    private final java.util.concurrent.atomic.AtomicInteger failsInWindow = new java.util.concurrent.atomic.AtomicInteger();
    private final AtomicLong failWindowStart;
    /** When a call last got an answer (System.nanoTime based); before any, just before this was made. */
    private final AtomicLong lastAnswered;
    private final LongAdder failures = new LongAdder();
    private final LongAdder fastFailures = new LongAdder();
    private final LongAdder outages = new LongAdder();

    private StoreHealth(String store, boolean offline, Clock clock, LongSupplier nanos) {
        this.store = store;
        this.offline = offline;
        this.clock = clock;
        this.nanos = nanos;
        this.lastAnswered = new AtomicLong(nanos.getAsLong() - 1);
        this.failWindowStart = new AtomicLong(nanos.getAsLong() - FAILING_QUIET.toNanos());
    }

    /** The health of {@code store} (its description, for log lines). */
    public static StoreHealth of(String store) {
        return new StoreHealth(store, false, Clock.systemUTC(), System::nanoTime);
    }

    /** As {@link #of}, with the clocks a test controls. */
    public static StoreHealth of(String store, Clock clock, LongSupplier nanos) {
        return new StoreHealth(store, false, clock, nanos);
    }

    /** A store that is never contacted ({@code --mode local}): not an outage, a choice. */
    public static StoreHealth offline(String store) {
        return new StoreHealth(store, true, Clock.systemUTC(), System::nanoTime);
    }

    /**
     * Lets a call through, or fails it at once while the store is known unreachable (one call
     * per {@link #PROBE_INTERVAL} goes through as a probe).
     *
     * @throws StoreUnreachableException if the call is not to be tried now
     */
    void beforeCall() {
        Outage o = outage.get();
        if (o == null || !o.unreachable()) {
            return;
        }
        long now = nanos.getAsLong();
        long next = nextProbe.get();
        if (now - next >= 0 && nextProbe.compareAndSet(next, now + PROBE_INTERVAL.toNanos())) {
            return; // this call is the probe
        }
        fastFailures.increment();
        // The error is the call that found the store down, perhaps of another object than this
        // one: said as such (audit 23 looked at the wrong object).
        String message = "The store " + store + " is " + (o.notAnswering() ? "not answering" : "unreachable")
                + " since " + o.since() + " (the call that found it so: " + o.error() + "); not tried again before"
                + " its next probe";
        throw o.notAnswering() ? StoreUnreachableException.notAnswering(message) : new StoreUnreachableException(message, null);
    }

    /**
     * Before one attempt of a call to the store: lets it through, or fails it at once while the
     * store is known unreachable (one call per {@link #PROBE_INTERVAL} goes through as a probe).
     * Hand what it returns to {@link #ended} once the attempt is over.
     *
     * @return when the attempt starts (System.nanoTime based)
     * @throws StoreUnreachableException if the attempt is not to be made now (it need not be ended)
     */
    public long enter() {
        beforeCall();
        return now();
    }

    /**
     * After an attempt that {@link #enter()} let through at {@code startedNanos}: the store
     * answered ({@code failure} null, or a {@link StoreException} that is an answer: not found,
     * denied, a bad range), or did not ({@link StoreUnavailableException}). Any other failure is
     * not the store's and tells nothing. A store never contacted ({@link #offline()}) learns nothing.
     */
    public void ended(long startedNanos, RuntimeException failure) {
        if (offline) {
            return;
        }
        if (failure == null) {
            succeeded();
        } else if (failure instanceof StoreUnavailableException u) {
            failed(u, startedNanos);
        } else if (failure instanceof StoreException) {
            succeeded();
        }
    }

    /**
     * Lets the next call through as a probe even if the last one was recent: a person just
     * asked for something (a publish, a refresh, a warm), typically right after bringing the
     * store back, and must not be told "not tried" for up to {@link #PROBE_INTERVAL}.
     */
    public void retryNow() {
        nextProbe.set(nanos.getAsLong());
    }

    /** When a call starts: what {@link #failed(StoreUnavailableException, long)} is told. */
    long now() {
        return nanos.getAsLong();
    }

    /** The store answered a call. */
    void succeeded() {
        long now = nanos.getAsLong();
        lastAnswered.set(now);
        Outage o = outage.get();
        if (o != null && !o.unreachable() && now - lastFailed.get() < FAILING_QUIET.toNanos()) {
            return; // failing some calls still: not back yet ({@link #settle} ends it once quiet)
        }
        end(o);
    }

    /** Ends outage {@code o} (if it is still the current one), logging it once. */
    private void end(Outage o) {
        if (o != null && outage.compareAndSet(o, null)) {
            long seconds = Duration.between(o.since(), clock.instant()).toSeconds();
            LOG.info("store {} is reachable again after {} s", store, seconds);
        }
    }

    /**
     * Ends a "failing" outage whose store answered after its last failure and has not failed
     * for {@link #FAILING_QUIET} since: an idle daemon is not shown failing for good because no
     * call came after the quiet time.
     */
    private void settle() {
        Outage o = outage.get();
        if (o != null && !o.unreachable()) {
            long failed = lastFailed.get();
            if (lastAnswered.get() - failed >= 0 && nanos.getAsLong() - failed >= FAILING_QUIET.toNanos()) {
                end(o);
            }
        }
    }

    /** A call failed after the store's own retries (a call started now: see {@link #failed(StoreUnavailableException, long)}). */
    void failed(StoreUnavailableException e) {
        failed(e, nanos.getAsLong());
    }

    /**
     * A call that started at {@code startedNanos} ({@link #now()}) failed after the store's own
     * retries. A call that got nothing back ({@link StoreNotAnsweringException}) while no other
     * call was answered either means the store is not answering anyone: it is then treated as
     * unreachable (calls fail at once until a probe is answered), so that a stopped or blackholed
     * store costs readers one answer timeout, not one per call. If other calls were answered
     * meanwhile, it was one stuck connection: counted, and no outage.
     */
    void failed(StoreUnavailableException e, long startedNanos) {
        failures.increment();
        boolean notAnswering = e instanceof StoreNotAnsweringException;
        if (notAnswering && lastAnswered.get() - startedNanos >= 0) {
            return;
        }
        long nowNanos = nanos.getAsLong();
        lastFailed.set(nowNanos);
        boolean unreachable = notAnswering || e instanceof StoreUnreachableException;
        if (!unreachable && outage.get() == null && !failingNow(nowNanos)) {
            return; // counted; not an outage yet
        }
        Outage now = new Outage(clock.instant(), e.getMessage(), unreachable, notAnswering);
        while (true) {
            Outage o = outage.get();
            if (o == null) {
                if (outage.compareAndSet(null, now)) {
                    outages.increment();
                    nextProbe.set(nanos.getAsLong() + PROBE_INTERVAL.toNanos());
                    if (unreachable) {
                        LOG.warn("store {} is {} ({}); serving from the cache and the last known state"
                                + " until it answers again", store, notAnswering ? "not answering" : "unreachable", e.getMessage());
                    } else {
                        // Not "unreachable": the store answers, with errors; reads of what the
                        // cache lacks keep retrying until their deadline (audit 38).
                        LOG.warn("store {} is failing ({}); reads of what the cache lacks retry until their read deadline,"
                                + " the rest is served from the cache and the last known state", store, e.getMessage());
                    }
                    return;
                }
            } else {
                // Still down: keep the start time, remember the latest reason.
                if (o.unreachable() == unreachable && o.notAnswering() == notAnswering && o.error().equals(e.getMessage())) {
                    return;
                }
                if (outage.compareAndSet(o, new Outage(o.since(), e.getMessage(), unreachable, notAnswering))) {
                    if (unreachable) {
                        nextProbe.set(nanos.getAsLong() + PROBE_INTERVAL.toNanos());
                    }
                    return;
                }
            }
        }
    }

    /** Counts a failure with an error: whether {@link #FAILING_AFTER} of them came within {@link #FAILING_QUIET}. */
    private boolean failingNow(long now) {
        long start = failWindowStart.get();
        if (now - start >= FAILING_QUIET.toNanos() && failWindowStart.compareAndSet(start, now)) {
            failsInWindow.set(0);
        }
        return failsInWindow.incrementAndGet() >= FAILING_AFTER;
    }

    /** Whether the store is never contacted ({@code --mode local}). */
    public boolean offline() {
        return offline;
    }

    public Snapshot snapshot() {
        settle();
        return new Snapshot(store, offline, Optional.ofNullable(outage.get()), failures.sum(), fastFailures.sum(),
                outages.sum());
    }
}
