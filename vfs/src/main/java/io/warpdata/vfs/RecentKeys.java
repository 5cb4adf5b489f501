package io.warpdata.vfs;

import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A set of at most {@code max} keys that forgets the one added least recently (adding a key again
 * makes it the most recent). {@link #contains} is one lookup in a concurrent map, without a lock,
 * for the read path; {@link #add} takes a lock, for the few callers that name keys (order plans).
 * Unlike a size-bounded Caffeine cache, whose admission policy turns away keys seen once in a
 * burst, every key added is kept until {@code max} newer ones came (review of session 42).
 */
final class RecentKeys<K> {
    private final int max;
    private final Set<K> present = ConcurrentHashMap.newKeySet();
    /** Guarded by itself: the keys from the least to the most recently added. */
    private final LinkedHashSet<K> order = new LinkedHashSet<>();

    RecentKeys(int max) {
        if (max < 1) {
            throw new IllegalArgumentException("max must be at least 1, was " + max);
        }
        this.max = max;
    }

    boolean contains(K key) {
        return present.contains(key);
    }

    /**
     * Adds {@code key} as the most recent, forgetting the least recent past {@code max}.
     *
     * @return whether it was not there before
     */
    boolean add(K key) {
        synchronized (order) {
            boolean fresh = !order.remove(key);
            order.add(key);
            present.add(key);
            while (order.size() > max) {
                K oldest = order.iterator().next();
                order.remove(oldest);
                present.remove(oldest);
            }
            return fresh;
        }
    }

    int size() {
        return present.size();
    }
}
