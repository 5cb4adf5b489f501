package io.warpdata.daemon.control.ops;

import io.warpdata.blobcache.cache.RemoteTierStats;
import io.warpdata.daemon.control.protocol.MirrorStatus;

import java.util.List;

/** The cache's remote tiers (mirrors) as the control protocol shows them, in the order they are tried. */
public final class MirrorStatuses {
    private MirrorStatuses() {
    }

    public static List<MirrorStatus> of(List<RemoteTierStats> tiers) {
        return tiers.stream().map(t -> new MirrorStatus(t.name(), t.state(), t.bytesServed(), t.hitRatio(), t.hits(),
                t.misses(), t.verificationFailures(), t.errors(), t.timeouts(), t.skipped(), t.fillsWritten(),
                t.fillsFailed(), t.fillsDropped())).toList();
    }
}
