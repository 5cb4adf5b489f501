package io.warpdata.daemon.control.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.ControlProtocol;
import io.warpdata.daemon.control.Operation;
import io.warpdata.daemon.control.OperationContext;

/** {@code cache.gc {limit?}}: evicts down to {@code limit} (bytes or "500GB"; the configured limit when absent). */
public final class CacheGcOperation implements Operation {
    private final CacheControl cache;

    public CacheGcOperation(CacheControl cache) {
        this.cache = cache;
    }

    @Override
    public String name() {
        return "cache.gc";
    }

    @Override
    public AccessPolicy.Access access() {
        return AccessPolicy.Access.PRIVILEGED;
    }

    @Override
    public JsonNode run(OperationContext ctx) {
        CacheControl.GcResult g = cache.gc(ctx.args().optSize("limit"));
        ObjectNode r = ControlProtocol.object();
        r.put("bytes_before", g.bytesBefore());
        r.put("bytes_after", g.bytesAfter());
        r.put("blocks_evicted", g.blocksEvicted());
        r.put("bytes_evicted", g.bytesEvicted());
        return r;
    }
}
