package io.warpdata.vfs.fuse;

import java.util.ArrayList;
import java.util.List;

/**
 * libfuse2 mount options for immutable data.
 *
 * <p>libfuse2's high-level API has only global entry/attribute timeouts. Long ones are safe for
 * the whole tree because: a version directory never changes; a {@code latest} symlink keeps its
 * entry and size (always {@code name@} + 64 hex) when it moves, and the target the kernel caches
 * ({@link InitReply}) is invalidated by {@link LinkWatch}; negative lookups are never cached
 * ({@code negative_timeout=0}), so a newly published version or workspace appears at once; and
 * workspace listings are re-read on every opendir (readdir results are not cached).
 *
 * @param allowOther let other users read the mount (needs {@code user_allow_other} in
 *        /etc/fuse.conf unless running as root)
 * @param timeoutSeconds entry and attribute timeout
 */
public record MountOptions(boolean allowOther, int timeoutSeconds) {
    /**
     * Largest read request: 1 MiB, where the kernel grants {@code FUSE_MAX_PAGES} (see
     * {@link InitReply}); 128 KiB on kernels before 5.1. Measured on a warm 1 GiB {@code dd}:
     * warpd's CPU 0.6-0.7 s/GiB at 1 MiB vs 0.9-1.1 s/GiB at 128 KiB, throughput the same.
     */
    public static final int MAX_READ = 1 << 20;
    /**
     * How far ahead the kernel reads on a sequential scan. The kernel's default (128 KiB, one
     * request) keeps a single read in flight, so a scan pays a full FUSE round trip per 128 KiB;
     * 1 MiB keeps up to 8 requests in flight across warpd's FUSE threads, enough to hide a
     * cache-file read behind each (fetching from the store far ahead is the block cache's own
     * per-blob read-ahead, not the kernel's). Not more: DuckDB reads Parquet page headers one
     * byte at a time, which looks sequential to the kernel, and at 4 MiB a filter query over
     * 37 MiB of column chunks made 103 MiB of FUSE reads (warm filter 279-332 ms vs 190-254 ms at
     * 1 MiB, local disk ~245 ms), while warm {@code dd} was no faster at 4 MiB than at 1 MiB.
     */
    public static final int MAX_READAHEAD = 1 << 20;
    /** A day: versions are immutable, and see the class comment for why latest links are safe. */
    public static final int DEFAULT_TIMEOUT_SECONDS = 86_400;

    public MountOptions {
        if (timeoutSeconds < 0) {
            throw new IllegalArgumentException("timeoutSeconds " + timeoutSeconds);
        }
    }

    public static MountOptions defaults(boolean allowOther) {
        return new MountOptions(allowOther, DEFAULT_TIMEOUT_SECONDS);
    }

    /** The {@code -o} options. */
    public String optionString() {
        List<String> o = new ArrayList<>(List.of(
                "ro",
                "fsname=warp",
                "subtype=warp",
                "default_permissions",
                // Page cache survives open/close: a version's bytes never change.
                "kernel_cache",
                "entry_timeout=" + timeoutSeconds,
                "attr_timeout=" + timeoutSeconds,
                "negative_timeout=0",
                "max_read=" + MAX_READ,
                "max_readahead=" + MAX_READAHEAD));
        if (allowOther) {
            o.add("allow_other");
        }
        return String.join(",", o);
    }

    /** Arguments for jnr-fuse's mount (it adds the program name, -f and the mount point). */
    public String[] fuseArgs() {
        return new String[] {"-o", optionString()};
    }
}
