package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Where the bytes of an archive member were last served from blocks: member SHA-256 -> (blob,
 * offset, length). Another dataset whose shards hold the same member (the same images packed
 * into other shards) finds it here and is served from the first one's cached blocks
 * ({@link MemberReads}) instead of fetching its own.
 *
 * <p>A fixed table of {@link #SLOTS} entries in sets of {@link #WAYS}, by the hash's first bits,
 * like a CPU cache: a full set replaces one of its entries at random. Bounded (at most ~5 MiB of
 * heap: 65,536 entries of ~72 bytes, plus the table), no lock, and a lookup allocates nothing.
 * An entry is only a hint: its blocks may have been evicted since (the reader then checks and
 * forgets it), and it is trusted only once the bytes it points at have been hashed to the
 * member's SHA-256 ({@link Location#verified}).
 */
final class MemberLocator {
    /**
     * Entries: 65,536 (~5 MiB of the heap, 384 MiB by default). A location is remembered per
     * member read from blocks, so this is how many members a second dataset can find in the
     * first one's cached blocks (2 GB of 30 KB images); beyond it dedup is partial, never wrong.
     */
    static final int SLOTS = 1 << 16;
    /**
     * Entries per set: 4. With 1,000 members remembered, one entry per set (direct mapped) would
     * lose about 8 of them to collisions; with 4 ways, next to none (about 10^-4 expected).
     */
    static final int WAYS = 4;
    /**
     * Largest member located: 16 MiB. A location is checked by hashing all of the member once,
     * before its first byte is served; larger members (videos, big tensors) are read
     * sequentially through their own shard's blocks.
     */
    static final long MAX_LOCATED_BYTES = 16L << 20;

    /** A member's bytes in a blob. Immutable but for {@link #verified}. */
    static final class Location {
        final long h0;
        final long h1;
        final long h2;
        final long h3;
        final BlobRef blob;
        final long offset;
        final long length;
        /** The bytes at (blob, offset, length) hashed to the member's SHA-256 (written under this object's lock). */
        volatile boolean verified;

        Location(long h0, long h1, long h2, long h3, BlobRef blob, long offset, long length) {
            this.h0 = h0;
            this.h1 = h1;
            this.h2 = h2;
            this.h3 = h3;
            this.blob = blob;
            this.offset = offset;
            this.length = length;
        }

        boolean is(long a, long b, long c, long d) {
            return h0 == a && h1 == b && h2 == c && h3 == d;
        }

        /** Whether {@code digest[0, 32)} is this location's member hash. */
        boolean hashes(byte[] digest) {
            return is(word(digest, 0), word(digest, 8), word(digest, 16), word(digest, 24));
        }
    }

    private final AtomicReferenceArray<Location> slots = new AtomicReferenceArray<>(SLOTS);

    /** Where the member with SHA-256 {@code hash} was served from, or null. Allocates nothing. */
    Location find(BlobId hash) {
        String hex = hash.hex();
        long h0 = word(hex, 0);
        long h1 = word(hex, 1);
        long h2 = word(hex, 2);
        long h3 = word(hex, 3);
        int set = set(h0);
        for (int i = 0; i < WAYS; i++) {
            Location l = slots.get(set + i);
            if (l != null && l.is(h0, h1, h2, h3)) {
                return l;
            }
        }
        return null;
    }

    /**
     * Remembers that the member with SHA-256 {@code hash} is bytes {@code [offset, offset +
     * length)} of {@code blob}, unless a location of it is known already.
     */
    void remember(BlobId hash, BlobRef blob, long offset, long length) {
        if (length > MAX_LOCATED_BYTES || find(hash) != null) {
            return;
        }
        String hex = hash.hex();
        Location fresh = new Location(word(hex, 0), word(hex, 1), word(hex, 2), word(hex, 3), blob, offset, length);
        int set = set(fresh.h0);
        for (int i = 0; i < WAYS; i++) {
            if (slots.compareAndSet(set + i, null, fresh)) {
                return;
            }
        }
        slots.set(set + ThreadLocalRandom.current().nextInt(WAYS), fresh);
    }

    /** Forgets {@code l} (its blocks are gone, or its bytes are not the member's). */
    void forget(Location l) {
        int set = set(l.h0);
        for (int i = 0; i < WAYS; i++) {
            slots.compareAndSet(set + i, l, null);
        }
    }

    private static int set(long h0) {
        return ((int) (h0 >>> 40) & (SLOTS / WAYS - 1)) * WAYS;
    }

    /** Whether {@code digest[0, 32)} is {@code hash}. Allocates nothing. */
    static boolean hashes(BlobId hash, byte[] digest) {
        String hex = hash.hex();
        for (int k = 0; k < 4; k++) {
            if (word(hex, k) != word(digest, 8 * k)) {
                return false;
            }
        }
        return true;
    }

    /** Word {@code k} (0-3) of a 64-hex-digit hash: the big-endian value of its bytes 8k..8k+7. */
    private static long word(String hex, int k) {
        return Long.parseUnsignedLong(hex, 16 * k, 16 * k + 16, 16);
    }

    private static long word(byte[] digest, int at) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (digest[at + i] & 0xff);
        }
        return v;
    }
}
