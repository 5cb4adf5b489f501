package io.warpdata.catalog;

import io.warpdata.store.BlobNotFoundException;
import io.warpdata.store.BlobStore;
import io.warpdata.store.StoreLayout;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.Manifest;
import io.warpdata.manifest.ManifestCodec;
import io.warpdata.manifest.ManifestCorruptedException;
import io.warpdata.manifest.ManifestFormatTooNewException;
import io.warpdata.manifest.ManifestValidationException;
import io.warpdata.manifest.VersionHash;

import java.util.Optional;

/**
 * Verified manifests by version: from memory, else the last known good copy, else the store. A
 * manifest is immutable and named by the hash of its content, so once verified it is kept for
 * ever; a kept copy that fails verification is forgotten and read again.
 *
 * <p>Never from a mirror: the version hash leaves out the manifest's {@code metadata} (its
 * creation time and creator, DESIGN.md section 4), so a mirror could change those, and with them
 * every mtime of the version and its {@code .warp/manifest.json}, and still pass the check. Only
 * the store is trusted with them. A manifest is a few KB: one GET per node and version.
 */
final class Manifests {
    /**
     * The largest manifest read: 64 MiB. Member lists and block hashes live in side blobs, so
     * the manifest of a 1 TB dataset is well under 1 MB; anything near this is not a manifest.
     */
    static final int MANIFEST_MAX_BYTES = 64 << 20;

    private final BlobStore store;
    private final LastKnownGood known;
    private final Cache<String, Manifest> verified;

    Manifests(BlobStore store, LastKnownGood known, long maxInMemory) {
        this.store = store;
        this.known = known;
        this.verified = Caffeine.newBuilder().maximumSize(maxInMemory).build();
    }

    /** Whether the manifest of this version is held in memory (read and verified before). */
    boolean cached(DatasetId id, VersionHash version) {
        return verified.getIfPresent(StoreLayout.version(id, version)) != null;
    }

    /**
     * The verified manifest of one version.
     *
     * @throws BlobNotFoundException if the store has no such version
     * @throws ManifestCorruptedException if the store's copy fails verification
     */
    Manifest read(DatasetId id, VersionHash version) {
        String key = StoreLayout.version(id, version);
        Manifest m = verified.getIfPresent(key);
        if (m != null) {
            return m;
        }
        Optional<byte[]> kept = known.manifest(key);
        if (kept.isPresent()) {
            try {
                m = verify(kept.get(), "kept copy of " + store.describe() + "/" + key, id, version);
                verified.put(key, m);
                return m;
            } catch (ManifestCorruptedException | ManifestValidationException | ManifestFormatTooNewException damaged) {
                // Kept only once verified, and a newer release keeps a format this one cannot
                // read where this one does not look (LastKnownGood): damage. Read the store's.
                known.forgetManifest(key, kept.get());
            }
        }
        byte[] json = store.get(key, MANIFEST_MAX_BYTES);
        m = verify(json, store.describe() + "/" + key, id, version);
        known.keepManifest(key, json, m.formatVersion());
        verified.put(key, m);
        return m;
    }

    /**
     * The store's copy of {@code manifest}'s version, checked as {@link #read} checks it; one that
     * fails is written over with {@code manifest} (the same version) and forgotten here.
     *
     * @return true if the stored copy was bad and is now replaced
     */
    boolean repair(Manifest manifest) {
        VersionHash version = ManifestCodec.version(manifest);
        DatasetId id = manifest.datasetId();
        String key = StoreLayout.version(id, version);
        try {
            verify(store.get(key, MANIFEST_MAX_BYTES), store.describe() + "/" + key, id, version);
            return false;
        } catch (ManifestCorruptedException | ManifestValidationException | ManifestFormatTooNewException damaged) {
            // The hash covers the format: a newer number under this version's key is damage too.
            store.put(key, ManifestCodec.toJson(manifest));
            // A kept copy was verified before it was kept: it is this manifest, and stays.
            verified.invalidate(key);
            return true;
        }
    }

    /** Parses and checks a manifest: its content hashes to {@code version} and it names {@code id}. */
    private static Manifest verify(byte[] json, String source, DatasetId id, VersionHash version) {
        Manifest m = ManifestCodec.fromJson(json, source);
        VersionHash actual = ManifestCodec.version(m);
        if (!actual.equals(version)) {
            throw new ManifestCorruptedException(source, "version_hash", "content hashes to " + actual.hex()
                    + ", not to the version " + version.hex() + " it is stored under");
        }
        if (!m.datasetId().equals(id)) {
            throw new ManifestCorruptedException(source, "dataset_id", "names dataset " + m.datasetId()
                    + " but is stored under " + id);
        }
        return m;
    }
}
