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
                    try {
                        return fs.getUsableSpace();
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }

                @Override
                public long totalBytes() {
                    try {
                        return fs.getTotalSpace();
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }
            };
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
