package io.warpdata.vfs;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.benmanes.caffeine.cache.Ticker;
import io.warpdata.catalog.Catalog;
import io.warpdata.store.InMemoryBlobStore;
import io.warpdata.catalog.LastKnownGood;
import io.warpdata.store.FaultStore;
import io.warpdata.blobcache.cache.BlockCache;
import io.warpdata.blobcache.cache.CacheConfig;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Time to first byte on a running daemon with an empty cache, counted in store round trips: the
 * daemon's read path without FUSE (the real Catalog with its state on disk, BlockCache and
 * WarpTree, wired as warpd wires them) over a store that answers every request one round trip
 * late, and the calls the kernel makes to open {@code /lab/NAME/images/cat/0001.jpg} and read its
 * first byte: a lookup and a stat of each path component (following the latest link as the
 * kernel does, with a readlink), then a read. Counted is the depth of the chain of requests that
 * waited for one another before the byte was there, not the time: see {@link FaultStore#serialRoundTrips}.
 *
 * <p>The daemon is running: it listed the store's workspaces when it started and served another
 * dataset of the workspace before, so the code is warm and the workspace known. The dataset read
 * is published afterwards by another machine (another catalog), and nothing of it is cached.
 *
 * <p>Through the latest link four round trips wait for one another, each needing what the one
 * before brought: the pointer (which version), the manifest (which member index), the member
 * index (which shard, at which offset), the data block. Through {@code name@hash} three. The
 * member index comes whole in one GET, verified against its id, and the shards' block hash
 * lists load while it does; before, the index's list, then the index, then the shard's list
 * and then the block each waited for the one before: six round trips, five through
 * {@code name@hash}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FirstByteRoundTripsTest {
    /** Far longer than any local work between two requests, so that the count does not depend on the machine's speed. */
    private static final Duration RTT = Duration.ofMillis(200);
    private static final String WORKSPACE = "lab";
    private static final String MEMBER = "cat/0001.jpg";

    @TempDir
    Path dir;

    private final InMemoryBlobStore memory = new InMemoryBlobStore();
    private final FaultStore store = new FaultStore(memory);
    /** Another machine publishing into the same store. */
    private final TestVersions publisher = new TestVersions(memory, new Catalog(memory));
    private final ExecutorService indexLoader = Executors.newVirtualThreadPerTaskExecutor();
    private Catalog catalog;
    private BlockCache cache;
    private WarpTree tree;

    @BeforeEach
    void startDaemonAndServeAnotherDataset() {
        catalog = new Catalog(store, Catalog.Config.defaults().withPointerTtl(Duration.ofSeconds(30)),
                Ticker.systemTicker(), LastKnownGood.onDisk(dir.resolve("catalog")), Clock.systemUTC());
        cache = BlockCache.open(store, CacheConfig.defaults(dir.resolve("cache")).withMinFreeBytes(0)
                .withMaxBytes(256L << 20));
        tree = new WarpTree(catalog, cache, 1_000_000, indexLoader);
        publish("first", 1);
        catalog.workspaces(); // warpd's check of the store at start
        assertThat(firstByte(WORKSPACE + "/first", true)).isEqualTo(images(1).get(MEMBER)[0]);
        // What that read set going in the background (read-ahead, hash lists) must not be counted
        // as a request of the test that follows.
        try {
            assertThat(cache.awaitIdle(Duration.ofSeconds(30))).isTrue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    @AfterEach
    void stop() {
        indexLoader.shutdownNow();
        cache.close();
    }

    @Test
    void firstByteOfANewDatasetThroughItsLatestLinkWaitsForFourRoundTrips() {
        publish("fresh", 2);
        store.reset();
        store.latency(RTT);

        long start = System.nanoTime();
        byte first = firstByte(WORKSPACE + "/fresh", true);
        long end = System.nanoTime();

        assertThat(first).isEqualTo(images(2).get(MEMBER)[0]);
        report("ws/name/...", start, end);
        assertThat(store.serialRoundTrips(end)).as("round trips one after another: %s", store.chain(end)).isEqualTo(4);
    }

    @Test
    void firstByteOfANewVersionNamedByItsHashWaitsForThreeRoundTrips() {
        VersionHash v = publish("fresh", 3);
        store.reset();
        store.latency(RTT);

        long start = System.nanoTime();
        byte first = firstByte(WORKSPACE + "/fresh@" + v.hex(), false);
        long end = System.nanoTime();

        assertThat(first).isEqualTo(images(3).get(MEMBER)[0]);
        report("ws/name@hash/...", start, end);
        assertThat(store.serialRoundTrips(end)).as("round trips one after another: %s", store.chain(end)).isEqualTo(3);
    }

    @Test
    void enteringAnArtifactOfManyShardsPrefetchesTheListsOfSixtyFourAndOpeningItsVersionNone()
            throws InterruptedException {
        Map<String, byte[]> members = new LinkedHashMap<>();
        for (int i = 0; i < 100; i++) {
            members.put("m" + i + ".bin", TestVersions.bytes(100 + i, i));
        }
        VersionHash v = publisher.publish(new DatasetId(WORKSPACE, "many"), Map.of(),
                Map.of("images", publisher.artifact(members, Map.of(), 1)), null, true);
        store.reset();

        Node version = kernelLookup(kernelLookup(tree.root(), WORKSPACE), "many@" + v.hex());
        Thread.sleep(300);
        assertThat(blobGets()).as("blobs fetched for a stat of the version (ls -l of its workspace): %s", store.requests())
                .isZero();

        kernelLookup(version, "images");
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (blobGets() < WarpTree.HASH_LISTS_PREFETCHED + 1 && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        Thread.sleep(300);

        // 64 of the 100 shards' lists, and the member index, whole: the catalog keeps it as a file,
        // so it is not cached as blocks too, and its own list is not fetched (audit 35).
        assertThat(blobGets()).as("blobs fetched: %s", store.requests()).isEqualTo(WarpTree.HASH_LISTS_PREFETCHED + 1);
    }

    private long blobGets() {
        // A whole GET or a ranged one (an index of one block comes whole as a range into a pooled buffer).
        return store.requests().stream().filter(r -> r.what().startsWith("GET blobs/") || r.what().startsWith("RANGE blobs/"))
                .count();
    }

    /**
     * What the kernel asks to open {@code /ws/entry/images/cat/0001.jpg} and read a byte: each
     * component looked up and its attributes taken (the entry reply carries them), the latest
     * link read and its target looked up in the workspace, then one read.
     */
    private byte firstByte(String dataset, boolean throughLink) {
        String ws = dataset.substring(0, dataset.indexOf('/'));
        String entry = dataset.substring(dataset.indexOf('/') + 1);
        Node workspace = kernelLookup(tree.root(), ws);
        Node version = kernelLookup(workspace, entry);
        if (throughLink) {
            // READLINK resolves the link again from its parent (WarpFuse.readlink), then the
            // kernel looks the target up in the same directory.
            version = kernelLookup(workspace, tree.readlink(tree.lookup(workspace, entry)));
        }
        Node node = kernelLookup(version, "images");
        for (String name : MEMBER.split("/")) {
            node = kernelLookup(node, name);
        }
        ByteBuffer one = ByteBuffer.allocate(1);
        assertThat(tree.read(node, 0, one)).isEqualTo(1);
        return one.get(0);
    }

    private Node kernelLookup(Node parent, String name) {
        Node node = tree.lookup(parent, name);
        tree.attributes(node);
        return node;
    }

    private void report(String path, long start, long end) {
        System.out.printf("first byte through %s: %d serial round trips of %d ms (%.1f RTT elapsed), %d requests:%n",
                path, store.serialRoundTrips(end), RTT.toMillis(), (end - start) / (double) RTT.toNanos(),
                store.requests().size());
        for (FaultStore.Request r : store.requests()) {
            System.out.printf("  %6.1f .. %6.1f RTT  %s%n", (r.startNanos() - start) / (double) RTT.toNanos(),
                    (r.endNanos() - start) / (double) RTT.toNanos(), r.what());
        }
    }

    /** Dataset {@code lab/name}: an artifact of images packed 2 to a shard, set as latest. */
    private VersionHash publish(String name, int seed) {
        return publisher.publish(new DatasetId(WORKSPACE, name), Map.of(),
                Map.of("images", publisher.artifact(images(seed), Map.of(), 2)), null, true);
    }

    private static Map<String, byte[]> images(int seed) {
        Map<String, byte[]> m = new LinkedHashMap<>();
        for (int i = 1; i <= 6; i++) {
            m.put((i <= 3 ? "cat/" : "dog/") + String.format("%04d.jpg", i), TestVersions.bytes(3000 + 700 * i, seed * 10 + i));
        }
        return m;
    }
}
