package io.warpdata.daemon.control.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.ControlProtocol;
import io.warpdata.daemon.control.Operation;
import io.warpdata.daemon.control.OperationContext;

import java.time.Clock;

/** {@code cache.verify}: re-hashes every cached block, removes bad ones; streams bytes checked. */
public final class CacheVerifyOperation implements Operation {
    private final CacheControl cache;
    private final Clock clock;

    public CacheVerifyOperation(CacheControl cache, Clock clock) {
        this.cache = cache;
        this.clock = clock;
    }

    @Override
    public String name() {
        return "cache.verify";
    }

    @Override
    public AccessPolicy.Access access() {
        return AccessPolicy.Access.PRIVILEGED;
    }

    @Override
    public JsonNode run(OperationContext ctx) {
        ProgressThrottle throttle = new ProgressThrottle(clock);
        CacheControl.VerifyResult v = cache.verify(bytes -> {
            if (throttle.due()) {
                ObjectNode p = ControlProtocol.object();
                p.put("bytes_done", bytes);
                ctx.progress(p);
            }
        }, ctx.cancellation());
        ctx.cancellation().throwIfCancelled("cache verify");
        ObjectNode r = ControlProtocol.object();
        r.put("blocks_checked", v.blocksChecked());
        r.put("bytes_checked", v.bytesChecked());
        r.put("blocks_removed", v.blocksRemoved());
        return r;
    }
}
