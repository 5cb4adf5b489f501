package io.warpdata.daemon.control.ops;

import io.warpdata.blobcache.Catalog;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.DatasetRef;

import java.util.Optional;

/** The daemon's catalog as the control socket uses it; warpd implements it over its Catalog. */
public interface CatalogControl {

    /**
     * Resolves a dataset reference to one version.
     *
     * @throws io.warpdata.blobcache.DatasetNotFoundException if nothing matches
     */
    Catalog.Resolved resolve(DatasetRef ref);

    /**
     * Drops cached latest pointers and listings (of {@code dataset}, or all), so the mount shows
     * newly published versions at once.
     */
    void refresh(Optional<DatasetId> dataset);
}
