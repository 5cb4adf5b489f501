package io.warpdata.blobcache.cache;

import java.util.function.LongSupplier;

/** A {@link DiskSpace} the test drives: its free bytes asked of {@code usable} at each call. */
final class TestSpace {
    private TestSpace() {}

    static DiskSpace of(LongSupplier usable, long totalBytes) {
        return new DiskSpace() {
            @Override
            public long usableBytes() {
                return usable.getAsLong();
            }

            @Override
            public long totalBytes() {
                return totalBytes;
            }
        };
    }
}
