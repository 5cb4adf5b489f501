package io.warpdata.daemon.control.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warpdata.blobcache.Catalog;
import io.warpdata.blobcache.cache.BlockCache;
import io.warpdata.blobcache.cache.WarmResult;
import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.Args;
import io.warpdata.daemon.control.ControlProtocol;
import io.warpdata.daemon.control.Operation;
import io.warpdata.daemon.control.OperationContext;
import io.warpdata.manifest.Artifact;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.Manifest;
import io.warpdata.manifest.Table;
import io.warpdata.manifest.TableShard;

import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code warm {dataset, tables?, artifacts?, shards?, max_bytes?}}: fills the cache with the
 * selected shards of one version, so that training reads never wait on the network. With
 * neither tables nor artifacts named, everything is warmed; {@code shards} selects shard
 * positions in every selected table and artifact; an artifact's member index is always warmed
 * with it. Streams {@code bytes_done}, {@code bytes_total}, {@code bytes_fetched} and
 * {@code rate_bps} (fetch rate); cancelled when the client goes away.
 */
public final class WarmOperation implements Operation {
    private final Catalog catalog;
    private final BlockCache cache;
    private final Clock clock;

    public WarmOperation(Catalog catalog, BlockCache cache, Clock clock) {
        this.catalog = catalog;
        this.cache = cache;
        this.clock = clock;
    }

    @Override
    public String name() {
        return "warm";
    }

    @Override
    public AccessPolicy.Access access() {
        return AccessPolicy.Access.OPEN;
    }

    /** The blobs to warm, in order, without duplicates. */
    static List<BlobRef> plan(Manifest m, List<String> tables, List<String> artifacts, ShardRange shards, Args args) {
        boolean everything = tables.isEmpty() && artifacts.isEmpty();
        Map<BlobId, BlobRef> out = new LinkedHashMap<>();
        for (String t : everything ? List.copyOf(m.tables().keySet()) : tables) {
            Table table = m.tables().get(t);
            if (table == null) {
                throw args.bad("tables", "names '" + t + "', which is not a table of " + m.datasetId()
                        + " (tables: " + String.join(", ", m.tables().keySet()) + ")");
            }
            for (TableShard s : shards.select(table.shards())) {
                out.putIfAbsent(s.blob().id(), s.blob());
            }
        }
        for (String a : everything ? List.copyOf(m.artifacts().keySet()) : artifacts) {
            Artifact artifact = m.artifacts().get(a);
            if (artifact == null) {
                throw args.bad("artifacts", "names '" + a + "', which is not an artifact of " + m.datasetId()
                        + " (artifacts: " + String.join(", ", m.artifacts().keySet()) + ")");
            }
            out.putIfAbsent(artifact.index().id(), artifact.index());
            for (BlobRef s : shards.select(artifact.shards())) {
                out.putIfAbsent(s.id(), s);
            }
        }
        return new ArrayList<>(out.values());
    }

    @Override
    public JsonNode run(OperationContext ctx) {
        Args args = ctx.args();
        Catalog.Resolved version = catalog.resolve(Datasets.ref(args));
        ShardRange shards;
        try {
            shards = args.optString("shards").map(ShardRange::parse).orElse(ShardRange.ALL);
        } catch (IllegalArgumentException e) {
            throw args.bad("shards", e.getMessage());
        }
        List<BlobRef> blobs = plan(version.manifest(), args.stringList("tables"), args.stringList("artifacts"), shards, args);
        long maxBytes = args.optSize("max_bytes").orElse(Long.MAX_VALUE);
        long planned = blobs.stream().mapToLong(BlobRef::size).sum();
        long total = Math.min(planned, maxBytes);

        long start = clock.millis();
        ProgressThrottle throttle = new ProgressThrottle(clock);
        long done = 0;
        long fetched = 0;
        int blobsDone = 0;
        for (BlobRef blob : blobs) {
            if (done >= total) {
                break;
            }
            ctx.cancellation().throwIfCancelled("warm of " + version.id());
            long base = done;
            long fetchedBase = fetched;
            long budget = Math.min(blob.size(), total - done);
            int index = blobsDone;
            WarmResult w = DiskCache.require(cache, "warm").warm(blob, budget, (covered, size) -> {
                if (throttle.due()) {
                    ctx.progress(progress(base + covered, total, fetchedBase, index, blobs.size(), start));
                }
            }, ctx.cancellation());
            done += Math.min(w.bytesCovered(), budget);
            fetched += w.bytesFetched();
            blobsDone++;
        }
        ctx.cancellation().throwIfCancelled("warm of " + version.id());
        ObjectNode last = progress(done, total, fetched, blobsDone, blobs.size(), start);
        ctx.progress(last.deepCopy());

        ObjectNode r = last;
        r.put("dataset", version.id().toString());
        r.put("version", version.version().hex());
        r.put("truncated", planned > maxBytes);
        r.put("seconds", (clock.millis() - start) / 1000.0);
        return r;
    }

    private ObjectNode progress(long done, long total, long fetched, int blobsDone, int blobsTotal, long start) {
        ObjectNode p = ControlProtocol.object();
        p.put("bytes_done", done);
        p.put("bytes_total", total);
        p.put("bytes_fetched", fetched);
        p.put("blobs_done", blobsDone);
        p.put("blobs_total", blobsTotal);
        long millis = Math.max(1, clock.millis() - start);
        p.put("rate_bps", done * 1000 / millis);
        return p;
    }
}
