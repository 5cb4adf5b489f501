package io.warpdata.daemon.control;

import io.warpdata.blobcache.Catalog;
import io.warpdata.blobcache.DatasetNotFoundException;
import io.warpdata.daemon.control.ops.CacheControl;
import io.warpdata.daemon.control.ops.CatalogControl;
import io.warpdata.daemon.control.ops.DaemonInfo;
import io.warpdata.daemon.control.ops.PublishRunner;
import io.warpdata.manifest.Artifact;
import io.warpdata.manifest.ArtifactKind;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.Binding;
import io.warpdata.manifest.Column;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.DatasetRef;
import io.warpdata.manifest.Manifest;
import io.warpdata.manifest.RefType;
import io.warpdata.manifest.Table;
import io.warpdata.manifest.TableShard;
import io.warpdata.manifest.VersionHash;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

/** Hand-written fakes of the daemon's parts, for control tests. */
final class ControlFakes {
    private ControlFakes() {
    }

    static BlobRef blob(String seed, long size) {
        return new BlobRef(BlobId.of(seed.getBytes(StandardCharsets.UTF_8)), size,
                BlobId.of(("blocks-" + seed).getBytes(StandardCharsets.UTF_8)));
    }

    /** ws/name: table main (3 shards of 100 bytes, 10 rows each), artifact images (2 shards of 1000 bytes + index of 50). */
    static Manifest manifest() {
        DatasetId id = DatasetId.parse("ws/name");
        List<TableShard> shards = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            shards.add(new TableShard("part-" + i + ".parquet", blob("main-" + i, 100), 10));
        }
        Table main = new Table(shards, List.of(new Column("path", "VARCHAR"), new Column("label", "BIGINT")));
        Artifact images = new Artifact(ArtifactKind.TAR_SHARDS, List.of(blob("img-0", 1000), blob("img-1", 1000)),
                blob("img-index", 50), 30, 1800);
        return Manifest.of(id, Map.of("main", main), Map.of("images", images),
                List.of(new Binding("main", "path", "images", RefType.IMAGE)), Map.of());
    }

    static final VersionHash VERSION = new VersionHash("ab".repeat(32));

    static final class Daemon implements DaemonInfo {
        @Override
        public String version() {
            return "0.1.0-test";
        }

        @Override
        public String mountPoint() {
            return "/warp";
        }

        @Override
        public String remote() {
            return "s3://bucket/prefix";
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
            return List.of("read of blob abc failed");
        }
    }

    static final class CatalogFake implements CatalogControl {
        final Manifest manifest = manifest();
        final List<Optional<DatasetId>> refreshes = new CopyOnWriteArrayList<>();

        @Override
        public Catalog.Resolved resolve(DatasetRef ref) {
            if (!ref.id().equals(manifest.datasetId())) {
                throw new DatasetNotFoundException(ref.toString(), "s3://bucket/prefix", List.of("ws/name"));
            }
            return new Catalog.Resolved(ref.id(), VERSION, manifest);
        }

        @Override
        public void refresh(Optional<DatasetId> dataset) {
            refreshes.add(dataset);
        }
    }

    /** A cache of whole blobs held as byte counts; warm can be made to block until cancelled. */
    static final class Cache implements CacheControl {
        final Map<BlobId, Long> cached = new ConcurrentHashMap<>();
        final List<BlobId> warmed = new CopyOnWriteArrayList<>();
        volatile boolean blockWarm;
        final CountDownLatch warmStarted = new CountDownLatch(1);
        final CountDownLatch warmCancelled = new CountDownLatch(1);
        long limit = 10_000;

        long size() {
            return cached.values().stream().mapToLong(Long::longValue).sum();
        }

        @Override
        public Map<String, Object> stats() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("size_bytes", size());
            m.put("limit_bytes", limit);
            m.put("blobs", cached.size());
            return m;
        }

        @Override
        public GcResult gc(OptionalLong gcLimit) {
            long before = size();
            long target = gcLimit.orElse(limit);
            long evicted = 0;
            int blocks = 0;
            for (BlobId id : new ArrayList<>(cached.keySet())) {
                if (size() <= target) {
                    break;
                }
                evicted += cached.remove(id);
                blocks++;
            }
            return new GcResult(before, size(), blocks, evicted);
        }

        @Override
        public VerifyResult verify(LongConsumer progress, BooleanSupplier cancelled) {
            progress.accept(size());
            return new VerifyResult(cached.size(), size(), 0);
        }

        @Override
        public WarmResult warm(BlobRef blob, long maxBytes, LongConsumer progress, BooleanSupplier cancelled) {
            warmStarted.countDown();
            if (blockWarm) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (!cancelled.getAsBoolean() && System.nanoTime() < deadline) {
                    progress.accept(0);
                    sleep(20);
                }
                if (cancelled.getAsBoolean()) {
                    warmCancelled.countDown();
                }
                return new WarmResult(0, 0);
            }
            long want = Math.min(blob.size(), maxBytes);
            long had = cached.getOrDefault(blob.id(), 0L);
            long fetched = Math.max(0, want - had);
            cached.merge(blob.id(), want, Math::max);
            warmed.add(blob.id());
            progress.accept(want);
            return new WarmResult(want, fetched);
        }
    }

    static final class Publisher implements PublishRunner {
        final List<PublishRequest> requests = new CopyOnWriteArrayList<>();

        @Override
        public Map<String, Object> publish(PublishRequest request, Consumer<String> progress, BooleanSupplier cancelled) {
            requests.add(request);
            progress.accept("packing");
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("dataset", request.dataset().toString());
            r.put("version", "cd".repeat(32));
            return r;
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
