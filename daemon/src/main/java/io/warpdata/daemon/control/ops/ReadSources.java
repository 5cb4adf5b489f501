package io.warpdata.daemon.control.ops;

import io.warpdata.blobcache.cache.ReadMetrics;
import io.warpdata.daemon.control.protocol.ReadSourceCount;

import java.util.List;

/** The cache's reads by source as the control protocol shows them ({@code cache stats}, {@code stats.json}), in the plan's order. */
public final class ReadSources {
    private ReadSources() {
    }

    public static List<ReadSourceCount> of(List<ReadMetrics.SourceCount> bySource) {
        return bySource.stream().map(c -> new ReadSourceCount(c.source().label(), c.reads(), c.bytes())).toList();
    }
}
