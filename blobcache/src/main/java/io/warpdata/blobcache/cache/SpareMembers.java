package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlobId;
import java.lang.ref.Cleaner;
import java.util.ArrayList;
import java.util.List;

/**
 * Members cached under their own hash that {@link DiskBlocks}' index let go of for its count
 * bound ({@link DiskBlocks#MAX_MEMBERS}), kept on disk in room the index does not use. An index
 * entry costs about 400 bytes of heap; one here about 60 bytes of memory outside the heap
 * ({@link OffHeap}: the hash, the length and the pass in a ring, a slot of the lookup table), 112
 * at most with the ring's room for members taken out of its middle, up to {@link #MAX} of them:
 * enough for ImageNet's 1.28M images of 110 KB to fill the default 100 GB cache (about 900,000).
 * Before, an ImageNet epoch fetched file by file (an order plan over more than the cache keeps)
 * left 3.6 GB of a 100 GB cache for the next epoch; with the members here on the heap, within a
 * sixteenth of it (224,694 at the default 384 MiB), 28 GB.
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
 * adds; a pass's ring gives its memory back when the pass ends. One lock: every operation is a few
 * accesses to that memory, and none does I/O. Where the memory cannot be had (libc not loaded,
 * {@code calloc} failing), a member is not kept: its file is deleted, as one let go.
 */
final class SpareMembers {
    /**
     * Memory a member of the bound costs a ring at most: 32 bytes of hash, 4 of length and 4 of
     * pass in a ring of up to twice the bound, and a table of ints at most half full.
     */
    static final int BYTES_PER_MEMBER = 112;
    /**
     * Members kept here at most: 1,048,576. Their memory is what they use (about 60 bytes a member,
     * 112 at most a ring, the pass's ring freed when the pass ends; 192 MiB if both rings ever grew
     * to the bound). A cache's members weigh 4 KiB of header and their data each, so few caches
     * hold this many: ImageNet's 110 KB images fill the default 100 GB with about 900,000.
     */
    static final int MAX = 1 << 20;

    private static final Cleaner CLEANER = Cleaner.create();

    private final int max;
    /** Members the index let go of, and those passed in an earlier pass. */
    private final Ring kept;
    /** Members the reader of an order plan by file has passed in this pass. */
    private final Ring passed;
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
        // The rings' memory goes back when this is unreachable: every use of a ring is under this
        // object's lock, which keeps it reachable to the end of the use.
        Ring k = kept;
        Ring p = passed;
        CLEANER.register(this, () -> {
            k.release();
            p.release();
        });
    }

    /** The bound for this process: {@link #MAX}, or none where memory outside the heap cannot be had. */
    static int defaultMax() {
        return OffHeap.available() ? MAX : 0;
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
        if (!passed.ensureRoom()) {
            return kept.find(h) >= 0; // it stays with the kept ones
        }
        int len = kept.take(h);
        if (len < 0) {
            return false;
        }
        passed.add(h, len, pass);
        return true;
    }

    private Spare add(Ring ring, BlobId id, int dataLength) {
        // No memory for one more (the machine is out of it): kept nowhere, its file deleted.
        if (max == 0 || !ring.ensureRoom()) {
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
     *
     * @return the members there was no memory to keep (none unless the machine is out of it),
     *         for the caller to delete
     */
    synchronized List<Spare> newPass() {
        pass++;
        List<Spare> lost = new ArrayList<>(0);
        passed.drainInto(kept, lost);
        passed.release(); // its memory let go: a pass's ring may have grown to the bound
        if (!lost.isEmpty()) {
            long w = 0;
            for (Spare s : lost) {
                w += weight(s.length());
            }
            count(-w);
        }
        return lost;
    }

    /** Bytes of memory outside the heap the members here take (slots and tables; stats, tests). */
    synchronized long memoryBytes() {
        return kept.memoryBytes() + passed.memoryBytes();
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
        kept.release();
        passed.release();
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
     * Members in the order they came, each with its hash, length and pass, found by hash, in
     * memory outside the heap ({@link OffHeap}): a slot of {@link #SLOT} bytes each (the hash's
     * four longs, the length, the pass) and a table of ints. Not thread-safe: {@link SpareMembers}
     * holds its lock around every call, and frees the memory through {@link #release}.
     */
    private static final class Ring {
        private static final int FIRST_CAPACITY = 1024;
        /** A freed slot's length. */
        private static final int GONE = -1;
        /** Bytes a slot: 32 of hash, 4 of length, 4 of pass. */
        static final int SLOT = 40;
        private static final int LENGTH = 32;
        private static final int PASS = 36;

        /** Slots at most: twice the members, so that a full ring is at most half in use and is compacted. */
        private final int maxCapacity;
        /** {@link #capacity} slots; null while it has none. */
        private OffHeap slots;
        private int capacity;
        /** Slot + 1 by hash, 0 empty; linear probing, at least twice the capacity; null while it has none. */
        private OffHeap table;
        private int tableLength;
        private int head;
        /** Slots from {@link #head} in use, gone ones included. */
        private int used;
        int count;

        Ring(int max) {
            this.maxCapacity = (int) Math.min(Integer.MAX_VALUE / 8, Math.max(2, 2L * max));
        }

        /** Makes room for one {@link #add}; false if the memory for it could not be had. */
        boolean ensureRoom() {
            return used < capacity || grow();
        }

        /** Adds a member; {@link #ensureRoom} said there is room. */
        void add(long[] h, int length, int pass) {
            int slot = (head + used) % capacity;
            used++;
            long at = (long) slot * SLOT;
            for (int i = 0; i < 4; i++) {
                slots.putLong(at + 8L * i, h[i]);
            }
            slots.putInt(at + LENGTH, length);
            slots.putInt(at + PASS, pass);
            insert(slot);
            count++;
        }

        /** Takes the member out; its length, or -1 if not here. */
        int take(long[] h) {
            int t = find(h);
            if (t < 0) {
                return -1;
            }
            int slot = tableAt(t) - 1;
            int len = length(slot);
            free(t, slot);
            return len;
        }

        /** The pass of the oldest member; only when {@link #count} is positive. */
        int headPass() {
            return pass(head);
        }

        /** Removes the oldest member, its hash into {@code h}; its length. */
        int removeOldest(long[] h) {
            int slot = head; // never a gone slot: free moves the head past them
            hash(slot, h);
            int len = length(slot);
            free(find(h), slot);
            return len;
        }

        /**
         * Adds every member, oldest first, to {@code other}'s end, with its pass; this ring is left
         * as it is. Those {@code other} found no memory for are added to {@code lost}.
         */
        void drainInto(Ring other, List<Spare> lost) {
            long[] h = new long[4];
            for (int i = 0; i < used; i++) {
                int slot = (head + i) % capacity;
                int len = length(slot);
                if (len != GONE) {
                    hash(slot, h);
                    if (other.ensureRoom()) {
                        other.add(h, len, pass(slot));
                    } else {
                        lost.add(new Spare(id(h), len));
                    }
                }
            }
        }

        void addTo(List<Spare> out) {
            long[] h = new long[4];
            for (int i = 0; i < used; i++) {
                int slot = (head + i) % capacity;
                int len = length(slot);
                if (len != GONE) {
                    hash(slot, h);
                    out.add(new Spare(id(h), len));
                }
            }
        }

        /** Empties the ring and gives its memory back. */
        void release() {
            if (slots != null) {
                slots.free();
                table.free();
            }
            slots = null;
            table = null;
            capacity = 0;
            tableLength = 0;
            head = 0;
            used = 0;
            count = 0;
        }

        /** Bytes of memory the ring holds. */
        long memoryBytes() {
            return slots == null ? 0 : slots.size() + table.size();
        }

        private void hash(int slot, long[] h) {
            long at = (long) slot * SLOT;
            for (int i = 0; i < 4; i++) {
                h[i] = slots.getLong(at + 8L * i);
            }
        }

        private int length(int slot) {
            return slots.getInt((long) slot * SLOT + LENGTH);
        }

        private int pass(int slot) {
            return slots.getInt((long) slot * SLOT + PASS);
        }

        private int tableAt(int t) {
            return table.getInt(4L * t);
        }

        private void tableSet(int t, int v) {
            table.putInt(4L * t, v);
        }

        /** Frees slot {@code slot}, found at table index {@code t}; the head moves past gone slots. */
        private void free(int t, int slot) {
            slots.putInt((long) slot * SLOT + LENGTH, GONE);
            count--;
            delete(t);
            while (used > 0 && length(head) == GONE) {
                head = (head + 1) % capacity;
                used--;
            }
        }

        /**
         * Full: compacted into new memory of the same size if at most half of it is in use, else of
         * twice the size. False, the ring as it was, if the memory could not be had.
         */
        private boolean grow() {
            int cap = capacity;
            if (count > cap / 2 || cap == 0) {
                cap = Math.min(maxCapacity, Math.max(FIRST_CAPACITY, 2 * cap));
            }
            int tl = Integer.highestOneBit(Math.max(1, cap - 1)) * 4;
            OffHeap s = OffHeap.allocate((long) cap * SLOT);
            OffHeap t = s == null ? null : OffHeap.allocate(4L * tl);
            if (t == null) {
                if (s != null) {
                    s.free();
                }
                return false;
            }
            int n = 0;
            for (int i = 0; i < used; i++) {
                int slot = (head + i) % capacity;
                if (length(slot) != GONE) {
                    long from = (long) slot * SLOT;
                    long to = (long) n * SLOT;
                    for (int w = 0; w < SLOT; w += 8) {
                        s.putLong(to + w, slots.getLong(from + w));
                    }
                    n++;
                }
            }
            if (slots != null) {
                slots.free();
                table.free();
            }
            slots = s;
            table = t;
            capacity = cap;
            tableLength = tl;
            head = 0;
            used = n;
            for (int slot = 0; slot < n; slot++) {
                insert(slot);
            }
            return used < capacity;
        }

        private void insert(int slot) {
            int mask = tableLength - 1;
            int t = mix(slots.getLong((long) slot * SLOT)) & mask;
            while (tableAt(t) != 0) {
                t = (t + 1) & mask;
            }
            tableSet(t, slot + 1);
        }

        /** Table index of the slot holding hash {@code h}, or -1. */
        int find(long[] h) {
            if (tableLength == 0) {
                return -1;
            }
            int mask = tableLength - 1;
            for (int t = mix(h[0]) & mask; tableAt(t) != 0; t = (t + 1) & mask) {
                long s = (long) (tableAt(t) - 1) * SLOT;
                if (slots.getLong(s) == h[0] && slots.getLong(s + 8) == h[1] && slots.getLong(s + 16) == h[2]
                        && slots.getLong(s + 24) == h[3]) {
                    return t;
                }
            }
            return -1;
        }

        /** Removes table index {@code t}, moving later entries of its run back (no tombstones). */
        private void delete(int t) {
            int mask = tableLength - 1;
            tableSet(t, 0);
            for (int j = (t + 1) & mask; tableAt(j) != 0; j = (j + 1) & mask) {
                int home = mix(slots.getLong((long) (tableAt(j) - 1) * SLOT)) & mask;
                // j's entry may move to the hole at t if its home is not in (t, j] (cyclically).
                if (t <= j ? (home <= t || home > j) : (home <= t && home > j)) {
                    tableSet(t, tableAt(j));
                    tableSet(j, 0);
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
