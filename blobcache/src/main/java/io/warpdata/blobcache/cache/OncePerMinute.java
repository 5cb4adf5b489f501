package io.warpdata.blobcache.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

import java.time.Duration;

/**
 * What was logged in the last minute, by key (a blob, a member): a line a minute per key, not one
 * a read. A reader retrying a damaged file logged a line a try (audit 38: 37 lines a second).
 */
final class OncePerMinute {
    private final Cache<Object, Boolean> logged = Caffeine.newBuilder()
            .maximumSize(1024)
            .expireAfterWrite(Duration.ofMinutes(1))
            .executor(Runnable::run)
            .build();

    /** Whether {@code key} is to be logged now: true once a minute at most. */
    boolean first(Object key) {
        return logged.asMap().putIfAbsent(key, Boolean.TRUE) == null;
    }
}
