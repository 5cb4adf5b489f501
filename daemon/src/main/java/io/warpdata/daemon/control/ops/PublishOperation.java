package io.warpdata.daemon.control.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warpdata.store.BlobStore;
import io.warpdata.catalog.Catalog;
import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.Args;
import io.warpdata.daemon.control.ControlProtocol;
import io.warpdata.daemon.control.Operation;
import io.warpdata.daemon.control.OperationContext;
import io.warpdata.daemon.control.SourceAccess;
import io.warpdata.daemon.publish.PublishProgress;
import io.warpdata.daemon.publish.PublishRequest;
import io.warpdata.daemon.publish.PublishResult;
import io.warpdata.daemon.publish.Publisher;
import io.warpdata.manifest.Binding;
import io.warpdata.manifest.DatasetRef;

import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * {@code publish {dataset, tables:{name:[abs paths]}, artifacts:{name:[abs paths]}, bindings:[...],
 * set_latest, shard_size, allow_threshold_violations, allow_missing_members}}: publishes with the daemon's credentials ({@link Publisher} on the
 * daemon's store and catalog), after checking that the peer could read every source itself,
 * then refreshes the catalog so the new version is in the mount when the reply arrives. Not
 * interruptible: a client that goes away does not stop it (it is idempotent; running it again
 * uploads nothing twice).
 */
public final class PublishOperation implements Operation {
    /** Parallel uploads: S3 likes several streams; 8 keep one host busy. */
    private static final int UPLOAD_THREADS = 8;

    private final Catalog catalog;
    private final BlobStore store;
    private final Path staging;
    private final Clock clock;
    private final Runnable beforePublish;
    private final Runnable afterPublish;
    private final SourceAccess access;

    /**
     * @param staging       where packed shards are staged (a fresh directory below it per publish)
     * @param beforePublish run first (warpd: try the store now even if it was just found down)
     * @param afterPublish  run once the version is published and the catalog refreshed (warpd: the
     *                      mount re-checks its links, so the new version is visible on return)
     */
    public PublishOperation(Catalog catalog, BlobStore store, Path staging, Clock clock, Runnable beforePublish,
                            Runnable afterPublish, SourceAccess access) {
        this.catalog = catalog;
        this.store = store;
        this.staging = staging;
        this.clock = clock;
        this.beforePublish = beforePublish;
        this.afterPublish = afterPublish;
        this.access = access;
    }

    @Override
    public String name() {
        return "publish";
    }

    @Override
    public AccessPolicy.Access access() {
        return AccessPolicy.Access.PRIVILEGED;
    }

    /** Reads the request from the arguments: absolute paths, already expanded by the client. */
    static PublishRequest request(Args args) {
        DatasetRef ref = Datasets.ref(args);
        if (!(ref.ref() instanceof DatasetRef.Latest)) {
            throw args.bad("dataset", "must be workspace/name without @version (publish makes the version)");
        }
        TreeMap<String, List<String>> tables = pathMap(args, "tables");
        TreeMap<String, List<String>> artifacts = pathMap(args, "artifacts");
        if (tables.isEmpty() && artifacts.isEmpty()) {
            throw args.bad("tables", "and 'artifacts' are both empty: nothing to publish");
        }
        List<Binding> bindings = new ArrayList<>();
        for (String b : args.stringList("bindings")) {
            bindings.add(PublishRequest.parseBinding(b));
        }
        long shardSize = args.optSize("shard_size").orElse(0);
        Optional<String> branch = args.node().hasNonNull("branch")
                ? Optional.of(PublishRequest.requireBranchName(args.string("branch"))) : Optional.empty();
        return new PublishRequest(ref.id(), tables, artifacts, bindings, args.bool("set_latest", false),
                shardSize > 0 ? shardSize : PublishRequest.DEFAULT_SHARD_SIZE, Path.of("/"), branch,
                args.bool("allow_threshold_violations", false), args.bool("allow_missing_members", false));
    }

    private static TreeMap<String, List<String>> pathMap(Args args, String field) {
        JsonNode node = args.node().get(field);
        TreeMap<String, List<String>> out = new TreeMap<>();
        if (node == null || node.isNull()) {
            return out;
        }
        if (!node.isObject()) {
            throw args.bad(field, "must be an object: name -> list of absolute paths");
        }
        Iterator<Map.Entry<String, JsonNode>> it = node.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            List<String> paths = new ArrayList<>();
            List<JsonNode> values = new ArrayList<>();
            if (e.getValue().isArray()) {
                e.getValue().forEach(values::add);
            } else {
                values.add(e.getValue());
            }
            for (JsonNode v : values) {
                if (!v.isTextual() || !Path.of(v.asText()).isAbsolute()) {
                    throw args.bad(field, "." + e.getKey() + " must hold absolute paths, got " + v);
                }
                paths.add(Path.of(v.asText()).normalize().toString());
            }
            if (paths.isEmpty()) {
                throw args.bad(field, "." + e.getKey() + " names no files");
            }
            out.put(e.getKey(), paths);
        }
        return out;
    }

    @Override
    public JsonNode run(OperationContext ctx) {
        PublishRequest req = request(ctx.args());
        for (List<String> specs : List.of(flat(req.tables()), flat(req.artifacts()))) {
            for (String source : specs) {
                access.checkReadable(ctx.peer(), Path.of(source));
            }
        }
        ctx.cancellation().throwIfCancelled("publish of " + req.dataset());
        beforePublish.run();
        PublishProgress progress = new PublishProgress() {
            @Override
            public void start(String task, long totalBytes) {
                ObjectNode p = ControlProtocol.object();
                p.put("message", task + " (" + totalBytes + " bytes)");
                ctx.progress(p);
            }

            @Override
            public void advance(long bytes) {
            }

            @Override
            public void finish() {
            }
        };
        PublishResult res = new Publisher(store, catalog, clock, ctx.peer().userName(), staging, UPLOAD_THREADS, progress)
                .publish(req);
        // The mount re-reads pointers on a TTL; refresh now so the version is visible on return.
        catalog.refresh();
        afterPublish.run();
        ObjectNode r = ControlProtocol.object();
        r.put("dataset", res.dataset().toString());
        r.put("version", res.version().hex());
        r.put("tables", res.tables());
        r.put("table_files", res.tableFiles());
        r.put("rows", res.rows());
        r.put("artifacts", res.artifacts());
        r.put("members", res.members());
        r.put("blobs_uploaded", res.blobsUploaded());
        r.put("blobs_skipped", res.blobsSkipped());
        r.put("bytes_uploaded", res.bytesUploaded());
        r.put("bytes_skipped", res.bytesSkipped());
        r.put("manifest_written", res.manifestWritten());
        r.put("latest_set", res.latestSet());
        res.pointersMoved().forEach(r.putArray("pointers_moved")::add);
        res.notes().forEach(r.putArray("notes")::add);
        r.put("summary", res.summary());
        return r;
    }

    private static List<String> flat(Map<String, List<String>> m) {
        return m.values().stream().flatMap(List::stream).toList();
    }
}
