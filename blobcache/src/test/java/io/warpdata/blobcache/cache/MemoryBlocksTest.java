package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlobId;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

class MemoryBlocksTest {
    private static final int BS = 1024;
    private static final BlobId BLOB = BlobId.of(new byte[] {1});

    private static BlockKey key(int b) {
        return new BlockKey(BLOB, BS, b);
    }

    private static byte[] block(int b) {
        byte[] d = new byte[BS];
        java.util.Arrays.fill(d, (byte) b);
        return d;
    }

    @Test
    void aBlockJustPutStaysAndTheLeastRecentlyUsedGoesHoweverOftenItWasRead() {
        // Room for 4 blocks. A block read ahead arrives before its reader; blocks already read
        // many times (a block serves several small reads) must not keep it out, or a sequential
        // pass on a full disk fetches every block again (frequency-based admission did).
        ReadMetrics metrics = new ReadMetrics();
        MemoryBlocks m = new MemoryBlocks(4L * (BS + MemoryBlocks.ENTRY_HEAP_BYTES), metrics);
        ByteBuffer dst = ByteBuffer.allocate(BS);
        for (int b = 0; b < 4; b++) {
            m.put(key(b), BLOB, block(b), 0, BS, null);
            for (int i = 0; i < 8; i++) {
                assertThat(m.get(key(b), 0, dst, 0, BS)).isTrue();
            }
        }
        AtomicBoolean credit = new AtomicBoolean();
        m.put(key(4), BLOB, block(4), 0, BS, credit); // read ahead: nobody asked yet
        assertThat(m.contains(key(4))).as("the block read ahead is kept").isTrue();
        assertThat(m.contains(key(0))).as("the least recently used is not").isFalse();
        assertThat(m.blockCount()).isEqualTo(4);
        assertThat(m.sizeBytes()).isEqualTo(4L * (BS + MemoryBlocks.ENTRY_HEAP_BYTES));
        assertThat(m.get(key(4), 10, dst, 0, 100)).isTrue();
        assertThat(dst.get(0)).isEqualTo((byte) 4);
        assertThat(metrics.prefetchHitBlocks.sum()).isEqualTo(1);

        // Reading block 1 makes block 2 the least recently used.
        assertThat(m.get(key(1), 0, dst, 0, 1)).isTrue();
        m.put(key(5), BLOB, block(5), 0, BS, null);
        assertThat(m.contains(key(2))).isFalse();
        assertThat(m.contains(key(1))).isTrue();
        assertThat(metrics.evictions.sum()).isEqualTo(2);

        assertThat(m.gc(0)).isEqualTo(4L * (BS + MemoryBlocks.ENTRY_HEAP_BYTES));
        assertThat(m.blockCount()).isZero();
    }
}
