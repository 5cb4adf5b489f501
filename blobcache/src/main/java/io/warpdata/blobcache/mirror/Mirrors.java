package io.warpdata.blobcache.mirror;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * The configured mirrors, tried in order. A mirror that fails (an error status, a reset, a
 * timeout, a wrong-sized answer, or bytes the caller found wrong) is skipped for a backoff; when
 * the backoff is over, exactly one read tries it again (the others keep skipping it meanwhile), so
 * a hanging mirror costs at most one timeout per backoff period, not one per read. One line is
 * logged when a mirror goes and one when it comes back.
 *
 * <p>Answers are <b>unverified</b>: the caller checks them and reports a mismatch with
 * {@link #verificationFailed}. Nothing here throws to a reader: when no mirror has the bytes the
 * answer is empty and the caller reads the store.
 */
public final class Mirrors implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Mirrors.class);
    /**
     * 30 s: long enough that a dead or hanging mirror costs one timeout (2 s by default) per 30 s
     * of reading, at most 7% of the time of one reader, short enough that a restarted cache is used
     * again within half a minute.
     */
    public static final Duration DEFAULT_BACKOFF = Duration.ofSeconds(30);
    /** 2 s: a cache on the local network answers a block in milliseconds. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(2);

    private final List<Entry> entries;
    private final long backoffNanos;
    private final LongSupplier nanoTime;

    /** Where a mirror stands: up, skipped until a time, or being tried by one read after a backoff. */
    private sealed interface Health {
        record Up() implements Health {
        }

        record Down(long untilNanos, String reason) implements Health {
        }

        record Probing(String reason) implements Health {
        }
    }

    private static final Health UP = new Health.Up();

    private static final class Entry {
        final Mirror mirror;
        final AtomicReference<Health> health = new AtomicReference<>(UP);
        final LongAdder hits = new LongAdder();
        final LongAdder misses = new LongAdder();
        final LongAdder bytesServed = new LongAdder();
        final LongAdder errors = new LongAdder();
        final LongAdder timeouts = new LongAdder();
        final LongAdder verificationFailures = new LongAdder();
        final LongAdder skipped = new LongAdder();

        Entry(Mirror mirror) {
            this.mirror = mirror;
        }
    }

    /**
     * A mirror's answer: which mirror served it (to report a verification failure), and how many bytes.
     *
     * @param mirror the mirror's {@link Mirror#name()}
     * @param index its position in the list
     */
    public record Served(String mirror, int index) {
    }

    /** A whole object from a mirror, unverified. */
    public record ServedObject(Served from, byte[] data) {
    }

    /**
     * @param mirrors in the order they are tried (closed by {@link #close()})
     * @param backoff how long a failing mirror is skipped
     * @param nanoTime the clock (tests move it)
     */
    public Mirrors(List<? extends Mirror> mirrors, Duration backoff, LongSupplier nanoTime) {
        this.entries = mirrors.stream().map(Entry::new).toList();
        this.backoffNanos = backoff.toNanos();
        this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
        if (backoffNanos <= 0) {
            throw new IllegalArgumentException("mirror backoff must be positive, was " + backoff);
        }
    }

    /** The mirrors with the default backoff and the system clock. */
    public Mirrors(List<? extends Mirror> mirrors) {
        this(mirrors, DEFAULT_BACKOFF, System::nanoTime);
    }

    /** Whether any mirror is configured. */
    public boolean isEmpty() {
        return entries.isEmpty();
    }

    /**
     * Reads a range from the first mirror that has it.
     *
     * @param skip the mirrors not to ask (by index; e.g. the one whose bytes just failed verification)
     * @return which mirror filled {@code dst} (unverified), or empty: no mirror has it, read the store
     */
    public Optional<Served> read(MirrorRange range, byte[] dst, int dstOff, java.util.Set<Integer> skip) {
        for (int i = 0; i < entries.size(); i++) {
            Entry e = entries.get(i);
            if (skip.contains(i) || !admit(e)) {
                continue;
            }
            try {
                boolean hit = e.mirror.read(range, dst, dstOff);
                recovered(e);
                if (hit) {
                    e.hits.increment();
                    e.bytesServed.add(range.length());
                    return Optional.of(new Served(e.mirror.name(), i));
                }
                e.misses.increment();
            } catch (MirrorException failure) {
                failed(e, failure);
            } catch (RuntimeException bug) {
                failed(e, unexpected(e, range.toString(), bug));
            }
        }
        return Optional.empty();
    }

    /** A mirror client's own bug must not reach a reader either: it is a failure of that mirror. */
    private static MirrorException unexpected(Entry e, String what, RuntimeException bug) {
        LOG.debug("mirror {} failed unexpectedly on {}", e.mirror.name(), what, bug);
        return new MirrorException(MirrorException.Kind.CONNECTION, e.mirror.name() + ": " + bug + " reading " + what, bug);
    }

    /** {@link #read(MirrorRange, byte[], int, java.util.Set)} asking every mirror. */
    public Optional<Served> read(MirrorRange range, byte[] dst, int dstOff) {
        return read(range, dst, dstOff, java.util.Set.of());
    }

    /** Reads a whole small object from the first mirror that has it (unverified), or empty. */
    public Optional<ServedObject> get(String key, int maxBytes, java.util.Set<Integer> skip) {
        for (int i = 0; i < entries.size(); i++) {
            Entry e = entries.get(i);
            if (skip.contains(i) || !admit(e)) {
                continue;
            }
            try {
                Optional<byte[]> data = e.mirror.get(key, maxBytes);
                recovered(e);
                if (data.isPresent()) {
                    e.hits.increment();
                    e.bytesServed.add(data.get().length);
                    return Optional.of(new ServedObject(new Served(e.mirror.name(), i), data.get()));
                }
                e.misses.increment();
            } catch (MirrorException failure) {
                failed(e, failure);
            } catch (RuntimeException bug) {
                failed(e, unexpected(e, key, bug));
            }
        }
        return Optional.empty();
    }

    /**
     * The caller found bytes from {@code served} wrong (they do not hash to what the publisher
     * recorded): counted, and the mirror is skipped for a backoff, since a poisoned cache keeps
     * serving the same bytes. Read the range from the next source with {@code skip} naming it.
     */
    public void verificationFailed(Served served, String what) {
        Entry e = entries.get(served.index());
        e.verificationFailures.increment();
        goDown(e, "served wrong bytes for " + what + " (they do not match the publisher's SHA-256)");
    }

    /**
     * Offers bytes the caller fetched from the store and verified to every mirror that warpd
     * fills (S3 tiers). Never blocks, never throws.
     */
    public void fill(MirrorRange range, byte[] verified, int off) {
        for (Entry e : entries) {
            if (e.mirror.fillable()) {
                e.mirror.fill(range, verified, off);
            }
        }
    }

    /** Offers a verified whole object (manifest, hash list, member index), like {@link #fill}. */
    public void fillObject(String key, byte[] verified) {
        for (Entry e : entries) {
            if (e.mirror.fillable()) {
                e.mirror.fillObject(key, verified);
            }
        }
    }

    /** The counters of every mirror, in order, for {@code cache stats}, status and Prometheus. */
    public List<MirrorStats> snapshot() {
        List<MirrorStats> out = new ArrayList<>(entries.size());
        for (Entry e : entries) {
            Health h = e.health.get();
            String state = switch (h) {
                case Health.Up up -> "up";
                case Health.Down down -> "down";
                case Health.Probing probing -> "down";
            };
            out.add(new MirrorStats(e.mirror.name(), state, e.hits.sum(), e.misses.sum(), e.bytesServed.sum(),
                    e.verificationFailures.sum(), e.errors.sum(), e.timeouts.sum(), e.skipped.sum(), e.mirror.fillCounts()));
        }
        return out;
    }

    /** Whether a read may ask this mirror now; after a backoff only one read is let through. */
    private boolean admit(Entry e) {
        while (true) {
            Health h = e.health.get();
            switch (h) {
                case Health.Up up -> {
                    return true;
                }
                case Health.Probing probing -> {
                    e.skipped.increment();
                    return false;
                }
                case Health.Down down -> {
                    if (nanoTime.getAsLong() - down.untilNanos() < 0) {
                        e.skipped.increment();
                        return false;
                    }
                    if (e.health.compareAndSet(h, new Health.Probing(down.reason()))) {
                        return true;
                    }
                }
            }
        }
    }

    private void recovered(Entry e) {
        Health h = e.health.get();
        if (!(h instanceof Health.Up) && e.health.compareAndSet(h, UP)) {
            LOG.info("mirror {} is back: answering again", e.mirror.name());
        }
    }

    private void failed(Entry e, MirrorException failure) {
        e.errors.increment();
        if (failure.kind() == MirrorException.Kind.TIMEOUT) {
            e.timeouts.increment();
        }
        goDown(e, failure.getMessage());
    }

    private void goDown(Entry e, String reason) {
        Health before = e.health.getAndSet(new Health.Down(nanoTime.getAsLong() + backoffNanos, reason));
        if (before instanceof Health.Up) {
            LOG.warn("mirror {} skipped for {} s: {}; reads go to the next mirror or the store meanwhile."
                            + " Check the cache (docs/fleet.md); 'warpctl cache stats' shows its counters",
                    e.mirror.name(), backoffNanos / 1_000_000_000L, reason);
        }
    }

    /** Closes every mirror (an S3 tier writes what is queued first, for a few seconds at most). */
    @Override
    public void close() {
        for (Entry e : entries) {
            try {
                e.mirror.close();
            } catch (RuntimeException ex) {
                LOG.debug("closing mirror {}: {}", e.mirror.name(), ex.toString());
            }
        }
    }
}
