package io.warpdata.daemon.control.ops;

import io.warpdata.blobcache.cache.BlockCache;
import io.warpdata.blobcache.cache.VerifyResult;
import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.TypedOperation;
import io.warpdata.daemon.control.protocol.CacheCalls;
import io.warpdata.daemon.control.protocol.Calls;
import io.warpdata.daemon.control.protocol.Empty;

import java.time.Clock;

/**
 * {@code cache.verify}: re-hashes every cached block and removes the bad ones, streaming the
 * data bytes checked so far ({@code bytes_done}, of {@code bytes_total}, the cache's size);
 * cancelled when the client goes away (Ctrl-C).
 */
public final class CacheVerifyOperation extends TypedOperation<Empty, CacheCalls.VerifyReply, CacheCalls.VerifyProgress> {
    private final BlockCache cache;
    private final Clock clock;

    public CacheVerifyOperation(BlockCache cache, Clock clock) {
        super(Calls.CACHE_VERIFY, AccessPolicy.Access.PRIVILEGED);
        this.cache = cache;
        this.clock = clock;
    }

    @Override
    protected CacheCalls.VerifyReply run(Empty request, Events<CacheCalls.VerifyProgress> events) {
        BlockCache c = DiskCache.require(cache, "verify");
        ProgressThrottle throttle = new ProgressThrottle(clock);
        long total = c.stats().sizeBytes();
        var cancellation = events.context().cancellation();
        VerifyResult v = c.verify(bytes -> {
            if (throttle.due()) {
                events.send(new CacheCalls.VerifyProgress(bytes, total));
            }
        }, cancellation);
        cancellation.throwIfCancelled("cache verify");
        return new CacheCalls.VerifyReply(v.blocksChecked(), v.bytesChecked(), v.blocksRemoved(), v.bytesRemoved(),
                v.blocksWithoutList(), v.blocksMissing());
    }
}
