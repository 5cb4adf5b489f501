package io.warpdata.blobcache.cache;

import java.util.function.LongPredicate;

/**
 * The free space the disk cache leaves on its file system: a block is written only if, counting
 * the other writes in progress, it fits above the floor, after evicting cached blocks to make
 * room if need be.
 */
final class FreeSpaceFloor {
    private final DiskSpace space;
    private final long floor;
    /** Evicts until the cache is smaller by the given bytes; false if there was nothing to evict. */
    private final LongPredicate makeRoom;
    /**
     * Bytes being written right now: counted against the floor before they land. Guarded by
     * {@link #reserveLock}, as is every check of them against the free space.
     */
    private long pendingWrites;
    private final Object reserveLock = new Object();

    /**
     * @param minFreeBytes the floor, or {@link CacheConfig#AUTO_FREE_FLOOR}: 5% of the file
     *        system, at least 1 GiB
     * @param makeRoom evicts cached blocks worth the bytes it is given; answers false if the
     *        cache was already empty and nothing could be evicted
     */
    FreeSpaceFloor(DiskSpace space, long minFreeBytes, LongPredicate makeRoom) {
        this.space = space;
        this.floor = CacheConfig.floorBytes(minFreeBytes, space.totalBytes());
        this.makeRoom = makeRoom;
    }

    DiskSpace space() {
        return space;
    }

    /** The free space on the file system now, in bytes. */
    long usableBytes() {
        return space.usableBytes();
    }

    /** The floor in bytes. */
    long bytes() {
        return floor;
    }

    /**
     * Reserves {@code bytes} for a write if, counting the other writes in progress, they fit
     * above the floor, evicting cached blocks to make room. A reservation is given back with
     * {@link #release} once the write has landed (or was given up).
     *
     * <p>The check reads the reservations first and the free space second, under the same lock
     * that writers take to give a reservation back (after their rename): a write either is still
     * reserved when the check looks, or had already landed before the free space was read. Read
     * the other way round (or without the lock), a write finishing between the two reads was
     * counted in neither and the floor was overshot by a block.
     *
     * @return false if they do not fit even after evicting (then nothing is written)
     */
    boolean reserve(long bytes) {
        for (int attempt = 0; attempt < 3; attempt++) {
            long shortBy;
            synchronized (reserveLock) {
                long pending = pendingWrites;
                shortBy = floor + pending + bytes - space.usableBytes();
                if (shortBy <= 0) {
                    pendingWrites = pending + bytes;
                    return true;
                }
            }
            if (!makeRoom.test(shortBy)) {
                return false;
            }
        }
        return false;
    }

    /**
     * Gives a reservation back. Only once the block is renamed into place (or given up), so that
     * a reservation that no longer sees these bytes pending sees them in the free space instead.
     */
    void release(long bytes) {
        synchronized (reserveLock) {
            pendingWrites -= bytes;
        }
    }
}
