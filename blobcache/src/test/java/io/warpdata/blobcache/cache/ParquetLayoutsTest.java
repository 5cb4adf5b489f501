package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;
import io.warpdata.store.FaultStore;
import io.warpdata.store.FaultStore.Call;
import io.warpdata.store.InMemoryBlobStore;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How warpd learns a Parquet file's layout: from the footer's blocks in the local tiers, once a
 * read has reached the file's end; and what that saves a query reading one column through a real
 * {@link BlockCache} (bytes counted at the store).
 */
class ParquetLayoutsTest {
    private static final int BS = 64 * 1024;

    @TempDir
    Path dir;

    private final InMemoryBlobStore memory = new InMemoryBlobStore();
    private final FaultStore store = new FaultStore(memory);
    private final ExecutorService pool = Executors.newFixedThreadPool(8);

    @AfterEach
    void tearDown() throws InterruptedException {
        pool.shutdownNow();
        pool.awaitTermination(10, TimeUnit.SECONDS);
    }

    private byte[] duckDbFile() throws IOException {
        return Files.readAllBytes(ParquetFooterTest.writeWithDuckDb(dir.resolve("t.parquet"), 100_000, ""));
    }

    private static BlockHashList list(byte[] data) throws IOException {
        return BlockHashList.compute(new ByteArrayInputStream(data), BS);
    }

    private static void hold(MemoryBlocks tier, BlobRef blob, BlockHashList list, byte[] data, int from, int to) {
        for (int b = from; b < to; b++) {
            tier.put(new BlockKey(blob.id(), BS, b), list.id(), data, b * BS, list.blockLength(b), null);
        }
    }

    @Test
    void learnsTheLayoutFromTheFooterInTheTiersAfterAReadOfTheEnd() throws IOException {
        byte[] data = duckDbFile();
        BlockHashList list = list(data);
        BlobRef blob = TestBlobs.put(memory, data, BS);
        MemoryBlocks tier = new MemoryBlocks(64L << 20, new ReadMetrics());
        ParquetLayouts layouts = new ParquetLayouts(tier);

        hold(tier, blob, list, data, 0, list.blockCount());
        assertThat(layouts.onRead(blob, list, 0, 4096)).as("the end not read yet: not looked at").isSameAs(ColumnChunks.UNKNOWN);
        tier = new MemoryBlocks(64L << 20, new ReadMetrics());
        layouts = new ParquetLayouts(tier);
        assertThat(layouts.onRead(blob, list, data.length - 8, 8)).as("footer blocks not held yet").isSameAs(ColumnChunks.UNKNOWN);
        hold(tier, blob, list, data, list.blockCount() - 1, list.blockCount());
        ColumnChunks c = layouts.onRead(blob, list, 4, 4096);
        ColumnChunks expected = ParquetFooterTest.chunks(data);
        assertThat(c.known()).isTrue();
        assertThat(c.count()).isEqualTo(expected.count());
        for (int i = 0; i < c.count(); i++) {
            assertThat(c.start(i)).isEqualTo(expected.start(i));
            assertThat(c.end(i)).isEqualTo(expected.end(i));
        }
        assertThat(layouts.onRead(blob, list, 4, 4096)).as("read once, then remembered").isSameAs(c);
    }

    @Test
    void aBlobThatIsNotParquetOrWhoseFooterNeverArrivesIsUnknown() throws IOException {
        byte[] data = TestBlobs.bytes(5 * BS + 123, 3);
        BlockHashList list = list(data);
        BlobRef blob = TestBlobs.put(memory, data, BS);
        MemoryBlocks tier = new MemoryBlocks(64L << 20, new ReadMetrics());
        hold(tier, blob, list, data, 0, list.blockCount());
        ParquetLayouts layouts = new ParquetLayouts(tier);
        assertThat(layouts.onRead(blob, list, data.length - 100, 100)).isSameAs(ColumnChunks.UNKNOWN);

        byte[] parquet = duckDbFile();
        BlockHashList plist = list(parquet);
        BlobRef pblob = TestBlobs.put(memory, parquet, BS);
        ParquetLayouts never = new ParquetLayouts(new MemoryBlocks(64L << 20, new ReadMetrics()));
        for (int i = 0; i <= ParquetLayouts.MAX_TRIES + 1; i++) {
            assertThat(never.onRead(pblob, plist, parquet.length - 8, 8)).isSameAs(ColumnChunks.UNKNOWN);
        }
        // Given up: even with the footer held now, the blob stays unknown.
        MemoryBlocks late = new MemoryBlocks(64L << 20, new ReadMetrics());
        hold(late, pblob, plist, parquet, 0, plist.blockCount());
        assertThat(never.onRead(pblob, plist, 4, 100)).isSameAs(ColumnChunks.UNKNOWN);
    }

    @Test
    void aQueryReadingOneColumnFetchesAboutThatColumnsChunk() throws IOException, InterruptedException {
        byte[] data = duckDbFile();
        BlobRef blob = TestBlobs.put(memory, data, BS);
        ColumnChunks chunks = ParquetFooterTest.chunks(data);
        // The largest chunk: the one read ahead the furthest.
        int k = 0;
        for (int i = 1; i < chunks.count(); i++) {
            if (chunks.end(i) - chunks.start(i) > chunks.end(k) - chunks.start(k)) {
                k = i;
            }
        }
        CacheConfig config = CacheConfig.defaults(dir.resolve("cache")).withMinFreeBytes(0).withMaxBytes(64L << 20)
                .withRetry(new RetryPolicy(Duration.ofMillis(1), Duration.ofMillis(10), Duration.ofSeconds(10)));
        BlockCache c = new BlockCache(store, config, pool, null, null);
        try {
            // As a reader opens a Parquet file: its tail, then its footer.
            byte[] buf = new byte[64 * 1024];
            c.read(blob, data.length - 8, buf, 0, 8);
            int footerLen = data.length - 8 - (int) chunks.end(chunks.count() - 1);
            c.read(blob, data.length - 8 - footerLen, buf, 0, Math.min(footerLen, buf.length));
            assertThat(c.awaitIdle(Duration.ofSeconds(10))).isTrue();
            long before = store.bytes(Call.READ);
            for (long off = chunks.start(k); off < chunks.end(k); off += 16 * 1024) {
                c.read(blob, off, buf, 0, (int) Math.min(16 * 1024, chunks.end(k) - off));
            }
            assertThat(c.awaitIdle(Duration.ofSeconds(10))).isTrue();
            long firstBlock = chunks.start(k) / BS;
            long lastBlock = (chunks.end(k) - 1) / BS;
            long chunkBlocks = (lastBlock - firstBlock + 1) * BS;
            assertThat(chunkBlocks).as("a chunk of several blocks, so read-ahead opens").isGreaterThan(3L * BS);
            assertThat(store.bytes(Call.READ) - before).as("the chunk's blocks, nothing past them")
                    .isLessThanOrEqualTo(chunkBlocks);
        } finally {
            c.close();
        }
    }
}
