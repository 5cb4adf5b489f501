package io.warpdata.blobcache.cache;

import java.nio.file.Path;
import java.util.Objects;

/**
 * Settings of a {@link BlockCache}. Start from {@link #defaults(Path)} and adjust with the
 * {@code with*} methods.
 *
 * @param mode                 see {@link CacheMode}
 * @param dir                  cache directory (the format lives under {@code dir/v1}); unused in
 *                             {@link CacheMode#REMOTE}
 * @param maxBytes             size limit of the disk cache, headers included
 * @param minFreeBytes         free space the cache always leaves on its filesystem, or
 *                             {@link #AUTO_FREE_FLOOR} for max(5% of the filesystem, 1 GiB)
 * @param memoryBytes          size of the block memory cache in {@link CacheMode#REMOTE}
 * @param maxInFlightBytes     bound on the bytes of all fetches in flight (memory)
 * @param maxPrefetchBytes     bound on the bytes of read-ahead queued or in flight
 * @param maxConcurrentFetches ranged GETs in flight at once
 * @param maxOpenFiles         block files kept open for reading
 * @param retry                retries and the read deadline
 */
public record CacheConfig(CacheMode mode, Path dir, long maxBytes, long minFreeBytes, long memoryBytes,
        long maxInFlightBytes, long maxPrefetchBytes, int maxConcurrentFetches, int maxOpenFiles,
        RetryPolicy retry) {

    /** Marker for "max(5% of the cache filesystem, 1 GiB)". */
    public static final long AUTO_FREE_FLOOR = -1;

    /**
     * The free-space floor in bytes on a file system of {@code totalBytes}: {@code minFreeBytes},
     * or for {@link #AUTO_FREE_FLOOR} 5% of it, at least 1 GiB. Everything warpd keeps in its
     * cache directory (blocks, copies, the catalog's member indexes) stays above it.
     */
    public static long floorBytes(long minFreeBytes, long totalBytes) {
        return minFreeBytes == AUTO_FREE_FLOOR ? Math.max(totalBytes / 20, 1L << 30) : minFreeBytes;
    }

    public CacheConfig {
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(retry, "retry");
        if (mode.usesDisk()) {
            Objects.requireNonNull(dir, "dir (needed in mode " + mode + ")");
        }
        if (maxBytes <= 0 || memoryBytes <= 0 || maxInFlightBytes <= 0 || maxPrefetchBytes < 0) {
            throw new IllegalArgumentException("cache sizes must be positive: max " + maxBytes + ", memory "
                    + memoryBytes + ", in flight " + maxInFlightBytes + ", prefetch " + maxPrefetchBytes);
        }
        if (minFreeBytes < 0 && minFreeBytes != AUTO_FREE_FLOOR) {
            throw new IllegalArgumentException("minFreeBytes must be >= 0 or AUTO_FREE_FLOOR, was " + minFreeBytes);
        }
        if (maxConcurrentFetches < 1 || maxOpenFiles < 1) {
            throw new IllegalArgumentException("maxConcurrentFetches and maxOpenFiles must be >= 1");
        }
    }

    /**
     * Mode auto; 100 GiB (DESIGN.md's WARP_CACHE_SIZE_GB default); free floor auto; 128 MiB of
     * block memory in remote mode (bounded, two readers' full 64 MiB windows); 128 MiB in flight
     * (16 GETs of 8 MiB, or 4 of the largest 32 MiB runs: at 25-90 MB/s per connection and 10-50
     * ms to the first byte, far more than the link holds in flight; with the heap of
     * scripts/warpd, 384 MiB, warpd's resident memory peaked at 445-481 MiB under a 25 MB/s
     * link, 516-577 MiB on loopback); 128 MiB of
     * read-ahead (two full 64 MiB windows); 32 fetch workers, of which read-ahead may use 24
     * (a worker also verifies its run and writes it to the cache after the GET: with 16, only 8
     * of a 64 MiB window's 16 runs of 4 MiB were on the network on average at 25 MB/s per
     * connection, 178 MB/s; with 32, 218 MB/s; the bytes in flight stay bounded above); 1024 open block files (far below the usual 65536 fd limit).
     */
    public static CacheConfig defaults(Path dir) {
        return new CacheConfig(CacheMode.AUTO, dir, 100L << 30, AUTO_FREE_FLOOR, 128L << 20,
                128L << 20, 128L << 20, 32, 1024, RetryPolicy.DEFAULT);
    }

    public CacheConfig withMode(CacheMode m) {
        return with(b -> b.mode = m);
    }

    public CacheConfig withMaxBytes(long n) {
        return with(b -> b.maxBytes = n);
    }

    public CacheConfig withMinFreeBytes(long n) {
        return with(b -> b.minFreeBytes = n);
    }

    public CacheConfig withMemoryBytes(long n) {
        return with(b -> b.memoryBytes = n);
    }

    public CacheConfig withMaxInFlightBytes(long n) {
        return with(b -> b.maxInFlightBytes = n);
    }

    public CacheConfig withMaxPrefetchBytes(long n) {
        return with(b -> b.maxPrefetchBytes = n);
    }

    public CacheConfig withMaxConcurrentFetches(int n) {
        return with(b -> b.maxConcurrentFetches = n);
    }

    public CacheConfig withRetry(RetryPolicy r) {
        return with(b -> b.retry = r);
    }

    /** A copy with one setting changed (validated by the constructor like any other). */
    private CacheConfig with(java.util.function.Consumer<Copy> change) {
        Copy c = new Copy(this);
        change.accept(c);
        return new CacheConfig(c.mode, dir, c.maxBytes, c.minFreeBytes, c.memoryBytes, c.maxInFlightBytes,
                c.maxPrefetchBytes, c.maxConcurrentFetches, maxOpenFiles, c.retry);
    }

    /** The settings a wither may change. */
    private static final class Copy {
        CacheMode mode;
        long maxBytes;
        long minFreeBytes;
        long memoryBytes;
        long maxInFlightBytes;
        long maxPrefetchBytes;
        int maxConcurrentFetches;
        RetryPolicy retry;

        Copy(CacheConfig c) {
            mode = c.mode;
            maxBytes = c.maxBytes;
            minFreeBytes = c.minFreeBytes;
            memoryBytes = c.memoryBytes;
            maxInFlightBytes = c.maxInFlightBytes;
            maxPrefetchBytes = c.maxPrefetchBytes;
            maxConcurrentFetches = c.maxConcurrentFetches;
            retry = c.retry;
        }
    }
}
