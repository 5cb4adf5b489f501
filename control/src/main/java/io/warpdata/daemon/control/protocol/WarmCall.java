package io.warpdata.daemon.control.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * {@code warm {dataset, tables?, artifacts?, shards?, max_bytes?}}: fill the cache with the
 * selected shards of one version; progress events, then the totals.
 */
public final class WarmCall {
    private WarmCall() {
    }

    /**
     * @param tables    tables to warm (all tables and artifacts when neither is named)
     * @param artifacts artifacts to warm
     * @param shards    shard positions in every selected table and artifact, e.g. {@code 0-3}
     * @param maxBytes  stop after this many bytes
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Request(@JsonProperty(required = true) String dataset, Names tables, Names artifacts, String shards,
                          ByteCount maxBytes) {
    }

    /** @param rateBps bytes covered per second since the start */
    public record Progress(long bytesDone, long bytesTotal, long bytesFetched, int blobsDone, int blobsTotal,
                           long rateBps) {
    }

    /**
     * The last progress, plus what was warmed and how long it took.
     *
     * @param fits whether what was asked fits in the cache's size limit (false: blocks warmed late
     *             evicted blocks warmed early); null from a warpd before this field
     */
    public record Reply(long bytesDone, long bytesTotal, long bytesFetched, int blobsDone, int blobsTotal, long rateBps,
                        @JsonProperty(required = true) String dataset,
                        @JsonProperty(required = true) String version,
                        boolean truncated, double seconds, Boolean fits) {
        public Reply(Progress last, String dataset, String version, boolean truncated, double seconds, boolean fits) {
            this(last.bytesDone(), last.bytesTotal(), last.bytesFetched(), last.blobsDone(), last.blobsTotal(),
                    last.rateBps(), dataset, version, truncated, seconds, fits);
        }
    }
}
