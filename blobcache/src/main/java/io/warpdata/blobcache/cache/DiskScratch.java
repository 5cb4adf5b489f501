package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlockHashList;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/** Reused buffers of {@link DiskBlocks}: no allocation on the hit path, one direct buffer per block write. */
final class DiskScratch {
    private DiskScratch() {
    }

    /** Per-thread read state: no allocation on the hit path. */
    static final class Read {
        ByteBuffer buffer = ByteBuffer.allocateDirect(BlockHashList.DEFAULT_BLOCK_SIZE);
        final CRC32C crc = new CRC32C();

        ByteBuffer buffer(int len) {
            if (buffer.capacity() < len) {
                buffer = ByteBuffer.allocateDirect(len);
            }
            buffer.clear().limit(len);
            return buffer;
        }
    }

    /** Per-thread write state: a block file is assembled in one reused direct buffer. */
    static final class Write {
        ByteBuffer buffer = ByteBuffer.allocateDirect(BlockFile.headerLength(BlockHashList.DEFAULT_BLOCK_SIZE)
                + BlockHashList.DEFAULT_BLOCK_SIZE);
        final CRC32C crc = new CRC32C();

        ByteBuffer buffer(int len) {
            if (buffer.capacity() < len) {
                buffer = ByteBuffer.allocateDirect(len);
            }
            return buffer.clear().limit(len);
        }
    }
}
