package io.warpdata.blobcache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Ticker;
import io.warpdata.manifest.VersionHash;

import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the {@link Catalog} knows of the store's moving state: pointers (latest, branches, tags)
 * and listings, each trusted for a TTL ({@link Catalog.Config}). A pointer is re-read with a
 * conditional GET ({@link BlobStore#getIfChanged}): one tiny request, answered 304 when nothing
 * moved. Every answer is also kept in {@link LastKnownGood}, and served from there when the
 * store does not answer ({@link StoreUnavailableException}): stale-if-error, counted in
 * {@link #staleAnswers()}.
 *
 * <p>Thread-safe. Loads happen outside the caches' locks (two threads may both fetch the same
 * pointer; both get the same answer), so a slow store never blocks lookups of other keys.
 */
final class CatalogCache {
    private final BlobStore store;
    private final Catalog.Config config;
    private final LastKnownGood known;
    private final Clock clock;
    /** Pointers (latest, branches, tags) by their store key. */
    private final Cache<String, Optional<VersionHash>> pointers;
    private final Cache<String, List<String>> listings;
    private final LongAdder staleAnswers = new LongAdder();

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
        Optional<VersionHash> v = readPointer(key);
        pointers.put(key, v);
        return v;
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

    /**
     * Records a pointer this process wrote ({@code version}, the object's version {@code tag})
     * or deleted ({@code version} null), so that the next read sees it without asking the store.
     */
    void pointed(String key, VersionHash version, String tag) {
        pointers.put(key, Optional.ofNullable(version));
        known.pointed(key, version == null ? null : version.hex(), tag, clock.instant());
    }

    /** The children of {@code prefix} in the store, sorted. */
    List<String> list(String prefix) {
        List<String> fresh = listings.getIfPresent(prefix);
        if (fresh != null) {
            return fresh;
        }
        List<String> children;
        try {
            children = List.copyOf(store.list(prefix));
            known.listed(prefix, children, clock.instant());
        } catch (StoreUnavailableException e) {
            children = known.listing(prefix).map(LastKnownGood.Listing::children).orElseThrow(() -> e);
            staleAnswers.increment();
        }
        listings.put(prefix, children);
        return children;
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
        listings.invalidate(prefix);
    }

    /** Forgets every pointer and listing. */
    void refresh() {
        pointers.invalidateAll();
        listings.invalidateAll();
    }

    /** Answers served from the last known good state because the store did not answer. */
    long staleAnswers() {
        return staleAnswers.sum();
    }

    /**
     * Tags never move, so a tag that exists is trusted until {@link #refresh()}; the latest
     * pointer and branches are re-read after {@code pointerTtl}; "no such pointer" after
     * {@code negativeTtl}, so a new publish or tag shows up fast.
     */
    private final class PointerExpiry implements Expiry<String, Optional<VersionHash>> {
        private long ttl(String key, Optional<VersionHash> value) {
            if (value.isEmpty()) {
                return config.negativeTtl().toNanos();
            }
            return key.contains("/tags/") ? Long.MAX_VALUE : config.pointerTtl().toNanos();
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
