package io.warpdata.daemon.control.ops;

import com.fasterxml.jackson.databind.JsonNode;
import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.ControlProtocol;
import io.warpdata.daemon.control.Operation;
import io.warpdata.daemon.control.OperationContext;

/** {@code cache.stats}: the cache's sizes and counters. */
public final class CacheStatsOperation implements Operation {
    private final CacheControl cache;

    public CacheStatsOperation(CacheControl cache) {
        this.cache = cache;
    }

    @Override
    public String name() {
        return "cache.stats";
    }

    @Override
    public AccessPolicy.Access access() {
        return AccessPolicy.Access.OPEN;
    }

    @Override
    public JsonNode run(OperationContext ctx) {
        return ControlProtocol.json().valueToTree(cache.stats());
    }
}
