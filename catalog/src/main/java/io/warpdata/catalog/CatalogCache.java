package io.warpdata.catalog;

import io.warpdata.store.BlobNotFoundException;
import io.warpdata.store.BlobStore;
import io.warpdata.store.StoreNotAnsweringException;
import io.warpdata.store.StoreUnavailableException;
import io.warpdata.store.Versioned;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Ticker;
import io.warpdata.manifest.VersionHash;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;

/**
 * What the {@link Catalog} knows of the store's moving state: pointers (latest, branches, tags)
 * and listings, each trusted for a TTL ({@link Catalog.Config}). A pointer is re-read with a
 * conditional GET ({@link BlobStore#getIfChanged}): one tiny request, answered 304 when nothing
 * moved. Every answer is also kept in {@link LastKnownGood}, and served from there when the
 * store does not answer ({@link StoreUnavailableException}): stale-if-error, counted in
 * {@link #staleAnswers()}.
 *
 * <p>Stale-while-revalidate: a pointer or listing past its TTL is re-read in the background
 * (one load per key, however many ask). A caller waits for the fresh answer at most
 * {@link Catalog.Config#revalidateWait()} from the moment the load started, and then takes the
 * last known answer while the load goes on. So a store that answers keeps every answer fresh,
 * and a store that hangs costs a lookup or a listing at most that wait, once, never a timeout
 * per pointer. With nothing known, a caller waits for the store up to
 * {@link Catalog.Config#answerWait()}; loads of many keys ({@link #prefetch}) run side by side.
 *
 * <p>Thread-safe. Loads happen outside the caches' locks, so a slow store never blocks lookups of
 * other keys.
 */
final class CatalogCache {
    private final BlobStore store;
    private final Catalog.Config config;
    private final LastKnownGood known;
    private final Clock clock;
    /** Runs loads: one short-lived virtual thread each, most of it spent waiting on the store. */
    private final Executor loader = task -> Thread.ofVirtual().name("warp-catalog-load").start(task);
    /** Pointers (latest, branches, tags) by their store key. */
    private final Cache<String, Optional<VersionHash>> pointers;
    private final Cache<String, List<String>> listings;
    private final ConcurrentHashMap<String, Load<Optional<VersionHash>>> pointerLoads = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Load<List<String>>> listingLoads = new ConcurrentHashMap<>();
    private final LongAdder staleAnswers = new LongAdder();
    /** Of {@link #staleAnswers}: given because a re-check had not answered within its wait (slow or hung store). */
    private final LongAdder slowAnswers = new LongAdder();

    /** A read of the store under way, and when it started (System.nanoTime based). */
    private record Load<T>(CompletableFuture<T> answer, long startedNanos) {
    }

    CatalogCache(BlobStore store, Catalog.Config config, Ticker ticker, LastKnownGood known, Clock clock) {
        this.store = store;
        this.config = config;
        this.known = known;
        this.clock = clock;
        this.pointers = Caffeine.newBuilder().ticker(ticker).maximumSize(100_000)
                .expireAfter(new PointerExpiry())
                .build();
        this.listings = Caffeine.newBuilder().ticker(ticker).maximumSize(10_000)
                .expireAfter(new TtlExpiry<String, List<String>>(List::isEmpty))
                .build();
    }

    /** The version the pointer at {@code key} names, or empty if there is none. */
    Optional<VersionHash> pointer(String key) {
        Optional<VersionHash> fresh = pointers.getIfPresent(key);
        if (fresh != null) {
            return fresh;
        }
        Load<Optional<VersionHash>> load = start(pointerLoads, pointers, key, this::readPointer);
        Optional<Optional<VersionHash>> last = known.pointer(key)
                .map(p -> Optional.ofNullable(p.version()).map(VersionHash::new));
        return answer(load, last, "the pointer " + key);
    }

    /** The children of {@code prefix} in the store, sorted. */
    List<String> list(String prefix) {
        List<String> fresh = listings.getIfPresent(prefix);
        if (fresh != null) {
            return fresh;
        }
        Load<List<String>> load = start(listingLoads, listings, prefix, this::readListing);
        return answer(load, known.listing(prefix).map(LastKnownGood.Listing::children), "the listing of " + prefix);
    }

    /**
     * Starts re-reading, side by side, whichever of these pointers and listings are past their
     * TTL, so that the lookups that follow wait for all of them at once (at most one
     * {@link Catalog.Config#revalidateWait()}), not for each in turn.
     */
    void prefetch(List<String> pointerKeys, List<String> prefixes) {
        for (String key : pointerKeys) {
            if (pointers.getIfPresent(key) == null) {
                start(pointerLoads, pointers, key, this::readPointer);
            }
        }
        for (String prefix : prefixes) {
            if (listings.getIfPresent(prefix) == null) {
                start(listingLoads, listings, prefix, this::readListing);
            }
        }
    }

    /** The load of {@code key} under way, or a new one, which caches its answer when done. */
    private <T> Load<T> start(ConcurrentHashMap<String, Load<T>> loads, Cache<String, T> into, String key,
                              Function<String, T> read) {
        Load<T> running = loads.get(key);
        if (running != null) {
            return running;
        }
        Load<T> mine = new Load<>(new CompletableFuture<>(), System.nanoTime());
        running = loads.putIfAbsent(key, mine);
        if (running != null) {
            return running;
        }
        // A load that ended after the caller found nothing cached, and before the look at `loads`
        // above, cached its answer before it left `loads`: it is there, and no second request is due.
        T done = into.getIfPresent(key);
        if (done != null) {
            loads.remove(key, mine);
            mine.answer().complete(done);
            return mine;
        }
        loader.execute(() -> {
            try {
                T value = read.apply(key);
                // Only a load still current caches its answer: a pointer this process moved
                // meanwhile (pointed) dropped it, and must not be undone by an older read. The
                // answer is cached before the load is dropped, in one step: in between, a lookup
                // found neither and read the store again (a second round of requests).
                loads.computeIfPresent(key, (k, current) -> {
                    if (current != mine) {
                        return current;
                    }
                    into.put(key, value);
                    return null;
                });
                mine.answer().complete(value);
            } catch (Throwable t) {
                loads.remove(key, mine);
                mine.answer().completeExceptionally(t);
            }
        });
        return mine;
    }

    /**
     * The load's answer if it comes in time; else the last known answer, if there is one.
     *
     * @throws StoreNotAnsweringException if nothing is known and the store does not answer within
     *         {@link Catalog.Config#answerWait()}
     */
    private <T> T answer(Load<T> load, Optional<T> last, String what) {
        Duration wait = last.isPresent() ? config.revalidateWait() : config.answerWait();
        long left = load.startedNanos() + wait.toNanos() - System.nanoTime();
        try {
            return load.answer().get(Math.max(left, 0), TimeUnit.NANOSECONDS);
        } catch (TimeoutException slow) {
            if (last.isPresent()) {
                staleAnswers.increment();
                slowAnswers.increment();
                return last.get();
            }
            throw new StoreNotAnsweringException("No answer from " + store.describe() + " for " + what + " within "
                    + wait.toMillis() + " ms, and nothing is known of it yet", null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreUnavailableException("Interrupted while reading " + what + " from " + store.describe(), e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new StoreUnavailableException("Failed to read " + what + " from " + store.describe() + ": " + cause, cause);
        }
    }

    /**
     * Re-reads a pointer: a conditional GET with the tag of the last known state (unchanged:
     * no body), or that state itself when the store does not answer.
     */
    private Optional<VersionHash> readPointer(String key) {
        Optional<LastKnownGood.Pointer> last = known.pointer(key);
        String source = store.describe() + "/" + key;
        try {
            Versioned now;
            try {
                now = store.getIfChanged(key, last.map(LastKnownGood.Pointer::tag).orElse(null), BlobStore.POINTER_MAX_BYTES);
            } catch (BlobNotFoundException e) {
                known.pointed(key, null, null, clock.instant());
                return Optional.empty();
            }
            if (now == null) {
                LastKnownGood.Pointer same = last.orElseThrow();
                known.pointed(key, same.version(), same.tag(), clock.instant());
                return Optional.ofNullable(same.version()).map(VersionHash::new);
            }
            VersionHash v = PointerCodec.fromJson(now.data(), source);
            known.pointed(key, v.hex(), now.tag(), clock.instant());
            return Optional.of(v);
        } catch (StoreUnavailableException e) {
            if (last.isEmpty()) {
                throw e;
            }
            staleAnswers.increment();
            return Optional.ofNullable(last.get().version()).map(VersionHash::new);
        }
    }

    /** Lists {@code prefix}, or answers from the last known listing when the store does not answer. */
    private List<String> readListing(String prefix) {
        try {
            List<String> children = List.copyOf(store.list(prefix));
            known.listed(prefix, children, clock.instant());
            return children;
        } catch (StoreUnavailableException e) {
            List<String> children = known.listing(prefix).map(LastKnownGood.Listing::children).orElseThrow(() -> e);
            staleAnswers.increment();
            return children;
        }
    }

    /**
     * Records a pointer this process wrote ({@code version}, the object's version {@code tag})
     * or deleted ({@code version} null), so that the next read sees it without asking the store.
     */
    void pointed(String key, VersionHash version, String tag) {
        pointerLoads.remove(key);
        pointers.put(key, Optional.ofNullable(version));
        known.pointed(key, version == null ? null : version.hex(), tag, clock.instant());
    }

    /**
     * The listing of {@code prefix} as last known, even past its TTL, without asking the store
     * when one is known: for link counts and lookups by name, which must not cost a LIST each
     * time the kernel re-validates a directory (only someone listing one does). Unknown: read as
     * {@link #list}.
     */
    List<String> listKnown(String prefix) {
        List<String> fresh = listings.getIfPresent(prefix);
        if (fresh != null) {
            return fresh;
        }
        return known.listing(prefix).map(LastKnownGood.Listing::children).orElseGet(() -> list(prefix));
    }

    /** Forgets the listing of {@code prefix}: something was written under it. */
    void invalidateListing(String prefix) {
        listingLoads.remove(prefix);
        listings.invalidate(prefix);
    }

    /** Forgets every pointer and listing. */
    void refresh() {
        pointerLoads.clear();
        listingLoads.clear();
        pointers.invalidateAll();
        listings.invalidateAll();
    }

    /** Answers served from the last known good state because the store did not answer. */
    /** Of {@link #staleAnswers()}: those given while a re-check was still under way, the store slow or hung. */
    long slowAnswers() {
        return slowAnswers.sum();
    }

    long staleAnswers() {
        return staleAnswers.sum();
    }

    /**
     * The latest pointer, branches and tags are re-read after {@code pointerTtl}; "no such
     * pointer" after {@code negativeTtl}, so a new publish or tag shows up fast. Tags too: they
     * are not meant to move, but {@code tag --force} and {@code tag --delete} do move them, and
     * every node of a fleet must then resolve a tag alike (audit 19: a node kept the old
     * target until restarted, while warpctl on it read the new one).
     */
    private final class PointerExpiry implements Expiry<String, Optional<VersionHash>> {
        private long ttl(String key, Optional<VersionHash> value) {
            if (value.isEmpty()) {
                return config.negativeTtl().toNanos();
            }
            return config.pointerTtl().toNanos();
        }

        @Override
        public long expireAfterCreate(String key, Optional<VersionHash> value, long currentTime) {
            return ttl(key, value);
        }

        @Override
        public long expireAfterUpdate(String key, Optional<VersionHash> value, long currentTime, long currentDuration) {
            return ttl(key, value);
        }

        @Override
        public long expireAfterRead(String key, Optional<VersionHash> value, long currentTime, long currentDuration) {
            return currentDuration;
        }
    }

    /** Positive answers live {@code pointerTtl}, negative ones {@code negativeTtl}. */
    private final class TtlExpiry<K, V> implements Expiry<K, V> {
        private final java.util.function.Predicate<V> negative;

        TtlExpiry(java.util.function.Predicate<V> negative) {
            this.negative = negative;
        }

        private long ttl(V value) {
            return (negative.test(value) ? config.negativeTtl() : config.pointerTtl()).toNanos();
        }

        @Override
        public long expireAfterCreate(K key, V value, long currentTime) {
            return ttl(value);
        }

        @Override
        public long expireAfterUpdate(K key, V value, long currentTime, long currentDuration) {
            return ttl(value);
        }

        @Override
        public long expireAfterRead(K key, V value, long currentTime, long currentDuration) {
            return currentDuration;
        }
    }
}
