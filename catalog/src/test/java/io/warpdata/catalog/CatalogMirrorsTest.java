package io.warpdata.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.benmanes.caffeine.cache.Ticker;
import io.warpdata.blobcache.cache.BlockCache;
import io.warpdata.blobcache.cache.CacheConfig;
import io.warpdata.blobcache.cache.RemoteTier;
import io.warpdata.blobcache.cache.RemoteTierStats;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.DatasetRef;
import io.warpdata.manifest.Manifest;
import io.warpdata.manifest.VersionHash;
import io.warpdata.store.BlobStore;
import io.warpdata.store.FaultStore;
import io.warpdata.store.InMemoryBlobStore;
import io.warpdata.store.StoreLayout;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Version manifests read through the block cache's mirrors ({@code BlockCache.objectMirrors()}),
 * each answer checked against the version hash it is named by; pointers never asked of a mirror.
 */
class CatalogMirrorsTest {
    private static final DatasetId MNIST = DatasetId.parse("vision/mnist");

    @TempDir
    Path dir;

    private final InMemoryBlobStore inner = new InMemoryBlobStore();
    private final FaultStore store = new FaultStore(inner);
    private final Catalog publisher = new Catalog(inner);
    private BlockCache cache;

    /** A mirror of whole objects: serves what its map holds for a key, records every key asked. */
    private static final class ObjectsMirror implements RemoteTier {
        final Map<String, byte[]> objects = new ConcurrentHashMap<>();
        final List<String> asked = Collections.synchronizedList(new ArrayList<>());

        @Override
        public String describe() {
            return "http://cache/warp";
        }

        @Override
        public boolean read(String key, long offset, byte[] dst, int dstOff, int len, int blockSize) {
            return false;
        }

        @Override
        public Optional<byte[]> get(String key, int maxBytes) {
            asked.add(key);
            return Optional.ofNullable(objects.get(key)).map(byte[]::clone);
        }
    }

    private Catalog catalogThrough(ObjectsMirror mirror) {
        cache = BlockCache.open(store, CacheConfig.defaults(dir).withMinFreeBytes(0), List.of(mirror));
        return new Catalog(store, Catalog.Config.defaults(), Ticker.systemTicker(), LastKnownGood.inMemory(),
                Clock.systemUTC(), cache.objectMirrors());
    }

    @AfterEach
    void close() {
        if (cache != null) {
            cache.close();
        }
    }

    @Test
    void aVersionManifestComesFromAMirrorCheckedAgainstItsVersion() {
        VersionHash v = publisher.putVersion(CatalogTest.manifest(MNIST, 10));
        String key = StoreLayout.version(MNIST, v);
        ObjectsMirror mirror = new ObjectsMirror();
        mirror.objects.put(key, inner.get(key));
        Catalog catalog = catalogThrough(mirror);

        Manifest m = catalog.manifest(MNIST, v);

        assertThat(m.tables()).isEqualTo(CatalogTest.manifest(MNIST, 10).tables());
        assertThat(store.calls(FaultStore.Call.GET, key)).as("the store was not asked").isZero();
        RemoteTierStats stats = cache.remoteTiers().getFirst();
        assertThat(stats.hits()).isEqualTo(1);
        assertThat(stats.bytesServed()).isEqualTo(inner.get(key).length);
    }

    @Test
    void anotherVersionsManifestFromAMirrorIsRefusedAndTheStoreRead() {
        VersionHash v = publisher.putVersion(CatalogTest.manifest(MNIST, 10));
        VersionHash other = publisher.putVersion(CatalogTest.manifest(MNIST, 11));
        String key = StoreLayout.version(MNIST, v);
        ObjectsMirror mirror = new ObjectsMirror();
        mirror.objects.put(key, inner.get(StoreLayout.version(MNIST, other)));
        Catalog catalog = catalogThrough(mirror);

        Manifest m = catalog.manifest(MNIST, v);

        assertThat(m.tables()).isEqualTo(CatalogTest.manifest(MNIST, 10).tables());
        assertThat(store.calls(FaultStore.Call.GET, key)).isEqualTo(1);
        RemoteTierStats stats = cache.remoteTiers().getFirst();
        assertThat(stats.verificationFailures()).isEqualTo(1);
        assertThat(stats.state()).isEqualTo("down");
    }

    @Test
    void pointersAreNeverAskedOfAMirror() {
        VersionHash v = publisher.putVersion(CatalogTest.manifest(MNIST, 10));
        publisher.setLatest(MNIST, v);
        ObjectsMirror mirror = new ObjectsMirror();
        Catalog catalog = catalogThrough(mirror);

        assertThat(catalog.resolve(DatasetRef.parse("vision/mnist")).version()).isEqualTo(v);

        assertThat(mirror.asked).containsExactly(StoreLayout.version(MNIST, v));
        assertThat(store.calls(FaultStore.Call.GET, StoreLayout.version(MNIST, v))).as("a miss goes to the store").isEqualTo(1);
        assertThat(cache.remoteTiers().getFirst().misses()).isEqualTo(1);
    }
}
