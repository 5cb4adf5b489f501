package io.warpdata.vfs;

import io.warpdata.blobcache.cache.BlobReader;
import io.warpdata.blobcache.cache.DirectBlobReader;
import io.warpdata.blobcache.cache.ReadMetrics;
import io.warpdata.catalog.Catalog;
import io.warpdata.manifest.Artifact;
import io.warpdata.manifest.ArtifactKind;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;
import io.warpdata.store.InMemoryBlobStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

class TensorFoldersTest {
    /** A header this long costs 3 KiB of the budget while its folder is made ({@link TensorFolders#HEAP_PER_HEADER_BYTE}). */
    private static final int HEADER_BYTES = 400;

    private final InMemoryBlobStore store = new InMemoryBlobStore();
    private final Catalog catalog = new Catalog(store, Catalog.Config.defaults(), System::nanoTime);
    private final TestVersions versions = new TestVersions(store, catalog);
    private final DirectBlobReader direct = new DirectBlobReader(store);
    private final ExecutorService pool = Executors.newFixedThreadPool(2);

    @AfterEach
    void close() {
        pool.shutdownNow();
        direct.close();
    }

    /** A safetensors file of two F32 tensors whose header is padded (as the format allows) to {@link #HEADER_BYTES}. */
    private static byte[] safetensors(float first) {
        String json = "{\"emb/0\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                + "\"emb/1\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}";
        byte[] header = (json + " ".repeat(HEADER_BYTES - json.length())).getBytes(StandardCharsets.US_ASCII);
        ByteBuffer file = ByteBuffer.allocate(8 + HEADER_BYTES + 16).order(ByteOrder.LITTLE_ENDIAN);
        file.putLong(HEADER_BYTES).put(header).putFloat(first).putFloat(2).putFloat(3).putFloat(4);
        return file.array();
    }

    /**
     * Session 30's review (M2): folders made at once on different FUSE threads were not bounded
     * together, each up to the whole budget. Two headers that do not fit the budget together are
     * read and parsed one after the other.
     */
    @Test
    void foldersMadeAtOnceStayWithinTheBudgetTogether() throws Exception {
        Map<String, byte[]> files = new LinkedHashMap<>();
        files.put("a.safetensors", safetensors(1));
        files.put("b.safetensors", safetensors(5));
        Artifact packed = versions.artifact(files, Map.of(), 1);
        Artifact tensors = new Artifact(ArtifactKind.SAFETENSORS, packed.shards(), packed.index(),
                packed.memberCount(), packed.memberBytes());
        DatasetId id = new DatasetId("emb", "tables");
        VersionHash v = versions.publish(id, Map.of(), Map.of("t", tensors), null, false);
        WarpTree tree = new WarpTree(catalog, direct, 1_000_000, pool);
        Node.MemberDir dir = (Node.MemberDir) tree.lookup("/emb/tables@" + v.hex() + "/t");

        AtomicInteger reading = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        CountDownLatch both = new CountDownLatch(2);
        BlobReader gated = new BlobReader() {
            @Override
            public int read(BlobRef blob, long offset, byte[] dst, int dstOff, int len) {
                if (len != HEADER_BYTES) {
                    return direct.read(blob, offset, dst, dstOff, len);
                }
                most.accumulateAndGet(reading.incrementAndGet(), Math::max);
                both.countDown();
                try {
                    both.await(1, TimeUnit.SECONDS); // long enough for the other header's read to begin, if it may
                    return direct.read(blob, offset, dst, dstOff, len);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                } finally {
                    reading.decrementAndGet();
                }
            }

            @Override
            public ReadMetrics metrics() {
                return direct.metrics();
            }

            @Override
            public void close() {
            }
        };
        // Budget: both folders fit (5,896 bytes each), and one header being made (3 KiB), not two.
        TensorFolders folders = new TensorFolders(gated, 5 * 1024 + 1000);

        CompletableFuture<TensorFolder> a = CompletableFuture.supplyAsync(
                () -> folders.folder(dir, dir.index().find("a.safetensors")), pool);
        CompletableFuture<TensorFolder> b = CompletableFuture.supplyAsync(
                () -> folders.folder(dir, dir.index().find("b.safetensors")), pool);

        assertThat(a.get(30, TimeUnit.SECONDS).children("emb")).hasSize(2);
        assertThat(b.get(30, TimeUnit.SECONDS).children("emb")).hasSize(2);
        assertThat(most.get()).as("headers read and parsed at once").isEqualTo(1);
    }
}
