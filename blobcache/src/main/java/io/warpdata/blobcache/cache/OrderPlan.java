package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The order in which one reader will read members of blobs, typically one epoch of a shuffled
 * DataLoader, kept compactly for {@link OrderPrefetcher}: not the members themselves but what
 * fetching and following the reader need.
 *
 * <ul>
 * <li><b>What to fetch, in which order.</b> Each blob is cut into grains of {@link #GRAIN_BYTES}
 *     (the default block size); a grain's <em>need</em> is the position of the first member that
 *     reads it. {@link #grain(int)} lists the needed grains in order of need: the order the
 *     prefetcher fetches them in (4 bytes per grain of every blob touched, 8 per needed grain).</li>
 * <li><b>Where the reader is.</b> Each member's start offset in its blob with its position, sorted
 *     per blob (8 bytes a member): a read that starts exactly at a planned member's start says
 *     the reader has reached that member. Reads of a member's later bytes, of unplanned members
 *     and of another reader's members (who shares the blocks but not the members) say nothing.</li>
 * </ul>
 *
 * A member made of several pieces (a synthesized header, then a blob range) is one position with
 * several slices. Immutable once built; thread-safe.
 */
public final class OrderPlan {
    /** What a grain is: 1 MiB, the default block size, so that a grain is usually exactly a block. */
    public static final int GRAIN_BYTES = 1 << 20;
    /** Positions are packed in 24 bits next to a member's offset. */
    public static final int MAX_MEMBERS = (1 << 24) - 1;
    /** Members starting at or beyond 512 GiB of a blob are fetched but not followed (39 bits of offset). */
    static final long MAX_FOLLOWED_OFFSET = (1L << 39) - 1;
    /** What a blob costs besides its arrays (its reference, map entry and array headers), about. */
    static final long BLOB_OVERHEAD_BYTES = 160;

    private final String description;
    private final BlobRef[] blobs;
    private final Map<BlobId, Integer> blobIndex;
    /** Per blob, per grain: the position of the first member reading it, or -1. */
    private final int[][] need;
    /** Needed grains in order of need: blob index << 32 | grain. */
    private final long[] order;
    /** Per blob, sorted: member start offset << 24 | position. */
    private final long[][] starts;
    private final int members;
    private final long plannedBytes;
    private final long heldBytes;
    /** Per position: the reference of the member it reads ({@link Builder#member}), 0 for none; null if none has one. */
    private final long[] refs;
    private final int memberRefs;
    private final long memberRefBytes;
    private final PlanMembers resolver;
    private final Fetch fetch;

    /**
     * What the reader asked the plan to fetch: {@link #AUTO} decides ({@link OrderPrefetcher}),
     * {@link #BLOCKS} keeps to the blocks unless they are more than the cache keeps, {@link #FILES}
     * fetches each file on its own whenever the plan's files can be.
     */
    public enum Fetch {
        AUTO, BLOCKS, FILES
    }

    private OrderPlan(Builder b) {
        this.fetch = b.fetch;
        this.description = b.description;
        this.blobs = b.blobs.toArray(BlobRef[]::new);
        this.blobIndex = Map.copyOf(b.blobIndex);
        this.need = b.need.toArray(int[][]::new);
        this.order = Arrays.copyOf(b.order, b.orderSize);
        this.starts = new long[blobs.length][];
        for (int i = 0; i < blobs.length; i++) {
            long[] s = Arrays.copyOf(b.starts.get(i), b.startCount[i]);
            Arrays.sort(s);
            starts[i] = s;
        }
        this.members = b.position + 1;
        boolean byRef = b.refCount > 0 && b.resolver != null;
        this.refs = byRef ? Arrays.copyOf(b.refs, members) : null;
        this.memberRefs = byRef ? b.refCount : 0;
        this.memberRefBytes = byRef ? b.refBytes : 0;
        this.resolver = b.resolver;
        long held = 8L * order.length + (refs == null ? 0 : 8L * refs.length);
        for (int i = 0; i < blobs.length; i++) {
            held += BLOB_OVERHEAD_BYTES + 4L * need[i].length + 8L * starts[i].length;
        }
        this.heldBytes = held;
        long planned = 0;
        for (long g : order) {
            planned += grainLength(blobs[(int) (g >>> 32)], (int) g);
        }
        this.plannedBytes = planned;
    }

    /** Where a builder's memory is accounted for. */
    interface Reservation {
        /**
         * Takes {@code bytes} more.
         *
         * @throws PlanTooLargeException if there is no room
         */
        void reserve(long bytes);

        /** Gives {@code bytes} back. */
        void release(long bytes);
    }

    /** A builder whose memory is reserved from {@code reservation} as it grows. */
    static Builder builder(String description, Reservation reservation) {
        return new Builder(description, reservation);
    }

    /** What the reader asked the plan to fetch. */
    public Fetch fetch() {
        return fetch;
    }

    /** What the plan is for, for logs and status (e.g. {@code ws/name@3fa1c09e2b7d}). */
    public String description() {
        return description;
    }

    /** Members (positions) in the plan. */
    public int members() {
        return members;
    }

    /** Blobs the plan reads. */
    int blobCount() {
        return blobs.length;
    }

    BlobRef blob(int i) {
        return blobs[i];
    }

    /** Needed grains. */
    public int grains() {
        return order.length;
    }

    /** Bytes of the grains the plan reads: what the prefetcher fetches for it at most. */
    public long plannedBytes() {
        return plannedBytes;
    }

    /** Memory the plan holds. */
    public long heldBytes() {
        return heldBytes;
    }

    /** Positions whose member can be fetched on its own ({@link Builder#member}). */
    int memberRefs() {
        return memberRefs;
    }

    /** Bytes of those members. */
    long memberRefBytes() {
        return memberRefBytes;
    }

    /**
     * The member position {@code position} reads, resolved now, or null if it has none.
     *
     * @throws RuntimeException what the resolver threw
     */
    BlobMember member(int position) {
        if (refs == null || position < 0 || position >= refs.length || refs[position] == 0) {
            return null;
        }
        return resolver.member(refs[position]);
    }

    /** The {@code i}th needed grain in order of need: blob index << 32 | grain index. */
    long grain(int i) {
        return order[i];
    }

    /** The position that first needs grain {@code grain} of blob {@code blob}, or -1 if none does. */
    int need(int blob, int grain) {
        int[] n = need[blob];
        return grain < n.length ? n[grain] : -1;
    }

    /** The need of the {@code i}th grain in order. */
    int needAt(int i) {
        long g = order[i];
        return need[(int) (g >>> 32)][(int) g];
    }

    /** How many grains in order are needed by positions up to {@code position} (inclusive). */
    int grainsNeededBy(int position) {
        int lo = 0;
        int hi = order.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (needAt(mid) <= position) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** The blob's index in this plan, or -1. */
    int indexOf(BlobId blob) {
        Integer i = blobIndex.get(blob);
        return i == null ? -1 : i;
    }

    /**
     * The position of the planned member of blob {@code blob} (an index) that starts exactly at
     * {@code offset} (the first, if planned more than once), or -1.
     */
    int positionStartingAt(int blob, long offset) {
        if (offset < 0 || offset > MAX_FOLLOWED_OFFSET) {
            return -1;
        }
        long[] s = starts[blob];
        long key = offset << 24;
        int lo = 0;
        int hi = s.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (s[mid] < key) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if (lo < s.length && (s[lo] >>> 24) == offset) {
            return (int) (s[lo] & 0xFFFFFF);
        }
        return -1;
    }

    static int grainLength(BlobRef blob, int grain) {
        return (int) Math.min(GRAIN_BYTES, blob.size() - (long) grain * GRAIN_BYTES);
    }

    @Override
    public String toString() {
        return "OrderPlan[" + description + ", " + members + " members, " + blobs.length + " blobs, " + order.length
                + " grains]";
    }

    /**
     * Collects members in read order. Not thread-safe; memory grows in steps, each reported
     * first (so a refusal leaves the builder as it was).
     */
    public static final class Builder {
        private final String description;
        private final Reservation reservation;
        private final List<BlobRef> blobs = new ArrayList<>();
        private final Map<BlobId, Integer> blobIndex = new HashMap<>();
        private final List<int[]> need = new ArrayList<>();
        private final List<long[]> starts = new ArrayList<>();
        private int[] startCount = new int[8];
        private long[] order = new long[0];
        private int orderSize;
        private int position = -1;
        private long reserved;
        private boolean built;
        private long[] refs = new long[0];
        private int refCount;
        private long refBytes;
        private PlanMembers resolver;
        private Fetch fetch = Fetch.AUTO;

        private Builder(String description, Reservation reservation) {
            this.description = Objects.requireNonNull(description, "description");
            this.reservation = Objects.requireNonNull(reservation, "reservation");
        }

        /**
         * The next member in read order: {@code length} bytes of {@code blob} from {@code offset}.
         *
         * @throws PlanTooLargeException if the plan would hold more memory than allowed, or more
         *         than {@link #MAX_MEMBERS} members
         */
        public Builder add(BlobRef blob, long offset, long length) {
            if (position + 1 >= MAX_MEMBERS) {
                throw new PlanTooLargeException("The order plan " + description + " would have more than "
                        + MAX_MEMBERS + " members");
            }
            position++;
            slice(blob, offset, length);
            return this;
        }

        /** Another piece of the member added last (a synthesized file made of several blob ranges). */
        public Builder addToMember(BlobRef blob, long offset, long length) {
            if (position < 0) {
                throw new IllegalStateException("addToMember before add");
            }
            slice(blob, offset, length);
            return this;
        }

        /** A position with nothing to fetch (a file held in memory): counted, so positions stay aligned. */
        public Builder addEmpty() {
            if (position + 1 >= MAX_MEMBERS) {
                throw new PlanTooLargeException("The order plan " + description + " would have more than "
                        + MAX_MEMBERS + " members");
            }
            position++;
            return this;
        }

        /**
         * Names the member added last by {@code ref}, which {@code resolver} ({@link #members})
         * turns into that member if the plan fetches files rather than blocks. 8 bytes a position.
         * One that is empty or over {@link OrderPrefetcher#MAX_FILE_BYTES} is not recorded.
         *
         * @param ref    not 0 (0 means none)
         * @param length the member's length
         * @throws PlanTooLargeException if the plan would hold more memory than allowed
         */
        public Builder member(long ref, long length) {
            if (built) {
                throw new IllegalStateException("already built");
            }
            if (position < 0) {
                throw new IllegalStateException("member before add");
            }
            if (ref == 0) {
                throw new IllegalArgumentException("a member reference is not 0");
            }
            if (length <= 0 || length > OrderPrefetcher.MAX_FILE_BYTES) {
                return this; // not fetched on its own: read as without a plan (nor counted toward by file)
            }
            if (position >= refs.length) {
                int grown = Math.max(position + 1, Math.max(1024, refs.length + (refs.length >> 1)));
                grow(8L * (grown - refs.length));
                refs = Arrays.copyOf(refs, grown);
            }
            if (refs[position] == 0) {
                refCount++;
                refBytes += length;
            }
            refs[position] = ref;
            return this;
        }

        /** How {@link #member} references are resolved; without it they are ignored. */
        public Builder members(PlanMembers resolver) {
            this.resolver = Objects.requireNonNull(resolver, "resolver");
            return this;
        }

        /** What the reader asks the plan to fetch ({@link Fetch}); {@link Fetch#AUTO} unless said. */
        public Builder fetch(Fetch fetch) {
            this.fetch = Objects.requireNonNull(fetch, "fetch");
            return this;
        }

        private void slice(BlobRef blob, long offset, long length) {
            if (built) {
                throw new IllegalStateException("already built");
            }
            Objects.requireNonNull(blob, "blob");
            if (offset < 0 || length < 0 || offset + length > blob.size()) {
                throw new IllegalArgumentException("slice [" + offset + ", +" + length + ") of blob " + blob.id()
                        + " of " + blob.size() + " bytes");
            }
            if (length == 0) {
                return;
            }
            int b = blobIndex(blob);
            int[] n = need.get(b);
            int first = (int) (offset / GRAIN_BYTES);
            int last = (int) ((offset + length - 1) / GRAIN_BYTES);
            for (int g = first; g <= last; g++) {
                if (n[g] < 0) {
                    n[g] = position;
                    if (orderSize == order.length) {
                        int grown = Math.max(1024, order.length + (order.length >> 1));
                        grow(8L * (grown - order.length));
                        order = Arrays.copyOf(order, grown);
                    }
                    order[orderSize++] = (long) b << 32 | g;
                }
            }
            if (offset <= MAX_FOLLOWED_OFFSET) {
                long[] s = starts.get(b);
                int c = startCount[b];
                if (c == s.length) {
                    int grown = Math.max(16, s.length + (s.length >> 1));
                    grow(8L * (grown - s.length));
                    s = Arrays.copyOf(s, grown);
                    starts.set(b, s);
                }
                s[c] = offset << 24 | position;
                startCount[b] = c + 1;
            }
        }

        private int blobIndex(BlobRef blob) {
            Integer i = blobIndex.get(blob.id());
            if (i != null) {
                return i;
            }
            long grains = (blob.size() + GRAIN_BYTES - 1) / GRAIN_BYTES;
            if (grains > Integer.MAX_VALUE - 16) {
                throw new PlanTooLargeException("Blob " + blob.id() + " of the order plan " + description
                        + " is too large to plan (" + blob.size() + " bytes)");
            }
            grow(4 * grains + BLOB_OVERHEAD_BYTES);
            int[] n = new int[(int) grains];
            Arrays.fill(n, -1);
            int idx = blobs.size();
            blobs.add(blob);
            blobIndex.put(blob.id(), idx);
            need.add(n);
            starts.add(new long[0]);
            if (idx == startCount.length) {
                startCount = Arrays.copyOf(startCount, idx * 2);
            }
            return idx;
        }

        private void grow(long bytes) {
            reservation.reserve(bytes);
            reserved += bytes;
        }

        /** Gives up the plan (a client that never sent its last part): its memory is released. */
        public void discard() {
            if (!built) {
                built = true;
                reservation.release(reserved);
                reserved = 0;
            }
        }

        /** Members added so far. */
        public int members() {
            return position + 1;
        }

        /** Memory reserved so far. */
        long reservedBytes() {
            return reserved;
        }

        /**
         * The plan; the builder can no longer be used. The plan holds at most what was reserved
         * ({@link OrderPlan#heldBytes()} is the part of it still in use once the arrays are trimmed).
         */
        OrderPlan build() {
            if (built) {
                throw new IllegalStateException("already built or discarded");
            }
            built = true;
            return new OrderPlan(this);
        }
    }
}
