package io.warpdata.daemon.control.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.ControlException;
import io.warpdata.daemon.control.ControlProtocol;
import io.warpdata.daemon.control.Operation;
import io.warpdata.daemon.control.OperationContext;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.ManifestValidationException;

import java.util.Optional;

/** {@code refresh {dataset?}}: re-read latest pointers now instead of after the TTL. */
public final class RefreshOperation implements Operation {
    private final CatalogControl catalog;

    public RefreshOperation(CatalogControl catalog) {
        this.catalog = catalog;
    }

    @Override
    public String name() {
        return "refresh";
    }

    @Override
    public AccessPolicy.Access access() {
        return AccessPolicy.Access.OPEN;
    }

    @Override
    public JsonNode run(OperationContext ctx) {
        Optional<DatasetId> id;
        try {
            id = ctx.args().optString("dataset").map(DatasetId::parse);
        } catch (ManifestValidationException e) {
            throw new ControlException(ControlException.BAD_REQUEST, e.getMessage(), e.nextStep());
        }
        catalog.refresh(id);
        ObjectNode r = ControlProtocol.object();
        r.put("refreshed", id.map(DatasetId::toString).orElse("all"));
        return r;
    }
}
