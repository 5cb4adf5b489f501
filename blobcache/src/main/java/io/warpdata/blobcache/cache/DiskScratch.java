package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlockHashList;
import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.zip.CRC32C;

/** Reused buffers of {@link DiskBlocks}: no allocation on the hit path; writes borrow pooled direct buffers ({@link DiskWrites}). */
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

    /**
     * Write state: a block file (header and data) is assembled in one direct buffer, reused by
     * the writes that borrow it ({@link DiskWrites}). Its capacity is the file's length rounded up
     * to {@link #GRAIN}: a 14 KB member's file takes 64 KiB, not the 1 MiB + header a block's does.
     */
    static final class Write {
        /** Capacities are multiples of this: a small member's file fits in one, a 1 MiB block's in 17. */
        static final int GRAIN = 64 << 10;
        /** The capacity a default block's file takes. */
        static final int BLOCK_FILE = capacityFor(BlockFile.headerLength(BlockHashList.DEFAULT_BLOCK_SIZE)
                + BlockHashList.DEFAULT_BLOCK_SIZE);

        private ByteBuffer buffer;
        final CRC32C crc = new CRC32C();

        Write(int len) {
            buffer = ByteBuffer.allocateDirect(capacityFor(len));
        }

        int capacity() {
            return buffer.capacity();
        }

        ByteBuffer buffer(int len) {
            if (buffer.capacity() < len) {
                buffer = ByteBuffer.allocateDirect(capacityFor(len));
            }
            return buffer.clear().limit(len);
        }

        /** {@code len} rounded up to {@link #GRAIN} (one at least). */
        static int capacityFor(int len) {
            long c = Math.max(GRAIN, ((long) len + GRAIN - 1) / GRAIN * GRAIN);
            return c > Integer.MAX_VALUE ? len : (int) c;
        }
    }
}
