package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlobId;
import java.util.ArrayList;
import java.util.List;

/**
 * Members cached under their own hash that {@link DiskBlocks}' index let go of for its count
 * bound ({@link DiskBlocks#MAX_MEMBERS}), kept on disk in room the index does not use, first in
 * first out. An index entry costs about 400 bytes of heap; one here costs 52 to 104 (the hash,
 * the length, a slot of the lookup table, and the ring's room for members taken out of its
 * middle), so a cache of small members keeps far more than 32,768 of them: an ImageNet epoch
 * fetched file by file (an order plan over more than the cache keeps) left 3.6 GB of a 100 GB
 * cache for the next epoch.
 *
 * <p>The first are let go first: whenever the index and what it holds for read-ahead grow, the
 * oldest here make room for them ({@link DiskBlocks}), so the index's policy decides as if this
 * tier were not there. A member read from here goes back into the index ({@link #take}).
 *
 * <p>Hashes are kept as four longs in a ring, found through an open-addressing table on their
 * first long. The ring grows by doubling, to twice the bound at most, and is compacted when it
 * is full but at most half of it is in use (a member taken back leaves its slot empty until
 * then), so an unused tier costs nothing and compaction is paid at most once per half a ring of
 * adds. One lock: every operation is a few array accesses, and none does I/O.
 */
final class SpareMembers {
    /**
     * Heap a member of the bound costs here at most: 32 bytes of hash and 4 of length in a ring of
     * up to twice the bound, and a table of ints at most half full.
     */
    static final int BYTES_PER_MEMBER = 104;
    private static final int FIRST_CAPACITY = 1024;
    /** A freed ring slot's length. */
    private static final int GONE = -1;

    private final int max;
    private long[] hashes = new long[0];
    /** Data length of each ring slot's member, or {@link #GONE}. */
    private int[] lengths = new int[0];
    /** Ring slot + 1 by hash, 0 empty; linear probing, twice the ring's capacity. */
    private int[] table = new int[0];
    private int head;
    /** Ring slots from {@link #head} in use, gone ones included. */
    private int used;
    private int count;
    /** Written under the lock, read without it. */
    private volatile long bytes;
    /** {@link #count} for lock-free looks: zero is the common case and costs a volatile read. */
    private volatile int size;

    /** @param max members kept at most (0: none) */
    SpareMembers(int max) {
        if (max < 0) {
            throw new IllegalArgumentException("max " + max);
        }
        this.max = max;
    }

    /**
     * The most a heap of {@code maxHeapBytes} keeps here, for a sixteenth of it at most: 241,979
     * members (26 GB of 110 KB images) at warpd's default 384 MiB, 645,277 at 1 GiB.
     */
    static int maxFor(long maxHeapBytes) {
        return (int) Math.min(Integer.MAX_VALUE / 4, maxHeapBytes / 16 / BYTES_PER_MEMBER);
    }

    /** The bytes a member of {@code dataLength} takes on disk (its block file's header and data). */
    static long weight(int dataLength) {
        return (long) BlockFile.headerLength(dataLength) + dataLength;
    }

    boolean isEmpty() {
        return size == 0;
    }

    int count() {
        return size;
    }

    /** Bytes on disk of the members here. */
    long bytes() {
        return bytes;
    }

    /**
     * Keeps a member of {@code dataLength} bytes. Full, the oldest is let go for it and returned
     * (its file to be deleted by the caller); a bound of 0 keeps nothing and returns it, as {@code id}.
     */
    synchronized Spare add(BlobId id, int dataLength) {
        if (max == 0) {
            return new Spare(id, dataLength);
        }
        Spare out = null;
        if (count >= max) {
            out = removeOldest();
        }
        if (used == lengths.length) {
            grow();
        }
        int slot = (head + used) % lengths.length;
        used++;
        long[] h = longs(id);
        System.arraycopy(h, 0, hashes, slot * 4, 4);
        lengths[slot] = dataLength;
        insert(slot);
        count++;
        size = count;
        bytes += weight(dataLength);
        return out;
    }

    /** Whether the member with this hash is here. */
    boolean contains(BlobId id) {
        if (size == 0) {
            return false;
        }
        long[] h = longs(id);
        synchronized (this) {
            return find(h) >= 0;
        }
    }

    /** Takes the member out (it goes back into the index); its data length, or -1 if not here. */
    int take(BlobId id) {
        if (size == 0) {
            return -1;
        }
        long[] h = longs(id);
        synchronized (this) {
            int t = find(h);
            if (t < 0) {
                return -1;
            }
            int slot = table[t] - 1;
            int len = lengths[slot];
            free(t, slot);
            return len;
        }
    }

    /** Lets go of the oldest until at most {@code maxBytes} are here; those, for the caller to delete. */
    synchronized List<Spare> trimTo(long maxBytes) {
        List<Spare> out = new ArrayList<>();
        while (bytes > maxBytes && count > 0) {
            out.add(removeOldest());
        }
        return out;
    }

    /** A member here: its hash and data length. */
    record Spare(BlobId id, int length) {
    }

    /** The members here, oldest first (a copy). */
    synchronized List<Spare> all() {
        List<Spare> out = new ArrayList<>(count);
        for (int i = 0; i < used; i++) {
            int slot = (head + i) % lengths.length;
            if (lengths[slot] != GONE) {
                out.add(new Spare(id(slot), lengths[slot]));
            }
        }
        return out;
    }

    /** Forgets every member (their files went with the directory). */
    synchronized void clear() {
        hashes = new long[0];
        lengths = new int[0];
        table = new int[0];
        head = 0;
        used = 0;
        count = 0;
        size = 0;
        bytes = 0;
    }

    private Spare removeOldest() {
        while (true) {
            int slot = head;
            if (lengths[slot] != GONE) {
                Spare out = new Spare(id(slot), lengths[slot]);
                free(find(hashAt(slot)), slot);
                return out;
            }
            head = (head + 1) % lengths.length;
            used--;
        }
    }

    /** Frees ring slot {@code slot}, found at table index {@code t}; the ring's head moves past gone slots. */
    private void free(int t, int slot) {
        bytes -= weight(lengths[slot]);
        lengths[slot] = GONE;
        count--;
        size = count;
        delete(t);
        while (used > 0 && lengths[head] == GONE) {
            head = (head + 1) % lengths.length;
            used--;
        }
    }

    /** The ring is full: compacted where it stands if at most half of it is in use, else doubled (up to twice the bound). */
    private void grow() {
        int cap = lengths.length;
        if (count > cap / 2 || cap == 0) {
            cap = (int) Math.min(2L * max, Math.max(FIRST_CAPACITY, 2L * cap));
        }
        long[] h = new long[cap * 4];
        int[] l = new int[cap];
        int n = 0;
        for (int i = 0; i < used; i++) {
            int slot = (head + i) % lengths.length;
            if (lengths[slot] != GONE) {
                System.arraycopy(hashes, slot * 4, h, n * 4, 4);
                l[n++] = lengths[slot];
            }
        }
        hashes = h;
        lengths = l;
        head = 0;
        used = n;
        table = new int[Integer.highestOneBit(Math.max(1, cap - 1)) * 4];
        for (int slot = 0; slot < n; slot++) {
            insert(slot);
        }
    }

    private void insert(int slot) {
        int mask = table.length - 1;
        int t = mix(hashes[slot * 4]) & mask;
        while (table[t] != 0) {
            t = (t + 1) & mask;
        }
        table[t] = slot + 1;
    }

    /** Table index of the slot holding hash {@code h}, or -1. */
    private int find(long[] h) {
        if (table.length == 0) {
            return -1;
        }
        int mask = table.length - 1;
        for (int t = mix(h[0]) & mask; table[t] != 0; t = (t + 1) & mask) {
            int s = (table[t] - 1) * 4;
            if (hashes[s] == h[0] && hashes[s + 1] == h[1] && hashes[s + 2] == h[2] && hashes[s + 3] == h[3]) {
                return t;
            }
        }
        return -1;
    }

    /** Removes table index {@code t}, moving later entries of its run back (no tombstones). */
    private void delete(int t) {
        int mask = table.length - 1;
        table[t] = 0;
        for (int j = (t + 1) & mask; table[j] != 0; j = (j + 1) & mask) {
            int home = mix(hashes[(table[j] - 1) * 4]) & mask;
            // j's entry may move to the hole at t if its home is not in (t, j] (cyclically).
            if (t <= j ? (home <= t || home > j) : (home <= t && home > j)) {
                table[t] = table[j];
                table[j] = 0;
                t = j;
            }
        }
    }

    private long[] hashAt(int slot) {
        return new long[] {hashes[slot * 4], hashes[slot * 4 + 1], hashes[slot * 4 + 2], hashes[slot * 4 + 3]};
    }

    private BlobId id(int slot) {
        byte[] d = new byte[32];
        for (int i = 0; i < 4; i++) {
            long v = hashes[slot * 4 + i];
            for (int b = 0; b < 8; b++) {
                d[i * 8 + b] = (byte) (v >>> (56 - 8 * b));
            }
        }
        return BlobId.fromDigest(d);
    }

    /** A hash as four longs, big-endian, from its hex (no byte array). */
    private static long[] longs(BlobId id) {
        String hex = id.hex();
        long[] h = new long[4];
        for (int i = 0; i < 4; i++) {
            h[i] = Long.parseUnsignedLong(hex, i * 16, i * 16 + 16, 16);
        }
        return h;
    }

    /** A SHA-256's bits are uniform already; the high ones are folded in so that a small table sees them too. */
    private static int mix(long h) {
        return (int) (h ^ (h >>> 32));
    }
}
