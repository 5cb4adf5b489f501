package io.warpdata.daemon.warpd;

import io.warpdata.blobcache.cache.BlockCache;
import io.warpdata.blobcache.cache.CacheConfig;
import io.warpdata.blobcache.cache.CacheMode;
import io.warpdata.blobcache.cache.ReadMetrics;
import io.warpdata.blobcache.cache.RemoteTier;
import io.warpdata.blobcache.mirror.MirrorSpec;
import io.warpdata.store.BlobStore;
import io.warpdata.store.BlobStores;
import io.warpdata.store.HealthCheckedStore;
import io.warpdata.store.OfflineStore;
import io.warpdata.store.StoreHealth;

import java.util.ArrayList;
import java.util.List;

/**
 * How warpd reaches its store, in one place: the bare store ({@link #bare}: S3 or a local
 * directory, or the {@link OfflineStore} of {@code --mode local}), one {@link StoreHealth} for
 * it, the catalog's view of it ({@link #checked}: a {@link HealthCheckedStore} over the bare store
 * that tells the health of every call), and the block cache, which reads the bare store and tells
 * the same health of each attempt itself ({@link #openCache}). So a cold read goes from the cache
 * straight to the store's client, while the catalog, publish and the cache share one view of
 * whether the store answers (an outage found by either fails the other's calls at once).
 *
 * @param bare    the store itself: what the block cache reads
 * @param checked the store as the catalog and publish call it (the bare store in local mode,
 *                which is never contacted)
 * @param health  whether the store answers; offline in local mode
 */
record StoreWiring(BlobStore bare, BlobStore checked, StoreHealth health) {

    /** The store {@code config} names, and its health: offline by choice in local mode (never contacted, not even to check it). */
    static StoreWiring open(DaemonConfig config) {
        if (config.mode() == CacheMode.LOCAL) {
            BlobStore offline = new OfflineStore(config.remote());
            return new StoreWiring(offline, offline, StoreHealth.offline(offline.describe()));
        }
        BlobStore remote = BlobStores.requireExisting(BlobStores.open(config.remote(), config.endpoint()));
        StoreHealth health = StoreHealth.of(remote.describe());
        return new StoreWiring(remote, new HealthCheckedStore(remote, health), health);
    }

    /**
     * The read path for {@code config.mode()}: the block cache (disk cache under
     * {@code --cache-dir}, or memory only in remote mode) over the bare store and the mirrors, told
     * of the store's health, {@code gets} told of every GET of data. The one place that picks the BlobReader implementation;
     * {@code new DirectBlobReader(store)} is the uncached baseline.
     */
    BlockCache openCache(DaemonConfig config, ReadMetrics.GetListener gets) {
        CacheConfig cache = CacheConfig.defaults(config.cacheDir())
                .withMode(config.mode())
                .withMaxBytes(config.cacheSizeBytes());
        List<RemoteTier> mirrors = openMirrors(config);
        try {
            return BlockCache.open(bare, health, cache, mirrors, gets);
        } catch (RuntimeException e) {
            mirrors.forEach(RemoteTier::close);
            throw e;
        }
    }

    /**
     * The configured mirrors ({@code --mirror}), opened in order as the block cache's remote tiers
     * (issue 25); the cache closes them.
     */
    static List<RemoteTier> openMirrors(DaemonConfig config) {
        List<RemoteTier> tiers = new ArrayList<>();
        for (MirrorSpec spec : config.mirrors()) {
            try {
                tiers.add(spec.openTier(config.mirrorTimeout()));
            } catch (RuntimeException e) {
                tiers.forEach(RemoteTier::close);
                throw new ConfigException("cannot open mirror " + spec.describe() + ": " + e.getMessage(),
                        "Check the --mirror URL (docs/fleet.md), or start warpd without it: reads then go to the store.");
            }
        }
        return tiers;
    }
}
