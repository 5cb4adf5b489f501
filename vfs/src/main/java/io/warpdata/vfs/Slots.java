package io.warpdata.vfs;

import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntFunction;

/**
 * Numbers for what the mount reaches (an artifact of a version, a tensor folder), from 0 in the
 * order first reached, each given once and never reused while the tree lives: the slots computed
 * inodes are made of ({@link MemberInodes}, {@link TensorInodes}). A slot is found by its key
 * when a lookup reaches it, and by its number, without a lock, when an inode is decoded.
 *
 * @param <K> what names a slot
 * @param <V> the slot, made once from its number
 */
final class Slots<K, V> {
    /**
     * The last slot number: slots have 31 bits, but are held in one array, whose length Java
     * bounds a little below 2^31.
     */
    static final int MAX_SLOT = Integer.MAX_VALUE - 9;

    private final ConcurrentHashMap<K, V> byKey = new ConcurrentHashMap<>();
    /** Slots by number; replaced (grown) under this object's lock, read without. */
    private volatile Object[] byNumber = new Object[16];
    private int next;

    /**
     * The slot of {@code key}, numbered and made by {@code make} the first time.
     *
     * @throws TooManyArtifactsException if every number is taken
     */
    V slot(K key, IntFunction<V> make) {
        V slot = byKey.get(key);
        return slot != null ? slot : byKey.computeIfAbsent(key, k -> number(make));
    }

    /** A new slot; called inside {@code computeIfAbsent}, so each key is numbered once. */
    private synchronized V number(IntFunction<V> make) {
        if (next > MAX_SLOT) {
            throw new TooManyArtifactsException((long) MAX_SLOT + 1);
        }
        V slot = make.apply(next);
        Object[] table = byNumber;
        if (next == table.length) {
            table = Arrays.copyOf(table, (int) Math.min((long) table.length * 2, (long) MAX_SLOT + 1));
        }
        table[next] = slot;
        byNumber = table;
        next++;
        return slot;
    }

    /** The slot numbered {@code number}, or null if none is (yet). */
    @SuppressWarnings("unchecked")
    V get(long number) {
        Object[] table = byNumber;
        return number >= 0 && number < table.length ? (V) table[(int) number] : null;
    }

    /** Slots numbered so far. */
    int size() {
        return byKey.size();
    }
}
