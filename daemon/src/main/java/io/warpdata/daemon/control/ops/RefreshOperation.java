package io.warpdata.daemon.control.ops;

import io.warpdata.catalog.Catalog;
import io.warpdata.catalog.DatasetNotFoundException;
import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.ControlException;
import io.warpdata.daemon.control.TypedOperation;
import io.warpdata.daemon.control.protocol.Calls;
import io.warpdata.daemon.control.protocol.Empty;
import io.warpdata.daemon.control.protocol.RefreshCall;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.ManifestValidationException;

import java.util.List;
import java.util.Optional;

/**
 * {@code refresh {dataset?}}: re-read pointers and listings now instead of after their TTL. The
 * catalog forgets all of them at once (re-reading a few small pointers is cheap); then the mount
 * re-checks the links the kernel caches.
 */
public final class RefreshOperation extends TypedOperation<RefreshCall.Request, RefreshCall.Reply, Empty> {
    private final Catalog catalog;
    private final Runnable afterRefresh;

    /** @param afterRefresh run once the catalog has forgotten (warpd: the mount re-checks its links) */
    public RefreshOperation(Catalog catalog, Runnable afterRefresh) {
        super(Calls.REFRESH, AccessPolicy.Access.OPEN);
        this.catalog = catalog;
        this.afterRefresh = afterRefresh;
    }

    @Override
    protected RefreshCall.Reply run(RefreshCall.Request request, Events<Empty> events) {
        Optional<DatasetId> id;
        try {
            id = Optional.ofNullable(request.dataset()).map(DatasetId::parse);
        } catch (ManifestValidationException e) {
            throw new ControlException(ControlException.BAD_REQUEST, e.getMessage(), e.nextStep());
        }
        catalog.refresh();
        afterRefresh.run();
        // A dataset the store does not hold: say so rather than "refreshed" (every pointer was
        // re-read all the same, so one published meanwhile would have been found).
        if (id.isPresent() && catalog.versions(id.get()).isEmpty()) {
            List<String> existing = catalog.datasets(id.get().workspace()).stream().map(DatasetId::toString).limit(20).toList();
            throw new DatasetNotFoundException(id.get().toString(), catalog.store().describe(), existing);
        }
        return new RefreshCall.Reply(id.map(DatasetId::toString).orElse("all"));
    }
}
