package io.warpdata.daemon.warpd;

import java.util.Locale;

/** How warpd uses its disk cache (seed section 9.2, DESIGN.md section 6). */
public enum ReadMode {
    /** Remote-first; the cache fills as a side effect; prefetch. */
    AUTO,
    /** No disk cache, bounded memory. */
    REMOTE,
    /** Aggressive: whole shards on first touch. */
    HYBRID,
    /** Offline: only cached bytes; anything else fails fast. */
    LOCAL;

    public String text() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** @throws IllegalArgumentException naming the accepted values */
    public static ReadMode parse(String text) {
        for (ReadMode m : values()) {
            if (m.text().equalsIgnoreCase(text == null ? "" : text.trim())) {
                return m;
            }
        }
        throw new IllegalArgumentException("mode '" + text + "' is not one of auto, remote, hybrid, local");
    }
}
