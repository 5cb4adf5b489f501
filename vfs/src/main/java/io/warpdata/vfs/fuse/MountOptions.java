package io.warpdata.vfs.fuse;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * How the mount is set up: the kernel's mount options, and how long the kernel may trust an
 * entry or attributes ({@link WarpFuse} explains why long is safe for immutable versions and
 * latest links alike).
 *
 * @param allowOther let other users read the mount (needs {@code user_allow_other} in
 *        /etc/fuse.conf unless running as root)
 * @param timeoutSeconds entry and attribute timeout
 * @param linkCheck how often the targets of the links the kernel caches are re-checked
 *        ({@link LinkWatch}): the catalog's pointer TTL, so that a pointer moved elsewhere is
 *        seen within about that time and re-checking costs one conditional GET per link per TTL
 */
public record MountOptions(boolean allowOther, int timeoutSeconds, Duration linkCheck, boolean passthrough) {
    /**
     * Largest read request: 1 MiB, where the kernel grants {@code FUSE_MAX_PAGES} (see
     * {@link WarpFuse#MAX_PAGES_WANTED}); 128 KiB on kernels before 5.1. Measured on a warm 1 GiB {@code dd}:
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

    /** The catalog's default pointer TTL (short-lived clients and tests). */
    public static final Duration DEFAULT_LINK_CHECK = Duration.ofSeconds(2);

    public MountOptions {
        if (timeoutSeconds < 0) {
            throw new IllegalArgumentException("timeoutSeconds " + timeoutSeconds);
        }
        Objects.requireNonNull(linkCheck, "linkCheck");
        if (linkCheck.isNegative() || linkCheck.isZero()) {
            throw new IllegalArgumentException("linkCheck " + linkCheck);
        }
    }

    public MountOptions(boolean allowOther, int timeoutSeconds) {
        this(allowOther, timeoutSeconds, DEFAULT_LINK_CHECK, false);
    }

    public MountOptions(boolean allowOther, int timeoutSeconds, Duration linkCheck) {
        this(allowOther, timeoutSeconds, linkCheck, false);
    }

    public static MountOptions defaults(boolean allowOther) {
        return new MountOptions(allowOther, DEFAULT_TIMEOUT_SECONDS);
    }

    /** The same options with another link check period. */
    public MountOptions withLinkCheck(Duration period) {
        return new MountOptions(allowOther, timeoutSeconds, period, passthrough);
    }

    /**
     * The same options, asking (or not) for passthrough opens of whole-blob files that have a
     * local copy ({@link Backings}). Where the kernel grants it, every open of a file is then a
     * round trip (OPEN and RELEASE), which the mount otherwise avoids (see {@link WarpFuse}).
     */
    public MountOptions withPassthrough(boolean on) {
        return new MountOptions(allowOther, timeoutSeconds, linkCheck, on);
    }

    /** The {@code -o} mount options (the kernel's and fusermount's; the rest is negotiated in INIT). */
    public String optionString() {
        List<String> o = new ArrayList<>(List.of(
                "ro",
                "fsname=warp",
                "subtype=warp",
                "default_permissions",
                "max_read=" + MAX_READ));
        if (allowOther) {
            o.add("allow_other");
        }
        return String.join(",", o);
    }
}
