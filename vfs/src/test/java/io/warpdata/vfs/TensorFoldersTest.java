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

    /** Reads of a shard, as a test watches or holds them. */
    private interface Reads {
        int read(BlobRef blob, long offset, byte[] dst, int dstOff, int len);
    }

    /** A reader whose reads are {@code reads}' (which go on to {@link #direct}), with its metrics. */
    private BlobReader reader(Reads reads) {
        return new BlobReader() {
            @Override
            public int read(BlobRef blob, long offset, byte[] dst, int dstOff, int len) {
                return reads.read(blob, offset, dst, dstOff, len);
            }

            @Override
            public ReadMetrics metrics() {
                return direct.metrics();
            }

            @Override
            public void close() {
            }
        };
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
        BlobReader gated = reader((blob, offset, dst, dstOff, len) -> {
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
        });
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
    /**
     * The review of session 30's M2: a folder was made inside the cache's compute, so one waiting
     * (for its header, or up to a minute for the others' budget) held the lock of its bin of the
     * cache's map, and every resize of the map waited for it, with every folder made meanwhile.
     * Now 100 other folders are made while one is stuck in its header's read, and the lookups of
     * the stuck one made at once read its header once.
     */
    @Test
    void aFolderStuckWhileMadeHoldsUpNoOtherAndIsMadeOnce() throws Exception {
        Map<String, byte[]> files = new LinkedHashMap<>();
        files.put("slow.safetensors", safetensors(-1));
        for (int f = 0; f < 100; f++) {
            files.put("f%03d.safetensors".formatted(f), safetensors(f));
        }
        Artifact packed = versions.artifact(files, Map.of(), 1);
        Artifact tensors = new Artifact(ArtifactKind.SAFETENSORS, packed.shards(), packed.index(),
                packed.memberCount(), packed.memberBytes());
        VersionHash v = versions.publish(new DatasetId("emb", "many"), Map.of(), Map.of("t", tensors), null, false);
        WarpTree tree = new WarpTree(catalog, direct, 1_000_000, pool);
        Node.MemberDir dir = (Node.MemberDir) tree.lookup("/emb/many@" + v.hex() + "/t");
        int slow = dir.index().find("slow.safetensors");
        long slowHeader = dir.index().offset(slow) + 8;
        BlobRef slowShard = dir.artifact().shards().get(dir.index().shard(slow));

        CountDownLatch stuck = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger slowReads = new AtomicInteger();
        BlobReader gated = reader((blob, offset, dst, dstOff, len) -> {
            if (blob.equals(slowShard) && offset == slowHeader && len == HEADER_BYTES) {
                slowReads.incrementAndGet();
                stuck.countDown();
                try {
                    release.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }
            return direct.read(blob, offset, dst, dstOff, len);
        });
        TensorFolders folders = new TensorFolders(gated, 64L << 20);
        ExecutorService threads = Executors.newFixedThreadPool(3);
        try {
            CompletableFuture<TensorFolder> first = CompletableFuture.supplyAsync(() -> folders.folder(dir, slow), threads);
            assertThat(stuck.await(10, TimeUnit.SECONDS)).as("the slow header's read began").isTrue();
            CompletableFuture<TensorFolder> second = CompletableFuture.supplyAsync(() -> folders.folder(dir, slow), threads);
            CompletableFuture<Integer> others = CompletableFuture.supplyAsync(() -> {
                int made = 0;
                for (int f = 0; f < 100; f++) {
                    made += folders.folder(dir, dir.index().find("f%03d.safetensors".formatted(f))).fileCount();
                }
                return made;
            }, threads);

            assertThat(others.get(20, TimeUnit.SECONDS)).as("made while the slow one is stuck").isEqualTo(200);
            assertThat(second).isNotDone();
            release.countDown();
            assertThat(first.get(20, TimeUnit.SECONDS).children("emb")).hasSize(2);
            assertThat(second.get(20, TimeUnit.SECONDS)).isSameAs(first.get());
            assertThat(slowReads.get()).as("its header read once").isEqualTo(1);
        } finally {
            release.countDown();
            threads.shutdownNow();
        }
    }
    /** A safetensors file of {@code n} F32 [1] tensors keyed {@code layer.I.weight}, tensor I holding {@code first + I}. */
    private static byte[] layers(int n, float first) {
        StringBuilder json = new StringBuilder("{");
        for (int t = 0; t < n; t++) {
            json.append(t == 0 ? "" : ",").append("\"layer.").append(t).append(".weight\":{\"dtype\":\"F32\",\"shape\":[1],"
                    + "\"data_offsets\":[").append(4 * t).append(',').append(4 * t + 4).append("]}");
        }
        json.append('}');
        while (json.length() % 8 != 0) {
            json.append(' ');
        }
        byte[] header = json.toString().getBytes(StandardCharsets.US_ASCII);
        ByteBuffer file = ByteBuffer.allocate(8 + header.length + 4 * n).order(ByteOrder.LITTLE_ENDIAN);
        file.putLong(header.length).put(header);
        for (int t = 0; t < n; t++) {
            file.putFloat(first + t);
        }
        return file.array();
    }

    /**
     * Audit 40: a folder kept 900 bytes a tensor, so two files of 120,000 tensors did not fit the
     * folders' budget (3/10 of the default heap) together, and a loader reading both at random
     * made a folder again from its header at almost every lookup (417 s against 3 s for one).
     * Here, in proportion: two files of 2,000 tensors in a budget of 2 MB, read in turn, are
     * each made once (at 900 bytes a tensor, 1.8 MB each, they were made at every turn).
     */
    @Test
    void twoLargeFoldersReadInTurnAreEachMadeOnce() throws Exception {
        Map<String, byte[]> files = new LinkedHashMap<>();
        files.put("a.safetensors", layers(2000, 0));
        files.put("b.safetensors", layers(2000, 10_000));
        Artifact packed = versions.artifact(files, Map.of(), 1);
        Artifact tensors = new Artifact(ArtifactKind.SAFETENSORS, packed.shards(), packed.index(),
                packed.memberCount(), packed.memberBytes());
        VersionHash v = versions.publish(new DatasetId("emb", "pair"), Map.of(), Map.of("t", tensors), null, false);
        WarpTree tree = new WarpTree(catalog, direct, 1_000_000, pool);
        Node.MemberDir dir = (Node.MemberDir) tree.lookup("/emb/pair@" + v.hex() + "/t");
        int headerBytes = (int) java.nio.ByteBuffer.wrap(files.get("a.safetensors"), 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
        AtomicInteger headersRead = new AtomicInteger();
        BlobReader counting = reader((blob, offset, dst, dstOff, len) -> {
            if (len == headerBytes) {
                headersRead.incrementAndGet();
            }
            return direct.read(blob, offset, dst, dstOff, len);
        });
        TensorFolders folders = new TensorFolders(counting, 2L << 20);
        int a = dir.index().find("a.safetensors");
        int b = dir.index().find("b.safetensors");

        for (int turn = 0; turn < 10; turn++) {
            TensorFolder fa = folders.folder(dir, a);
            TensorFolder fb = folders.folder(dir, b);
            assertThat(fa.fileCount()).isEqualTo(2000);
            assertThat(fb.position("layer." + (1999 - turn) + ".weight.npy")).isNotNegative();
        }

        assertThat(headersRead.get()).as("each header read once").isEqualTo(2);
        assertThat(folders.folder(dir, a).heapBytes()).as("about 140 bytes a tensor").isLessThan(2000 * 150);
        assertThat(folders.timesLetGo(dir, a)).isZero();
        TensorFolderStats pair = folders.stats();
        assertThat(pair.made()).as("made").isEqualTo(2);
        assertThat(pair.letGoForRoom()).as("let go for room").isZero();
        assertThat(pair.keptBytes()).isPositive().isLessThanOrEqualTo(pair.budgetBytes()).isEqualTo(
                folders.folder(dir, a).heapBytes() + folders.folder(dir, b).heapBytes());

        // A budget that holds about 6 of them (and one header being read), and 8 read in turn:
        // folders are let go for room, and each time is counted toward the log's warning (audit 41:
        // not a folder the collector took while idle).
        Map<String, byte[]> eight = new LinkedHashMap<>();
        for (int f = 0; f < 8; f++) {
            eight.put("f" + f + ".safetensors", layers(2000, f * 10_000));
        }
        Artifact packed8 = versions.artifact(eight, Map.of(), 1);
        VersionHash v8 = versions.publish(new DatasetId("emb", "eight"), Map.of(), Map.of("t", new Artifact(
                ArtifactKind.SAFETENSORS, packed8.shards(), packed8.index(), packed8.memberCount(), packed8.memberBytes())),
                null, false);
        Node.MemberDir dir8 = (Node.MemberDir) tree.lookup("/emb/eight@" + v8.hex() + "/t");
        TensorFolders small = new TensorFolders(counting, 1300 << 10);
        for (int turn = 0; turn < 5; turn++) {
            for (int f = 0; f < 8; f++) {
                assertThat(small.folder(dir8, dir8.index().find("f" + f + ".safetensors")).fileCount()).isEqualTo(2000);
            }
        }
        int letGo = 0;
        for (int f = 0; f < 8; f++) {
            letGo += small.timesLetGo(dir8, dir8.index().find("f" + f + ".safetensors"));
        }
        assertThat(letGo).as("let go for room").isGreaterThanOrEqualTo(8);
        // The counters say it too (stats.json, Prometheus): each let go was made again.
        TensorFolderStats crowded = small.stats();
        assertThat(crowded.letGoForRoom()).isEqualTo(letGo);
        assertThat(crowded.made()).as("each made is kept or was let go (or collected while idle)")
                .isGreaterThanOrEqualTo(crowded.kept() + letGo);
        assertThat(crowded.keptBytes()).isLessThanOrEqualTo(crowded.budgetBytes());
    }
}
