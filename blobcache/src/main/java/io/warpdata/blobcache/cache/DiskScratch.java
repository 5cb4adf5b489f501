package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlockHashList;
import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
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

    /**
     * Read states shared by virtual threads. A platform thread (a FUSE worker, a fetcher: a few
     * dozen) keeps its own; a virtual thread serves one control client (a table stream, as many
     * as clients open) and lives as long as it, so one direct buffer each made 72 slow streams
     * exhaust warpd's direct memory. They borrow one of a few here instead, for the length of a
     * block read, and wait while all are lent.
     */
    static final class ReadPool {
        private final Semaphore lendable;
        private final ConcurrentLinkedQueue<Read> idle = new ConcurrentLinkedQueue<>();

        ReadPool(int size) {
            lendable = new Semaphore(size);
        }

        /** A read state for this thread alone until {@link #giveBack}. */
        Read borrow() throws InterruptedException {
            lendable.acquire();
            Read r = idle.poll();
            return r != null ? r : new Read();
        }

        void giveBack(Read r) {
            idle.offer(r);
            lendable.release();
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
