package io.warpdata.blobcache;

import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.DatasetRef;
import io.warpdata.manifest.Manifest;
import io.warpdata.manifest.VersionHash;

import java.util.List;
import java.util.Optional;

/**
 * The remote catalog: dataset ids -> versions -> manifests, read from a {@link BlobStore} laid
 * out as {@link StoreLayout} says. Manifests are immutable and cached for ever (verified against
 * their hash once); latest pointers and listings are re-read after a short TTL.
 */
public final class Catalog {
    public Catalog(BlobStore store) {
        throw new UnsupportedOperationException("TODO");
    }

    /** Workspaces in the store, sorted. */
    public List<String> workspaces() {
        throw new UnsupportedOperationException("TODO");
    }

    /** Datasets of a workspace, sorted. */
    public List<DatasetId> datasets(String workspace) {
        throw new UnsupportedOperationException("TODO");
    }

    /** Published versions of a dataset. */
    public List<VersionHash> versions(DatasetId id) {
        throw new UnsupportedOperationException("TODO");
    }

    /** The latest pointer, if set. */
    public Optional<VersionHash> latest(DatasetId id) {
        throw new UnsupportedOperationException("TODO");
    }

    /**
     * Resolves {@code ws/name} (latest) or {@code ws/name@prefix} to one version.
     *
     * @throws DatasetNotFoundException naming what exists, if nothing or more than one matches
     * @throws io.warpdata.manifest.ManifestCorruptedException if the manifest fails verification
     */
    public Resolved resolve(DatasetRef ref) {
        throw new UnsupportedOperationException("TODO");
    }

    /** The verified manifest of one version. */
    public Manifest manifest(DatasetId id, VersionHash version) {
        throw new UnsupportedOperationException("TODO");
    }

    /** A resolved version. */
    public record Resolved(DatasetId id, VersionHash version, Manifest manifest) {
    }
}
