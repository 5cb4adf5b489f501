package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlobId;
import java.util.ArrayList;
import java.util.List;

/**
 * Members cached under their own hash that {@link DiskBlocks}' index let go of for its count
 * bound ({@link DiskBlocks#MAX_MEMBERS}), kept on disk in room the index does not use. An index
 * entry costs about 400 bytes of heap; one here about 50 (the hash, the length and the pass in a
 * ring, a slot of the lookup table), 112 at most with the ring's room for members taken out of
 * its middle, so a cache of small members keeps far more than 32,768 of them: before, an
 * ImageNet epoch fetched file by file (an order plan over more than the cache keeps) left 3.6 GB
 * of a 100 GB cache for the next epoch.
 *
 * <p>Whenever the index and what it holds for read-ahead grow, members here make room for them
 * ({@link DiskBlocks}), so the index's policy decides as if this tier were not there. A member
 * read from here goes back into the index ({@link #take}). Which go first ({@link #evictOne}):
 * <ol>
 *   <li>kept members last used before the last pass (a {@link #newPass}): other work's;</li>
 *   <li>members the reader of an order plan by file has passed in this pass ({@link #pass}),
 *       oldest first: that plan reads them again only in its next pass, after every member it
 *       has not reached yet;</li>
 *   <li>the other kept members, oldest first.</li>
 * </ol>
 * A shuffled epoch over more than the cache holds then keeps the members it has not reached
 * and lets go of those it read, as Belady's MIN would: every pass after the first hits what the
 * cache holds (fetching 1 - cache/data of what it reads), where first in first out lets go of
 * the members of the last pass it has not reached yet (0.82x against 0.51x, simulated, with a
 * cache of half the data).
 *
 * <p>Hashes are kept as four longs in a ring per kind, found through an open-addressing table on
 * their first long. A ring grows by doubling, to twice the bound at most, and is compacted when
 * it is full but at most half of it is in use (a member taken back leaves its slot empty until
 * then), so an unused tier costs nothing and compaction is paid at most once per half a ring of
 * adds. One lock: every operation is a few array accesses, and none does I/O.
 */
final class SpareMembers {
    /**
     * Heap a member of the bound costs here at most: 32 bytes of hash, 4 of length and 4 of pass
     * in a ring of up to twice the bound, and a table of ints at most half full.
     */
    static final int BYTES_PER_MEMBER = 112;

    private final int max;
    /** Members the index let go of, and those passed in an earlier pass. */
    private final Ring kept;
    /** Members the reader of an order plan by file has passed in this pass. */
    private Ring passed;
    /** The pass: counts {@link #newPass}. */
    private int pass;
    /** Written under the lock, read without it. */
    private volatile long bytes;
    /** Members here, for lock-free looks: zero is the common case and costs a volatile read. */
    private volatile int size;

    /** @param max members kept at most (0: none) */
    SpareMembers(int max) {
        if (max < 0) {
            throw new IllegalArgumentException("max " + max);
        }
        this.max = max;
        this.kept = new Ring(max);
        this.passed = new Ring(max);
    }

    /**
     * The most a heap of {@code maxHeapBytes} keeps here, for a sixteenth of it at most (an
     * eighth while a pass's ring and the kept one have both grown to the bound): 224,694 members
     * (25 GB of 110 KB images) at warpd's default 384 MiB, 599,186 at 1 GiB.
     */
    static int maxFor(long maxHeapBytes) {
        return (int) Math.min(Integer.MAX_VALUE / 16, maxHeapBytes / 16 / BYTES_PER_MEMBER);
    }

    /** The bytes a member of {@code dataLength} takes on disk (its block file's header and data). */
    static long weight(int dataLength) {
        return (long) BlockFile.headerLength(dataLength) + dataLength;
    }

    /** A member here: its hash and data length. */
    record Spare(BlobId id, int length) {
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** Whether it keeps any member (a bound above 0). */
    boolean keeps() {
        return max > 0;
    }

    int count() {
        return size;
    }

    /** Bytes on disk of the members here. */
    long bytes() {
        return bytes;
    }

    /**
     * Keeps a member of {@code dataLength} bytes the index let go of. Full, one is let go for it
     * ({@link #evictOne}) and returned (its file to be deleted by the caller); a bound of 0 keeps
     * nothing and returns it, as {@code id}.
     */
    synchronized Spare add(BlobId id, int dataLength) {
        return add(kept, id, dataLength);
    }

    /** Keeps a member the index held that the reader of an order plan by file has passed; as {@link #add}. */
    synchronized Spare pass(BlobId id, int dataLength) {
        return add(passed, id, dataLength);
    }

    /** A kept member the reader of an order plan by file has passed goes with the passed ones; false if it is not kept here. */
    synchronized boolean passKept(BlobId id) {
        if (size == 0) {
            return false;
        }
        long[] h = longs(id);
        int len = kept.take(h);
        if (len < 0) {
            return false;
        }
        passed.add(h, len, pass);
        return true;
    }

    private Spare add(Ring ring, BlobId id, int dataLength) {
        if (max == 0) {
            return new Spare(id, dataLength);
        }
        Spare out = null;
        if (size >= max) {
            long[] h = new long[4];
            int len = evictOne(h);
            out = new Spare(id(h), len);
        }
        ring.add(longs(id), dataLength, pass);
        count(weight(dataLength));
        return out;
    }

    /** Whether the member with this hash is here. */
    boolean contains(BlobId id) {
        if (size == 0) {
            return false;
        }
        long[] h = longs(id);
        synchronized (this) {
            return kept.find(h) >= 0 || passed.find(h) >= 0;
        }
    }

    /** Takes the member out (it goes back into the index); its data length, or -1 if not here. */
    int take(BlobId id) {
        if (size == 0) {
            return -1;
        }
        long[] h = longs(id);
        synchronized (this) {
            int len = kept.take(h);
            if (len < 0) {
                len = passed.take(h);
            }
            if (len >= 0) {
                count(-weight(len));
            }
            return len;
        }
    }

    /** Lets go of members, in the order {@link #evictOne} says, until at most {@code maxBytes} are here; those, for the caller to delete. */
    List<Spare> trimTo(long maxBytes) {
        long[] hashes;
        int[] lengths;
        int n = 0;
        synchronized (this) {
            if (bytes <= maxBytes) {
                return List.of();
            }
            hashes = new long[16];
            lengths = new int[4];
            long[] h = new long[4];
            while (bytes > maxBytes && size > 0) {
                if (n == lengths.length) {
                    hashes = java.util.Arrays.copyOf(hashes, hashes.length * 2);
                    lengths = java.util.Arrays.copyOf(lengths, lengths.length * 2);
                }
                lengths[n] = evictOne(h);
                System.arraycopy(h, 0, hashes, n * 4, 4);
                n++;
            }
        }
        // Ids made outside the lock: a gc of 200,000 members holds it for the array work only.
        List<Spare> out = new ArrayList<>(n);
        long[] h = new long[4];
        for (int i = 0; i < n; i++) {
            System.arraycopy(hashes, i * 4, h, 0, 4);
            out.add(new Spare(id(h), lengths[i]));
        }
        return out;
    }

    /**
     * A new pass begins (an order plan by file starts, with no other such plan followed): the
     * members passed in the last one are kept as any other, and those last used before it go first.
     */
    synchronized void newPass() {
        pass++;
        passed.drainInto(kept);
        passed = new Ring(max); // its arrays let go: a pass's ring may have grown to the bound
    }

    /** The members here, oldest first, kept ones first (a copy). */
    synchronized List<Spare> all() {
        List<Spare> out = new ArrayList<>(size);
        kept.addTo(out);
        passed.addTo(out);
        return out;
    }

    /** Forgets every member (their files went with the directory). */
    synchronized void clear() {
        kept.clear();
        passed = new Ring(max);
        size = 0;
        bytes = 0;
    }

    /** Lets one member go, its hash into {@code h}: a kept one last used before the last pass, else a passed one, else a kept one; oldest first. Its length. */
    private int evictOne(long[] h) {
        Ring from = kept.count > 0 && kept.headPass() < pass - 1 ? kept : passed.count > 0 ? passed : kept;
        int len = from.removeOldest(h);
        count(-weight(len));
        return len;
    }

    private void count(long weight) {
        bytes += weight;
        size = kept.count + passed.count;
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

    private static BlobId id(long[] h) {
        byte[] d = new byte[32];
        for (int i = 0; i < 4; i++) {
            for (int b = 0; b < 8; b++) {
                d[i * 8 + b] = (byte) (h[i] >>> (56 - 8 * b));
            }
        }
        return BlobId.fromDigest(d);
    }

    /**
     * Members in the order they came, each with its hash, length and pass, found by hash. Not
     * thread-safe: {@link SpareMembers} holds its lock around every call.
     */
    private static final class Ring {
        private static final int FIRST_CAPACITY = 1024;
        /** A freed slot's length. */
        private static final int GONE = -1;

        /** Slots at most: twice the members, so that a full ring is at most half in use and is compacted. */
        private final int maxCapacity;
        private long[] hashes = new long[0];
        /** Data length of each slot's member, or {@link #GONE}. */
        private int[] lengths = new int[0];
        /** The pass each slot's member came in. */
        private int[] passes = new int[0];
        /** Slot + 1 by hash, 0 empty; linear probing, at least twice the capacity. */
        private int[] table = new int[0];
        private int head;
        /** Slots from {@link #head} in use, gone ones included. */
        private int used;
        int count;

        Ring(int max) {
            this.maxCapacity = (int) Math.min(Integer.MAX_VALUE / 8, Math.max(2, 2L * max));
        }

        void add(long[] h, int length, int pass) {
            if (used == lengths.length) {
                grow();
            }
            int slot = (head + used) % lengths.length;
            used++;
            System.arraycopy(h, 0, hashes, slot * 4, 4);
            lengths[slot] = length;
            passes[slot] = pass;
            insert(slot);
            count++;
        }

        /** Takes the member out; its length, or -1 if not here. */
        int take(long[] h) {
            int t = find(h);
            if (t < 0) {
                return -1;
            }
            int slot = table[t] - 1;
            int len = lengths[slot];
            free(t, slot);
            return len;
        }

        /** The pass of the oldest member; only when {@link #count} is positive. */
        int headPass() {
            return passes[head];
        }

        /** Removes the oldest member, its hash into {@code h}; its length. */
        int removeOldest(long[] h) {
            int slot = head; // never a gone slot: free moves the head past them
            System.arraycopy(hashes, slot * 4, h, 0, 4);
            int len = lengths[slot];
            free(find(h), slot);
            return len;
        }

        /** Adds every member, oldest first, to {@code other}'s end, with its pass; this ring is left as it is. */
        void drainInto(Ring other) {
            long[] h = new long[4];
            for (int i = 0; i < used; i++) {
                int slot = (head + i) % lengths.length;
                if (lengths[slot] != GONE) {
                    System.arraycopy(hashes, slot * 4, h, 0, 4);
                    other.add(h, lengths[slot], passes[slot]);
                }
            }
        }

        void addTo(List<Spare> out) {
            long[] h = new long[4];
            for (int i = 0; i < used; i++) {
                int slot = (head + i) % lengths.length;
                if (lengths[slot] != GONE) {
                    System.arraycopy(hashes, slot * 4, h, 0, 4);
                    out.add(new Spare(id(h), lengths[slot]));
                }
            }
        }

        void clear() {
            hashes = new long[0];
            lengths = new int[0];
            passes = new int[0];
            table = new int[0];
            head = 0;
            used = 0;
            count = 0;
        }

        /** Frees slot {@code slot}, found at table index {@code t}; the head moves past gone slots. */
        private void free(int t, int slot) {
            lengths[slot] = GONE;
            count--;
            delete(t);
            while (used > 0 && lengths[head] == GONE) {
                head = (head + 1) % lengths.length;
                used--;
            }
        }

        /** Full: compacted where it stands if at most half of it is in use, else doubled. */
        private void grow() {
            int cap = lengths.length;
            if (count > cap / 2 || cap == 0) {
                cap = Math.min(maxCapacity, Math.max(FIRST_CAPACITY, 2 * cap));
            }
            long[] h = new long[cap * 4];
            int[] l = new int[cap];
            int[] p = new int[cap];
            int n = 0;
            for (int i = 0; i < used; i++) {
                int slot = (head + i) % lengths.length;
                if (lengths[slot] != GONE) {
                    System.arraycopy(hashes, slot * 4, h, n * 4, 4);
                    p[n] = passes[slot];
                    l[n++] = lengths[slot];
                }
            }
            hashes = h;
            lengths = l;
            passes = p;
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
        int find(long[] h) {
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

        /** A SHA-256's bits are uniform already; the high ones are folded in so that a small table sees them too. */
        private static int mix(long h) {
            return (int) (h ^ (h >>> 32));
        }
    }
}
