package io.warpdata.daemon.control;

import io.warpdata.store.BlobStore;
import io.warpdata.catalog.Catalog;
import io.warpdata.store.FaultStore;
import io.warpdata.store.InMemoryBlobStore;
import io.warpdata.blobcache.cache.BlockCache;
import io.warpdata.blobcache.cache.CacheConfig;
import io.warpdata.daemon.cli.CliContext;
import io.warpdata.daemon.cli.DefaultStores;
import io.warpdata.daemon.cli.WarpctlCommand;
import io.warpdata.daemon.control.ops.ControlOperations;
import io.warpdata.daemon.control.ops.DaemonInfo;
import io.warpdata.manifest.Artifact;
import io.warpdata.manifest.ArtifactKind;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.Binding;
import io.warpdata.manifest.BlockHashList;
import io.warpdata.manifest.Column;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.Manifest;
import io.warpdata.manifest.RefType;
import io.warpdata.manifest.Table;
import io.warpdata.manifest.TableShard;
import io.warpdata.manifest.VersionHash;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The daemon's real parts for control tests, small: an in-memory store holding one published
 * version {@code ws/name} (table main: 3 shards of 100 bytes; artifact images: 2 shards of 1000
 * bytes and an index of 50: 2,350 bytes in all, one block each), the real {@link Catalog} over
 * it, and a real {@link BlockCache} on a temporary directory. The store can be made to hold
 * reads ({@link #holdReads()}) so that operations can be caught running. Only the daemon's
 * identity ({@link TestDaemon}) is made up.
 */
final class ControlWorld implements AutoCloseable {
    static final DatasetId ID = DatasetId.parse("ws/name");
    static final int BLOCK = BlockHashList.MIN_BLOCK_SIZE;

    final InMemoryBlobStore memory = new InMemoryBlobStore();
    /** Counts the calls; holds reads on {@link #holdReads()}. */
    final FaultStore store = new FaultStore(memory);
    private volatile FaultStore.Rule held;
    final Catalog catalog = new Catalog(store);
    final BlockCache cache;
    final Manifest manifest;
    final VersionHash version;
    final List<BlobRef> mainShards = new ArrayList<>();
    final AtomicInteger refreshes = new AtomicInteger();
    final TestDaemon daemon = new TestDaemon();
    private final Path staging;

    ControlWorld(Path dir) {
        this(dir, CacheConfig.defaults(dir.resolve("cache")).maxBytes());
    }

    /** @param cacheBytes the cache's size limit */
    ControlWorld(Path dir, long cacheBytes) {
        Random r = new Random(5);
        for (int i = 0; i < 3; i++) {
            mainShards.add(blob(r, 100));
        }
        List<TableShard> shards = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            shards.add(new TableShard("part-" + i + ".parquet", mainShards.get(i), 10));
        }
        Table main = new Table(shards, List.of(new Column("path", "VARCHAR"), new Column("label", "BIGINT")));
        Artifact images = new Artifact(ArtifactKind.TAR_SHARDS, List.of(blob(r, 1000), blob(r, 1000)), blob(r, 50), 30, 1800);
        manifest = Manifest.of(ID, Map.of("main", main), Map.of("images", images),
                List.of(new Binding("main", "path", "images", RefType.IMAGE)), Map.of());
        version = catalog.putVersion(manifest);
        catalog.setLatest(ID, version);
        cache = BlockCache.open(store, CacheConfig.defaults(dir.resolve("cache")).withMinFreeBytes(0).withMaxBytes(cacheBytes));
        staging = dir.resolve("staging");
    }

    /** A blob of {@code size} random bytes in the store, with its block hash list. */
    private BlobRef blob(Random r, int size) {
        byte[] data = new byte[size];
        r.nextBytes(data);
        byte[] list = BlockHashList.of(data, BLOCK).serialize();
        BlobId id = BlobId.of(data);
        BlobId listId = BlobId.of(list);
        memory.put(io.warpdata.store.StoreLayout.blob(id), data);
        memory.put(io.warpdata.store.StoreLayout.blob(listId), list);
        return new BlobRef(id, size, listId);
    }

    /** The standard operations over these parts, publishing to the same store. */
    OperationRegistry operations(AccessPolicy policy) {
        return operations(policy, true);
    }

    /** As {@link #operations(AccessPolicy)}, with or without publish. */
    OperationRegistry operations(AccessPolicy policy, boolean publish) {
        Optional<ControlOperations.Publishing> publishing = publish
                ? Optional.of(new ControlOperations.Publishing(store, staging, () -> { })) : Optional.empty();
        return ControlOperations.standard(daemon, cache, catalog, refreshes::incrementAndGet, publishing, policy,
                Clock.systemUTC());
    }

    /** Blocks in the block cache. */
    long cachedBlocks() {
        return cache.stats().blocks();
    }

    /** Store reads are held until {@link #releaseReads()}; returns a latch that opens at the first held read. */
    CountDownLatch holdReads() {
        held = store.on(FaultStore.Call.READ).gate();
        return held.arrived();
    }

    void releaseReads() {
        FaultStore.Rule h = held;
        if (h != null) {
            h.remove();
        }
    }

    @Override
    public void close() {
        store.clear();
        cache.close();
    }

    /** warpctl, in this process, with this environment; output captured. */
    static Result warpctl(Map<String, String> env, Path cwd, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        CliContext context = new CliContext(env, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), cwd, Clock.systemUTC(), DefaultStores::open,
                DefaultStores::reader, false);
        int code = WarpctlCommand.run(args, context);
        return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    record Result(int exit, String out, String err) {
    }

    /** The daemon's identity for status (the only part made up: it would be a mounted warpd). */
    static final class TestDaemon implements DaemonInfo {
        final List<String> errors = new ArrayList<>(List.of(
                "2026-11-24T01:00:00Z read /ws/name@ab/images/x.jpg failed (EIO): StoreUnavailable: timeout"));

        @Override
        public String version() {
            return "0.1.0-test";
        }

        @Override
        public String mountPoint() {
            return "/warp";
        }

        /** The store this warpd says it serves (a test may point it at a store another process can open). */
        volatile String remote = "s3://bucket/prefix";

        @Override
        public String remote() {
            return remote;
        }

        @Override
        public String mode() {
            return "auto";
        }

        @Override
        public Instant startedAt() {
            return Instant.parse("2026-01-01T00:00:00Z");
        }

        @Override
        public OptionalLong openFiles() {
            return OptionalLong.of(3);
        }

        @Override
        public List<String> recentErrors() {
            return errors;
        }
    }
}
