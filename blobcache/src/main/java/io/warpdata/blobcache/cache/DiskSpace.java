package io.warpdata.blobcache.cache;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;

/** Free space on the cache's filesystem; injected so tests can simulate a filling disk. */
interface DiskSpace {
    long usableBytes();

    long totalBytes();

    /** The real filesystem holding {@code dir}. */
    static DiskSpace of(Path dir) {
        try {
            FileStore fs = Files.getFileStore(dir);
            return new DiskSpace() {
                @Override
                public long usableBytes() {
                    return bytes(fs, true);
                }

                @Override
                public long totalBytes() {
                    return bytes(fs, false);
                }
            };
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The usable (else the total) bytes of {@code fs}; an I/O error unchecked. */
    private static long bytes(FileStore fs, boolean usable) {
        try {
            return usable ? fs.getUsableSpace() : fs.getTotalSpace();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
