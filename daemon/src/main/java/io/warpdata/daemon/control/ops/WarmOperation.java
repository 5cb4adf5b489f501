package io.warpdata.daemon.control.ops;

import io.warpdata.catalog.Catalog;
import io.warpdata.blobcache.cache.BlockCache;
import io.warpdata.blobcache.cache.WarmListener;
import io.warpdata.blobcache.cache.WarmResult;
import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.TypedOperation;
import io.warpdata.daemon.control.protocol.Calls;
import io.warpdata.daemon.control.protocol.Names;
import io.warpdata.daemon.control.protocol.WarmCall;
import io.warpdata.daemon.control.protocol.Wire;
import io.warpdata.manifest.Artifact;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.Manifest;
import io.warpdata.manifest.IndexBytes;
import io.warpdata.manifest.MemberIndex;
import io.warpdata.manifest.Table;
import io.warpdata.manifest.TableShard;

import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * {@code warm {dataset, tables?, artifacts?, shards?, max_bytes?}}: fills the cache with the
 * selected shards of one version, so that training reads never wait on the network. With
 * neither tables nor artifacts named, everything is warmed; {@code shards} selects shard
 * positions in every selected table and artifact; an artifact's member index is always warmed
 * with it; of a view, only the blocks its members lie in (not its parent's shards whole). Streams {@code bytes_done}, {@code bytes_total}, {@code bytes_fetched} and
 * {@code rate_bps} (fetch rate); cancelled when the client goes away.
 */
public final class WarmOperation extends TypedOperation<WarmCall.Request, WarmCall.Reply, WarmCall.Progress> {
    private final Catalog catalog;
    private final BlockCache cache;
    private final Clock clock;

    public WarmOperation(Catalog catalog, BlockCache cache, Clock clock) {
        super(Calls.WARM, AccessPolicy.Access.OPEN);
        this.catalog = catalog;
        this.cache = cache;
        this.clock = clock;
    }

    /**
     * One blob to warm: whole, or only the byte ranges a view's members occupy in a shard it
     * shares with its parent.
     */
    record Item(BlobRef blob, Optional<List<long[]>> ranges) {
        static Item whole(BlobRef blob) {
            return new Item(blob, Optional.empty());
        }
    }

    /**
     * What to warm, in order, without duplicates. An artifact of a view ({@link Manifest#derivedFrom})
     * shares its parent's shards and selects some of their members: only the blocks those members
     * lie in are warmed (its member index, read through {@code indexes}, says where), not the
     * parent's shards whole.
     */
    static List<Item> plan(Manifest m, List<String> tables, List<String> artifacts, ShardRange shards,
                           Function<BlobRef, MemberIndex> indexes) {
        boolean everything = tables.isEmpty() && artifacts.isEmpty();
        Map<BlobId, Item> out = new LinkedHashMap<>();
        for (String t : everything ? List.copyOf(m.tables().keySet()) : tables) {
            Table table = m.tables().get(t);
            if (table == null) {
                throw Wire.badArgument(Calls.WARM.op(), "tables", "names '" + t + "', which is not a table of " + m.datasetId()
                        + (m.tables().isEmpty() ? " (it has no table, only artifacts: warm those with artifacts=[...])"
                        : " (tables: " + String.join(", ", m.tables().keySet()) + ")"));
            }
            for (TableShard s : shards.select(table.shards())) {
                out.putIfAbsent(s.blob().id(), Item.whole(s.blob()));
            }
        }
        for (String a : everything ? List.copyOf(m.artifacts().keySet()) : artifacts) {
            Artifact artifact = m.artifacts().get(a);
            if (artifact == null) {
                throw Wire.badArgument(Calls.WARM.op(), "artifacts", "names '" + a + "', which is not an artifact of " + m.datasetId()
                        + " (artifacts: " + String.join(", ", m.artifacts().keySet()) + ")");
            }
            out.putIfAbsent(artifact.index().id(), Item.whole(artifact.index()));
            if (artifact.tensorHashes() != null) {
                // Its tensor folders are made from it: without it, --mode local could not list them.
                out.putIfAbsent(artifact.tensorHashes().id(), Item.whole(artifact.tensorHashes()));
            }
            if (artifact.tensorHeaders() != null) {
                out.putIfAbsent(artifact.tensorHeaders().id(), Item.whole(artifact.tensorHeaders()));
            }
            if (m.derivedFrom().isEmpty()) {
                shards.select(artifact.shards()).forEach(s -> out.putIfAbsent(s.id(), Item.whole(s)));
                continue;
            }
            Map<Integer, List<long[]>> ranges = memberRanges(indexes.apply(artifact.index()));
            // By position, as the member index names shards: no search per shard.
            int end = Math.min(shards.toExclusive(), artifact.shards().size());
            for (int pos = shards.from(); pos < end; pos++) {
                BlobRef s = artifact.shards().get(pos);
                List<long[]> r = ranges.getOrDefault(pos, List.of());
                Item previous = out.get(s.id());
                if (previous == null) {
                    out.put(s.id(), new Item(s, Optional.of(r)));
                } else if (previous.ranges().isPresent()) {
                    List<long[]> both = new ArrayList<>(previous.ranges().get());
                    both.addAll(r);
                    out.put(s.id(), new Item(s, Optional.of(both)));
                }
            }
        }
        if (!shards.equals(ShardRange.ALL)) {
            // After the names are checked, so an unknown table or artifact is said as such.
            requireShardsWithin(m, everything ? List.copyOf(m.tables().keySet()) : tables,
                    everything ? List.copyOf(m.artifacts().keySet()) : artifacts, shards);
        }
        return new ArrayList<>(out.values());
    }

    /**
     * Refuses shard positions past the last shard of everything selected (audit 22: 0:100 of 10
     * shards warmed all ten and said nothing, and a folder's positions are Warp's packed shards,
     * not the user's files).
     */
    private static void requireShardsWithin(Manifest m, List<String> tables, List<String> artifacts, ShardRange shards) {
        int most = 0;
        for (String t : tables) {
            Table table = m.tables().get(t);
            most = Math.max(most, table == null ? 0 : table.shards().size());
        }
        for (String a : artifacts) {
            Artifact artifact = m.artifacts().get(a);
            most = Math.max(most, artifact == null ? 0 : artifact.shards().size());
        }
        if (shards.from() >= most || (shards.toExclusive() != Integer.MAX_VALUE && shards.toExclusive() > most)) {
            throw Wire.badArgument(Calls.WARM.op(), "shards", shards.from() + ":" + (shards.toExclusive() == Integer.MAX_VALUE
                    ? "" : shards.toExclusive()) + " passes the last"
                    + " shard: what is selected of " + m.datasetId() + " has at most " + most + " shard(s), positions 0:"
                    + most + " ('warpctl inspect' lists them; a folder's are the shards Warp packed it into)");
        }
    }

    /** The byte range each member occupies, by shard position. */
    static Map<Integer, List<long[]>> memberRanges(MemberIndex index) {
        Map<Integer, List<long[]>> out = new java.util.HashMap<>();
        for (int i = 0; i < index.size(); i++) {
            long offset = index.offset(i);
            out.computeIfAbsent(index.shard(i), k -> new ArrayList<>()).add(new long[] {offset, offset + index.length(i)});
        }
        return out;
    }

    @Override
    protected WarmCall.Reply run(WarmCall.Request request, Events<WarmCall.Progress> events) {
        Catalog.Resolved version = catalog.resolve(Datasets.ref(request.dataset()));
        ShardRange shards;
        try {
            shards = request.shards() == null ? ShardRange.ALL : ShardRange.parse(request.shards());
        } catch (IllegalArgumentException e) {
            throw bad("shards", e.getMessage());
        }
        BlockCache disk = DiskCache.require(cache, "warm");
        List<Item> items = plan(version.manifest(), Names.list(request.tables()), Names.list(request.artifacts()), shards,
                index -> MemberIndex.open(IndexBytes.of(disk.readIndex(index)), "member index " + index.id(),
                        part -> IndexBytes.of(disk.readIndex(part))));
        long maxBytes = request.maxBytes() == null ? Long.MAX_VALUE : request.maxBytes().bytes();
        long planned = 0;
        for (Item item : items) {
            planned += item.ranges().map(r -> disk.blockBytes(item.blob(), r)).orElse(item.blob().size());
        }
        long total = Math.min(planned, maxBytes);

        var cancellation = events.context().cancellation();
        long start = clock.millis();
        ProgressThrottle throttle = new ProgressThrottle(clock);
        long done = 0;
        long fetched = 0;
        int blobsDone = 0;
        for (Item item : items) {
            if (done >= total) {
                break;
            }
            cancellation.throwIfCancelled("warm of " + version.id());
            BlobRef blob = item.blob();
            long base = done;
            long fetchedBase = fetched;
            long budget = total - done;
            int index = blobsDone;
            WarmListener listener = (covered, size) -> {
                if (throttle.due()) {
                    events.send(progress(base + covered, total, fetchedBase, index, items.size(), start));
                }
            };
            WarmResult w = item.ranges().isPresent()
                    ? disk.warm(blob, item.ranges().get(), budget, listener, cancellation)
                    : disk.warm(blob, Math.min(blob.size(), budget), listener, cancellation);
            done += Math.min(w.bytesCovered(), budget);
            fetched += w.bytesFetched();
            blobsDone++;
        }
        cancellation.throwIfCancelled("warm of " + version.id());
        WarmCall.Progress last = progress(done, total, fetched, blobsDone, items.size(), start);
        events.send(last);
        return new WarmCall.Reply(last, version.id().toString(), version.version().hex(), planned > maxBytes,
                (clock.millis() - start) / 1000.0, total <= disk.stats().limitBytes());
    }

    private WarmCall.Progress progress(long done, long total, long fetched, int blobsDone, int blobsTotal, long start) {
        long millis = Math.max(1, clock.millis() - start);
        return new WarmCall.Progress(done, total, fetched, blobsDone, blobsTotal, done * 1000 / millis);
    }
}
