package io.warpdata.daemon.control;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warpdata.store.BlobStore;
import io.warpdata.store.BlobStores;
import io.warpdata.catalog.Catalog;
import io.warpdata.store.FaultStore;
import io.warpdata.blobcache.cache.BlockCache;
import io.warpdata.blobcache.cache.CacheConfig;
import io.warpdata.daemon.control.ops.ControlOperations;
import io.warpdata.daemon.publish.PublishProgress;
import io.warpdata.daemon.publish.PublishRequest;
import io.warpdata.daemon.publish.Publisher;
import io.warpdata.manifest.DatasetId;
import io.warpdata.vfs.Errno;
import io.warpdata.vfs.WarpTree;
import io.warpdata.vfs.fuse.KernelVersion;
import io.warpdata.vfs.fuse.MountOptions;
import io.warpdata.vfs.fuse.WarpFuse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The control socket over a real FUSE mount: BlockCache over a local store that counts requests,
 * the mount's tree reading through it, and the control operations wired to both, as warpd wires
 * them. Warm then read issues no GET; gc evicts to its limit; publish through the daemon is in
 * the mount on return; the init loader runs against the mount under /usr/bin/python3.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ControlMountIT {
    private static final int IMAGES = 40;

    private Path dir;
    private Path mnt;
    private FaultStore store;
    private BlockCache cache;
    private Catalog catalog;
    private WarpFuse fuse;
    private ExecutorService indexLoader;
    private ControlServer server;
    private String version;

    @BeforeAll
    void setUp() throws Exception {
        dir = Files.createTempDirectory("warp-control-mount-it");
        Path src = Files.createDirectories(dir.resolve("src"));
        writeData(src, 0);
        Path storeDir = Files.createDirectories(dir.resolve("store"));
        BlobStore local = BlobStores.open(storeDir.toUri().toString(), Optional.empty());
        store = new FaultStore(local);
        catalog = new Catalog(store);
        version = publish(src, DatasetId.parse("ws/name"));

        cache = BlockCache.open(store, CacheConfig.defaults(dir.resolve("cache")).withMaxBytes(64L << 20));
        indexLoader = Executors.newVirtualThreadPerTaskExecutor();
        WarpTree tree = new WarpTree(catalog, cache, 1_000_000, indexLoader);
        mnt = Files.createDirectories(dir.resolve("mnt"));
        fuse = new WarpFuse(tree, new Errno(System::nanoTime), 0, 0);
        fuse.mount(mnt, MountOptions.defaults(false));

        AccessPolicy policy = new AccessPolicy(ProcessIdentity.uid(), "root", Optional.empty());
        server = ControlServer.start(new ControlServer.Config(dir.resolve("run/warpd.sock"), Optional.empty()),
                ControlOperations.standard(new ControlWorld.TestDaemon(), cache, catalog, fuse::checkLinks,
                        Optional.of(new ControlOperations.Publishing(store, dir.resolve("staging"), () -> { })), policy,
                        Clock.systemUTC()),
                policy, new PeerResolver(EtcUserDatabase.system()));
    }

    @AfterAll
    void tearDown() throws IOException {
        if (server != null) {
            server.close();
        }
        if (fuse != null) {
            fuse.umount();
        }
        if (cache != null) {
            cache.close();
        }
        if (indexLoader != null) {
            indexLoader.shutdownNow();
        }
        if (store != null) {
            store.close();
        }
        TestDirs.deleteAfterUnmount(dir, mnt);
    }

    /** main: 40 rows (path -> images member, label); images: 40 files of 20-60 KB in two classes. */
    private static void writeData(Path src, int seed) throws Exception {
        Files.createDirectories(src.resolve("data"));
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement()) {
            st.execute("COPY (SELECT 'cls' || (i % 2) || '/img' || lpad(i::VARCHAR, 3, '0') || '.bin' AS path,"
                    + " (i % 2)::INTEGER AS label, " + seed + " AS seed FROM range(" + IMAGES + ") t(i) ORDER BY i) TO '"
                    + src.resolve("data/part-0.parquet") + "' (FORMAT PARQUET)");
        }
        Random r = new Random(seed);
        for (int i = 0; i < IMAGES; i++) {
            Path f = src.resolve(String.format("images/cls%d/img%03d.bin", i % 2, i));
            Files.createDirectories(f.getParent());
            byte[] b = new byte[20_000 + r.nextInt(40_000)];
            r.nextBytes(b);
            Files.write(f, b);
        }
    }

    private String publish(Path src, DatasetId id) {
        PublishRequest req = new PublishRequest(id,
                new TreeMap<>(Map.of("main", List.of(src.resolve("data/part-0.parquet").toString()))),
                new TreeMap<>(Map.of("images", List.of(src.resolve("images").toString()))),
                List.of(PublishRequest.parseBinding("main.path=images:image")), true, 256 << 10, src);
        return new Publisher(store, catalog, Clock.systemUTC(), "test", dir.resolve("staging"), 2, PublishProgress.NONE)
                .publish(req).version().hex();
    }

    private JsonNode call(String op, ObjectNode args) {
        try (ControlClient c = ControlClient.connect(server.socketPath())) {
            return c.call(op, args);
        }
    }

    private long readAll(Path root) throws IOException {
        long bytes = 0;
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.filter(Files::isRegularFile).sorted().toList()) {
                bytes += Files.readAllBytes(p).length;
            }
        }
        return bytes;
    }

    @Test
    @Order(1)
    void warmThenReadIssuesZeroGets() throws IOException {
        JsonNode warm = call("warm", ControlProtocol.object().put("dataset", "ws/name@" + version));
        assertThat(warm.get("bytes_done").asLong()).isEqualTo(warm.get("bytes_total").asLong()).isPositive();
        long reads = store.calls(FaultStore.Call.READ);
        long gets = store.calls(FaultStore.Call.GET, FaultStore.Call.GET_IF_CHANGED);
        long bytes = readAll(mnt.resolve("ws/name@" + version));
        assertThat(bytes).isGreaterThan(IMAGES * 20_000L);
        assertThat(store.calls(FaultStore.Call.READ) - reads).as("ranged GETs after warm").isZero();
        assertThat(store.calls(FaultStore.Call.GET, FaultStore.Call.GET_IF_CHANGED) - gets).as("whole-object GETs after warm").isZero();

        JsonNode again = call("warm", ControlProtocol.object().put("dataset", "ws/name@" + version));
        assertThat(again.get("bytes_fetched").asLong()).as("a second warm fetches nothing").isZero();
    }

    @Test
    @Order(2)
    void gcToALimitEvictsDownToIt() {
        call("warm", ControlProtocol.object().put("dataset", "ws/name"));
        long before = cache.stats().sizeBytes();
        long limit = before / 3;
        JsonNode gc = call("cache.gc", ControlProtocol.object().put("limit", limit));
        assertThat(gc.get("bytes_before").asLong()).isEqualTo(before);
        assertThat(gc.get("bytes_after").asLong()).isLessThanOrEqualTo(limit);
        assertThat(cache.stats().sizeBytes()).isLessThanOrEqualTo(limit);
        JsonNode stats = call("cache.stats", ControlProtocol.object());
        assertThat(stats.get("size_bytes").asLong()).isLessThanOrEqualTo(limit);
        assertThat(stats.get("limit_bytes").asLong()).isEqualTo(64L << 20);
    }

    @Test
    @Order(3)
    void initLoaderRunsAgainstTheMountUnderDebianPython3() throws Exception {
        ControlWorld.Result r = ControlWorld.warpctl(Map.of("WARP_SOCKET", server.socketPath().toString()), dir,
                "init", "ws/name@" + version.substring(0, 12), "--mount", mnt.toString(), "--json");
        assertThat(r.exit()).as(r.err()).isZero();
        Path loader = Path.of(ControlProtocol.json().readTree(r.out()).get("loader").asText());
        // The stub imports warpdata (python/ of this tree, beside warpctl): rows from warpd, refs through the mount.
        Process p = new ProcessBuilder("/usr/bin/python3", "-c", "import runpy, sys; sys.argv = [sys.argv[1]];"
                + " m = runpy.run_path(sys.argv[0], run_name='__main__');"
                + " b = next(m['train_stream'](batch_size=5)); r = b['path'][0]; print('read', len(r.read_bytes()), 'bytes of', r)",
                loader.toString()).redirectErrorStream(true).start();
        try {
            assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.exitValue()).as(out).isZero();
            assertThat(out).contains("Batch 0: 10 rows", "Batch 2: 10 rows", "read ", mnt.resolve("ws/name@" + version + "/images/cls0/img000.bin").toString(),
                    "Smoke test passed!");
        } finally {
            p.destroyForcibly();
        }
    }

    @Test
    @Order(4)
    void publishThroughTheDaemonIsInTheMountWhenItReturns() throws Exception {
        assertThat(Files.readSymbolicLink(mnt.resolve("ws/name")).toString()).isEqualTo("name@" + version);
        Path src2 = Files.createDirectories(dir.resolve("src2"));
        writeData(src2, 7);
        ObjectNode args = ControlProtocol.object().put("dataset", "ws/name").put("set_latest", true).put("shard_size", "256KiB");
        args.putObject("tables").putArray("main").add(src2.resolve("data/part-0.parquet").toString());
        args.putObject("artifacts").putArray("images").add(src2.resolve("images").toString());
        args.putArray("bindings").add("main.path=images:image");
        JsonNode r = call("publish", args);
        String v2 = r.get("version").asText();
        assertThat(v2).isNotEqualTo(version);
        assertThat(r.get("latest_set").asBoolean()).isTrue();

        assertThat(Files.readSymbolicLink(mnt.resolve("ws/name")).toString()).isEqualTo("name@" + v2);
        assertThat(Files.readAllBytes(mnt.resolve("ws/name/images/cls1/img001.bin")))
                .isEqualTo(Files.readAllBytes(src2.resolve("images/cls1/img001.bin")));
        if (fuse.kernelCachesLinks()) {
            assertThat(fuse.linkInvalidations()).isPositive();
        }
    }

    /** Whether the running kernel is at least {@code major.minor}. */
    @Test
    @Order(6)
    void theKernelSendsReadsOfUpTo1MiBWhereItCan() {
        // FUSE_MAX_PAGES arrived in Linux 5.1.
        assertThat(fuse.maxReadBytes()).isEqualTo(KernelVersion.running().atLeast(5, 1) ? 1 << 20 : 128 << 10);
    }

    @Test
    @Order(5)
    void pathWalksThroughTheLatestLinkAskWarpdForItsTargetOnce() throws Exception {
        // FUSE_CACHE_SYMLINKS arrived in Linux 4.20.
        assertThat(fuse.kernelCachesLinks()).isEqualTo(KernelVersion.running().atLeast(4, 20));
        String target = Files.readSymbolicLink(mnt.resolve("ws/name")).toString();
        long before = fuse.linkReads();
        for (int i = 0; i < 50; i++) {
            assertThat(Files.readSymbolicLink(mnt.resolve("ws/name")).toString()).isEqualTo(target);
            assertThat(Files.size(mnt.resolve("ws/name/images/cls" + (i % 2) + "/img" + String.format("%03d", i % IMAGES) + ".bin")))
                    .isPositive();
        }
        long reads = fuse.linkReads() - before;
        if (fuse.kernelCachesLinks()) {
            assertThat(reads).as("readlink calls for 100 walks through the link").isZero();
        } else {
            assertThat(reads).isGreaterThanOrEqualTo(100);
        }
    }

    @Test
    @Order(7)
    void onceMembersAreStattedListingsGiveTheKernelEveryInodeSoStatNeedsNoLookup() throws Exception {
        // Paths of their own (a shorter version prefix), so no earlier test cached their entries.
        Path images = mnt.resolve("ws/name@" + version.substring(0, 10) + "/images");
        // The first listing went with or without inodes, as members of this artifact were looked
        // up in the last seconds or not (vfs AttributeDemand); its stats are lookups of members.
        assertThat(lookupsToListAndStat(images.resolve("cls1"))).as("lookups after listing %d files", IMAGES / 2)
                .isBetween(0L, (long) IMAGES / 2);
        long lookups = lookupsToListAndStat(images.resolve("cls0"));
        // READDIRPLUS arrived in Linux 3.9.
        if (fuse.readdirPlus()) {
            assertThat(lookups).as("lookups after listing %d more files", IMAGES / 2).isZero();
        } else {
            assertThat(lookups).isGreaterThanOrEqualTo(IMAGES / 2);
        }
        assertThat(fuse.requests()).containsKey(fuse.readdirPlus() ? "readdirplus" : "readdir");
    }

    /** Lists a class folder, then stats every file in it ({@code ls -l}); the LOOKUPs that took. */
    private long lookupsToListAndStat(Path cls) throws IOException {
        assertThat(Files.isDirectory(cls)).isTrue();
        long before = fuse.requests().getOrDefault("lookup", 0L);
        List<Path> files;
        try (var s = Files.list(cls)) {
            files = s.sorted().toList();
        }
        assertThat(files).hasSize(IMAGES / 2);
        for (Path f : files) {
            assertThat(Files.size(f)).isPositive();
        }
        return fuse.requests().getOrDefault("lookup", 0L) - before;
    }
}
