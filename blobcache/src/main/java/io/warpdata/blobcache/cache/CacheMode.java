package io.warpdata.blobcache.cache;

import java.util.Locale;

/** How the read path uses the disk (DESIGN.md section 6, seed section 9.2). */
public enum CacheMode {
    /** Disk cache filled as a side effect of reads, with adaptive read-ahead. The default. */
    AUTO,
    /** No disk cache: a bounded memory cache of blocks plus read-ahead. */
    REMOTE,
    /** As {@link #AUTO}, and the first touch of a blob fetches the whole blob in the background. */
    HYBRID,
    /** Offline: cached bytes only; anything else fails fast with {@link BlockNotCachedException}. */
    LOCAL;

    /** Parses {@code auto|remote|hybrid|local} (any case). */
    public static CacheMode parse(String s) {
        try {
            return valueOf(s.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("unknown cache mode '" + s + "': expected auto, remote, hybrid or local", e);
        }
    }

    /** The name users write: {@code auto}, {@code remote}, {@code hybrid}, {@code local}. */
    public String text() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Whether blocks are kept on disk. */
    public boolean usesDisk() {
        return this != REMOTE;
    }

    /** Whether misses may be fetched from the store. */
    public boolean fetches() {
        return this != LOCAL;
    }
}
