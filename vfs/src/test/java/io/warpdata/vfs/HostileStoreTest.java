package io.warpdata.vfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warpdata.store.BlobNotFoundException;
import io.warpdata.catalog.Catalog;
import io.warpdata.store.FaultStore;
import io.warpdata.store.FaultStore.Call;
import io.warpdata.store.InMemoryBlobStore;
import io.warpdata.store.ObjectTooLargeException;
import io.warpdata.store.StoreException;
import io.warpdata.store.StoreLayout;
import io.warpdata.blobcache.cache.BlockCache;
import io.warpdata.blobcache.cache.CacheConfig;
import io.warpdata.blobcache.cache.RetryPolicy;
import io.warpdata.manifest.Artifact;
import io.warpdata.manifest.ArtifactKind;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.ManifestCorruptedException;
import io.warpdata.manifest.VersionHash;
import io.warpdata.manifest.WarpException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A store that lies, read through the real Catalog, WarpTree and BlockCache (the daemon's read
 * path without FUSE). Each lie ends in a typed Warp error (an errno at the mount's edge) within
 * the read deadline, without an allocation sized by the lie, and a clean dataset in the same
 * store keeps reading byte-exact before and after.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HostileStoreTest {
    private static final DatasetId CLEAN = new DatasetId("ok", "clean");
    private static final DatasetId BAD = new DatasetId("evil", "lying");
    /** Short, so that a hang is told apart from a deadline in a test's time. */
    private static final Duration DEADLINE = Duration.ofSeconds(2);
    private static final long FIVE_GB = 5L << 30;

    @TempDir
    Path dir;

    private final InMemoryBlobStore memory = new InMemoryBlobStore();
    /** Lies on chosen keys: a length or size it does not have, or a read that never ends. */
    private final FaultStore store = new FaultStore(memory);
    private final Catalog catalog = new Catalog(store, Catalog.Config.defaults(), new AtomicLong()::get);
    private final TestVersions versions = new TestVersions(memory, catalog);
    private final ExecutorService fetchers = Executors.newFixedThreadPool(4);
    private final ExecutorService loader = Executors.newVirtualThreadPerTaskExecutor();
    private final Errno errno = new Errno(System::nanoTime);
    private BlockCache cache;
    private WarpTree tree;
    private Map<String, byte[]> cleanMembers;

    /** A length or size {@code key} does not have. */
    private void claim(String key, long size) {
        store.on().keys(key).claimLength(size);
    }

    /** Reads of {@code key}, whole or in part, that never end (until the test closes the store). */
    private void hang(String key) {
        store.on(Call.READ, Call.GET, Call.GET_IF_CHANGED).keys(key).hang();
    }

    /** Every key read, whole or in part. */
    private List<String> requested() {
        return store.requests(Call.READ, Call.GET, Call.GET_IF_CHANGED).stream().map(FaultStore.Request::key).toList();
    }

    @BeforeEach
    void openTreeAndPublishCleanDataset() {
        cache = new BlockCache(store, CacheConfig.defaults(dir).withMinFreeBytes(0).withMaxBytes(64L << 20)
                .withRetry(new RetryPolicy(Duration.ofMillis(1), Duration.ofMillis(20), DEADLINE)), fetchers);
        tree = new WarpTree(catalog, cache, 1_000_000, loader);
        cleanMembers = new LinkedHashMap<>();
        for (int i = 0; i < 6; i++) {
            cleanMembers.put("train/" + i + ".bin", TestVersions.bytes(3000 + 2000 * i, 100 + i));
        }
        versions.publish(CLEAN, Map.of(), Map.of("images", versions.artifact(cleanMembers, Map.of(), 2)), null, true);
        assertCleanDatasetReadsByteExact();
    }

    @AfterEach
    void close() throws InterruptedException {
        store.clear();
        loader.shutdownNow();
        cache.close();
        fetchers.shutdownNow();
        fetchers.awaitTermination(10, TimeUnit.SECONDS);
    }

    private void assertCleanDatasetReadsByteExact() {
        for (Map.Entry<String, byte[]> m : cleanMembers.entrySet()) {
            assertThat(readAll(at("/ok/clean", "/images/" + m.getKey()))).as(m.getKey()).isEqualTo(m.getValue());
        }
    }

    /** {@code rest} under the version a dataset's link points at (the tree does not follow links). */
    private String at(String dataset, String rest) {
        String target = tree.readlink(tree.lookup(dataset));
        return dataset.substring(0, dataset.lastIndexOf('/') + 1) + target + rest;
    }

    private byte[] readAll(String path) {
        Node n = tree.lookup(path);
        byte[] out = new byte[(int) tree.attributes(n).size()];
        int off = 0;
        while (off < out.length) {
            ByteBuffer buf = ByteBuffer.wrap(out, off, out.length - off).slice();
            int got = tree.read(n, off, buf);
            assertThat(got).isPositive();
            off += got;
        }
        return out;
    }

    /**
     * The failure of {@code op} on the mount, as the FUSE adapter sees it: the errno, after
     * checking that it is a typed Warp error of {@code type} (no other exception) and that it
     * came within the read deadline.
     */
    private int failureOf(Runnable op, Class<? extends WarpException> type) {
        long start = System.nanoTime();
        Throwable failure = null;
        try {
            op.run();
        } catch (RuntimeException e) {
            failure = e;
        }
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(failure).as("the lie was served").isNotNull();
        assertThat(failure).isInstanceOf(type);
        assertThat(took).isLessThan(DEADLINE.multipliedBy(3));
        return errno.of(failure, "read", "/evil/lying");
    }

    private VersionHash publishBad(Artifact artifact) {
        return versions.publish(BAD, Map.of(), Map.of("files", artifact), null, true);
    }

    /** An artifact of one member whose index is {@code index} (a blob published as is). */
    private Artifact artifactWithIndex(BlobRef index, long memberCount) {
        BlobRef shard = versions.putBlob(TestVersions.bytes(1024, 7));
        return new Artifact(ArtifactKind.TAR_SHARDS, List.of(shard), index, memberCount, 1024);
    }

    @Test
    void manifestClaimingTwoToTheFortyMembersListsWhatItsIndexHolds() {
        Artifact honest = versions.artifact(Map.of("a.bin", TestVersions.bytes(100, 1), "b.bin",
                TestVersions.bytes(200, 2)), Map.of(), 8);
        Artifact claiming = new Artifact(honest.kind(), honest.shards(), honest.index(), 1L << 40, honest.memberBytes());
        publishBad(claiming);

        java.util.List<String> names = new java.util.ArrayList<>();
        tree.list(tree.lookup(at("/evil/lying", "/files")), 0, (name, type, next, node) -> {
            names.add(name);
            return false;
        });

        assertThat(names).contains("a.bin", "b.bin").hasSizeLessThanOrEqualTo(4);
        assertThat(readAll(at("/evil/lying", "/files/b.bin"))).isEqualTo(TestVersions.bytes(200, 2));
        assertCleanDatasetReadsByteExact();
    }

    @Test
    void memberIndexClaimingBillionsOfEntriesIsCorruptNotAnAllocation() {
        ByteBuffer header = ByteBuffer.allocate(64);
        header.putInt(0x574D4958).putInt(1).putInt(2_000_000_000); // "WMIX", version 1, count
        BlobRef index = versions.putBlob(header.array());
        publishBad(artifactWithIndex(index, 2_000_000_000L));

        int e = failureOf(() -> tree.lookup(at("/evil/lying", "/files/x")), ManifestCorruptedException.class);

        assertThat(e).isEqualTo(Errno.EIO);
        assertCleanDatasetReadsByteExact();
    }

    @Test
    void memberIndexOfTenGigabytesIsRefusedBeforeAnyRead() {
        BlobRef small = versions.putBlob(TestVersions.bytes(4096, 9));
        BlobRef tenGb = new BlobRef(small.id(), 10L << 30, small.blocks());
        publishBad(artifactWithIndex(tenGb, 3));
        String member = at("/evil/lying", "/files/x");
        tree.lookup(at("/evil/lying", "")); // the manifest: read and verified, as it should be

        int e = failureOf(() -> tree.lookup(member), ObjectTooLargeException.class);

        assertThat(e).isEqualTo(Errno.EIO);
        // (The shard's block hash list is read: entering the artifact's folder prefetches it.)
        assertThat(requested()).as("store requests for the index")
                .doesNotContain(StoreLayout.blob(tenGb.id()), StoreLayout.blob(tenGb.blocks()));
        assertCleanDatasetReadsByteExact();
    }

    @Test
    void memberIndexLargerThanTheIndexCacheCouldHoldIsRefused() {
        BlobRef small = versions.putBlob(TestVersions.bytes(4096, 9));
        // Fits a byte[], but 1 GiB of index for a cache of 1M members: allocating it is the attack.
        BlobRef oneGb = new BlobRef(small.id(), 1L << 30, small.blocks());
        publishBad(artifactWithIndex(oneGb, 3));

        int e = failureOf(() -> tree.lookup(at("/evil/lying", "/files/x")), ObjectTooLargeException.class);

        assertThat(e).isEqualTo(Errno.EIO);
        assertCleanDatasetReadsByteExact();
    }

    @Test
    void anIndexOfMoreMembersThanTheHeapBoundStillOpensAndIsNotReloadedAtEveryLookup() {
        // The clean artifact has 6 members; a tree whose heap bound is 5 members (a small heap,
        // indexes held on the heap) used to refuse it (IndexTooLarge). It now opens it, and keeps
        // it: a second lookup fetches nothing more.
        WarpTree small = new WarpTree(catalog, cache, 5, loader);
        String dataset = "/ok/clean";
        String path = dataset.substring(0, dataset.lastIndexOf('/') + 1) + small.readlink(small.lookup(dataset))
                + "/images/train/0.bin";
        tree = small;
        assertThat(small.attributes(small.lookup(path)).size()).isEqualTo(3000);
        store.reset();
        assertThat(small.attributes(small.lookup(path.replace("/0.bin", "/1.bin"))).size()).isEqualTo(5000);
        assertThat(requested()).as("store requests of the second lookup").isEmpty();
    }

    /** A hash list whose block count does not match the blob size it states, or that the manifest states. */
    @Test
    void blockHashListLongerOrShorterThanItsBlobImpliesIsCorrupt() {
        byte[] data = TestVersions.bytes(10_000, 11);
        byte[] list = BlockHashList.of(data, TestVersions.BLOCK_SIZE).serialize();
        byte[] longer = Arrays.copyOf(list, list.length + 32);
        byte[] shorter = Arrays.copyOf(list, list.length - 32);
        byte[] otherBlob = BlockHashList.of(TestVersions.bytes(20_000, 11), TestVersions.BLOCK_SIZE).serialize();
        BlobId dataId = BlobId.of(data);
        memory.putIfAbsent(StoreLayout.blob(dataId), data);
        Map<String, byte[]> members = new LinkedHashMap<>();
        int i = 0;
        for (byte[] bad : new byte[][] {longer, shorter, otherBlob}) {
            BlobId listId = BlobId.of(bad);
            memory.putIfAbsent(StoreLayout.blob(listId), bad);
            Artifact a = new Artifact(ArtifactKind.TAR_SHARDS, List.of(new BlobRef(dataId, data.length, listId)),
                    versions.putBlob(new io.warpdata.manifest.MemberIndexBuilder()
                            .add("m.bin", 0, 0, data.length, 0644, dataId).build().serialize()), 1, data.length);
            versions.publish(new DatasetId("evil", "list" + i++), Map.of(), Map.of("files", a), null, true);
        }

        // Longer than any list of this blob can be, or right for another, larger blob: refused
        // before it is read. Shorter than its own header says: corrupt.
        List<Class<? extends WarpException>> expected = List.of(ObjectTooLargeException.class,
                ManifestCorruptedException.class, ObjectTooLargeException.class);
        for (int k = 0; k < i; k++) {
            String path = at("/evil/list" + k, "/files/m.bin");
            int e = failureOf(() -> readAll(path), expected.get(k));
            assertThat(e).as(path).isEqualTo(Errno.EIO);
        }
        assertCleanDatasetReadsByteExact();
    }

    /** An index whose member names a shard the artifact does not have, or bytes past its shard's end (audit 5). */
    @Test
    void aMemberOutsideItsArtifactsShardsIsCorruptNotAnUnexpectedError() {
        byte[] data = TestVersions.bytes(10_000, 12);
        BlobRef shard = versions.putBlob(data);
        Map<String, io.warpdata.manifest.MemberIndexBuilder> indexes = Map.of(
                "shard", new io.warpdata.manifest.MemberIndexBuilder().add("m.bin", 5, 0, 100, 0644, BlobId.of(data)),
                "range", new io.warpdata.manifest.MemberIndexBuilder().add("m.bin", 0, 9_950, 100, 0644, BlobId.of(data)));
        for (var e : indexes.entrySet()) {
            Artifact a = new Artifact(ArtifactKind.TAR_SHARDS, List.of(shard), versions.putBlob(e.getValue().build().serialize()),
                    1, 100);
            versions.publish(new DatasetId("evil", e.getKey()), Map.of(), Map.of("files", a), null, true);
            String path = at("/evil/" + e.getKey(), "/files/m.bin");
            int errno = failureOf(() -> readAll(path), ManifestCorruptedException.class);
            assertThat(errno).as(path).isEqualTo(Errno.EIO);
        }
        assertCleanDatasetReadsByteExact();
    }

    @Test
    void latestNamingAVersionThatDoesNotExistIsNotFound() {
        versions.pointer(StoreLayout.latest(BAD), new VersionHash("ab".repeat(32)));

        int e = failureOf(() -> tree.lookup(at("/evil/lying", "/files")), NoSuchEntryException.class);

        assertThat(e).isEqualTo(Errno.ENOENT);
        assertCleanDatasetReadsByteExact();
    }

    @Test
    void versionFileWhoseContentHashesToAnotherIdIsCorrupt() {
        VersionHash real = publishBad(artifactWithIndex(versions.putBlob(
                new io.warpdata.manifest.MemberIndexBuilder().build().serialize()), 0));
        VersionHash wrongKey = new VersionHash("cd".repeat(32));
        memory.put(StoreLayout.version(BAD, wrongKey), memory.get(StoreLayout.version(BAD, real)));
        versions.pointer(StoreLayout.latest(BAD), wrongKey);
        catalog.refresh();

        int e = failureOf(() -> tree.lookup(at("/evil/lying", "/files")), ManifestCorruptedException.class);

        assertThat(e).isEqualTo(Errno.EIO);
        assertCleanDatasetReadsByteExact();
    }

    @Test
    void fiveGigabyteObjectsWhereSmallOnesBelongAreRefusedUnread() {
        VersionHash v = publishBad(artifactWithIndex(versions.putBlob(
                new io.warpdata.manifest.MemberIndexBuilder().build().serialize()), 0));
        DatasetId other = new DatasetId("evil", "bigmanifest");
        versions.pointer(StoreLayout.latest(other), v);
        claim(StoreLayout.latest(BAD), FIVE_GB);
        claim(StoreLayout.version(other, v), FIVE_GB);
        catalog.refresh();

        assertThat(failureOf(() -> tree.lookup(at("/evil/lying", "/files")), ObjectTooLargeException.class)).isEqualTo(Errno.EIO);
        assertThat(failureOf(() -> tree.lookup(at("/evil/bigmanifest", "/files")), ObjectTooLargeException.class))
                .isEqualTo(Errno.EIO);
        assertThat(store.oversizedWholeReads()).isEmpty();
        assertCleanDatasetReadsByteExact();
    }

    @Test
    void fiveGigabyteBlockHashListIsRefusedUnread() {
        byte[] data = TestVersions.bytes(10_000, 12);
        BlobId dataId = BlobId.of(data);
        memory.putIfAbsent(StoreLayout.blob(dataId), data);
        BlobId listId = BlobId.of(BlockHashList.of(data, TestVersions.BLOCK_SIZE).serialize());
        memory.putIfAbsent(StoreLayout.blob(listId), new byte[0]);
        claim(StoreLayout.blob(listId), FIVE_GB);
        Artifact a = new Artifact(ArtifactKind.TAR_SHARDS, List.of(new BlobRef(dataId, data.length, listId)),
                versions.putBlob(new io.warpdata.manifest.MemberIndexBuilder()
                        .add("m.bin", 0, 0, data.length, 0644, dataId).build().serialize()), 1, data.length);
        publishBad(a);

        int e = failureOf(() -> readAll(at("/evil/lying", "/files/m.bin")), ObjectTooLargeException.class);

        assertThat(e).isEqualTo(Errno.EIO);
        assertThat(store.oversizedWholeReads()).isEmpty();
        assertCleanDatasetReadsByteExact();
    }

    @Test
    void endlessResponseFailsWithinTheReadDeadlineWhileOthersKeepReading() throws Exception {
        byte[] data = TestVersions.bytes(50_000, 13);
        Map<String, byte[]> members = Map.of("slow.bin", data);
        Artifact a = versions.artifact(members, Map.of(), 1);
        publishBad(a);
        hang(StoreLayout.blob(a.shards().get(0).id()));
        Node slow = tree.lookup(at("/evil/lying", "/files/slow.bin"));

        // Two readers stuck on the endless object, and the clean dataset read beside them.
        ExecutorService readers = Executors.newFixedThreadPool(2);
        try {
            var first = readers.submit(() -> failureOf(() -> tree.read(slow, 0, ByteBuffer.allocate(4096)),
                    StoreException.class));
            var second = readers.submit(() -> failureOf(() -> tree.read(slow, 30_000, ByteBuffer.allocate(4096)),
                    StoreException.class));
            assertCleanDatasetReadsByteExact();
            assertThat(first.get(DEADLINE.toSeconds() * 3, TimeUnit.SECONDS)).isEqualTo(Errno.EIO);
            assertThat(second.get(DEADLINE.toSeconds() * 3, TimeUnit.SECONDS)).isEqualTo(Errno.EIO);
        } finally {
            readers.shutdownNow();
        }
        assertCleanDatasetReadsByteExact();
    }

    @Test
    void endlessHashListResponseFailsWithinTheReadDeadline() {
        byte[] data = TestVersions.bytes(20_000, 14);
        Artifact a = versions.artifact(Map.of("slow.bin", data), Map.of(), 1);
        publishBad(a);
        // Before the artifact's folder is entered: entering it starts loading the shard's list.
        hang(StoreLayout.blob(a.shards().get(0).blocks()));
        Node slow = tree.lookup(at("/evil/lying", "/files/slow.bin"));

        int e = failureOf(() -> tree.read(slow, 0, ByteBuffer.allocate(4096)), StoreException.class);

        assertThat(e).isEqualTo(Errno.EIO);
        assertCleanDatasetReadsByteExact();
    }

    @Test
    void missingBlobIsATypedError() {
        byte[] data = TestVersions.bytes(9_000, 15);
        Artifact a = versions.artifact(Map.of("gone.bin", data), Map.of(), 1);
        publishBad(a);
        memory.delete(StoreLayout.blob(a.shards().get(0).id()));

        assertThat(failureOf(() -> readAll(at("/evil/lying", "/files/gone.bin")), BlobNotFoundException.class))
                .isEqualTo(Errno.EIO);
        assertCleanDatasetReadsByteExact();
    }
}
