package io.warpdata.daemon.control.wiring;

import io.warpdata.blobcache.Catalog;
import io.warpdata.daemon.control.ops.CatalogControl;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.DatasetRef;

import java.util.Optional;

/** {@link CatalogControl} over the daemon's {@link Catalog}. */
public final class CatalogAdapter implements CatalogControl {
    private final Catalog catalog;
    private final Runnable afterRefresh;

    /**
     * @param afterRefresh run once the catalog has forgotten its pointers (the mount re-checks
     *        the latest links the kernel caches)
     */
    public CatalogAdapter(Catalog catalog, Runnable afterRefresh) {
        this.catalog = catalog;
        this.afterRefresh = afterRefresh;
    }

    @Override
    public Catalog.Resolved resolve(DatasetRef ref) {
        return catalog.resolve(ref);
    }

    /** The catalog forgets all pointers at once; re-reading a few small pointers is cheap. */
    @Override
    public void refresh(Optional<DatasetId> dataset) {
        catalog.refresh();
        afterRefresh.run();
    }
}
