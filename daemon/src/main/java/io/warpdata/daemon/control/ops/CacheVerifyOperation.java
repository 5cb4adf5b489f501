package io.warpdata.daemon.control.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warpdata.blobcache.cache.BlockCache;
import io.warpdata.blobcache.cache.VerifyResult;
import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.ControlProtocol;
import io.warpdata.daemon.control.Operation;
import io.warpdata.daemon.control.OperationContext;

import java.time.Clock;

/**
 * {@code cache.verify}: re-hashes every cached block and removes the bad ones, streaming the
 * data bytes checked so far ({@code bytes_done}, of {@code bytes_total}, the cache's size);
 * cancelled when the client goes away (Ctrl-C).
 */
public final class CacheVerifyOperation implements Operation {
    private final BlockCache cache;
    private final Clock clock;

    public CacheVerifyOperation(BlockCache cache, Clock clock) {
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
        BlockCache c = DiskCache.require(cache, "verify");
        ProgressThrottle throttle = new ProgressThrottle(clock);
        long total = c.stats().sizeBytes();
        VerifyResult v = c.verify(bytes -> {
            if (throttle.due()) {
                ObjectNode p = ControlProtocol.object();
                p.put("bytes_done", bytes);
                p.put("bytes_total", total);
                ctx.progress(p);
            }
        }, ctx.cancellation());
        ctx.cancellation().throwIfCancelled("cache verify");
        ObjectNode r = ControlProtocol.object();
        r.put("blocks_checked", v.blocksChecked());
        r.put("bytes_checked", v.bytesChecked());
        r.put("blocks_removed", v.blocksRemoved());
        r.put("bytes_removed", v.bytesRemoved());
        r.put("blocks_without_list", v.blocksWithoutList());
        return r;
    }
}
