package io.warpdata.daemon.control.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.Args;
import io.warpdata.daemon.control.ControlProtocol;
import io.warpdata.daemon.control.Operation;
import io.warpdata.daemon.control.OperationContext;
import io.warpdata.daemon.control.SourceAccess;
import io.warpdata.manifest.DatasetRef;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code publish {dataset, tables:{name:[abs paths]}, artifacts:{name:[abs paths]}, bindings:[...],
 * set_latest, shard_size}}: publishes with the daemon's credentials, after checking that the peer could read
 * every source itself, then refreshes the catalog so the new version is in the mount when the
 * reply arrives.
 */
public final class PublishOperation implements Operation {
    private final PublishRunner publisher;
    private final CatalogControl catalog;
    private final SourceAccess access;

    public PublishOperation(PublishRunner publisher, CatalogControl catalog, SourceAccess access) {
        this.publisher = publisher;
        this.catalog = catalog;
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

    /** Reads the request from the arguments. */
    static PublishRunner.PublishRequest request(Args args, String creator) {
        DatasetRef ref = Datasets.ref(args);
        if (!(ref.ref() instanceof DatasetRef.Latest)) {
            throw args.bad("dataset", "must be workspace/name without @version (publish makes the version)");
        }
        Map<String, List<Path>> tables = pathMap(args, "tables");
        Map<String, List<Path>> artifacts = pathMap(args, "artifacts");
        if (tables.isEmpty() && artifacts.isEmpty()) {
            throw args.bad("tables", "and 'artifacts' are both empty: nothing to publish");
        }
        return new PublishRunner.PublishRequest(ref.id(), tables, artifacts, args.stringList("bindings"),
                args.bool("set_latest", false), args.optSize("shard_size").orElse(0), creator);
    }

    private static Map<String, List<Path>> pathMap(Args args, String field) {
        JsonNode node = args.node().get(field);
        Map<String, List<Path>> out = new LinkedHashMap<>();
        if (node == null || node.isNull()) {
            return out;
        }
        if (!node.isObject()) {
            throw args.bad(field, "must be an object: name -> list of absolute paths");
        }
        Iterator<Map.Entry<String, JsonNode>> it = node.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            List<Path> paths = new ArrayList<>();
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
                paths.add(Path.of(v.asText()).normalize());
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
        PublishRunner.PublishRequest req = request(ctx.args(), ctx.peer().userName());
        for (Path source : req.sources()) {
            access.checkReadable(ctx.peer(), source);
        }
        ctx.cancellation().throwIfCancelled("publish of " + req.dataset());
        Map<String, Object> result = publisher.publish(req, line -> {
            ObjectNode p = ControlProtocol.object();
            p.put("message", line);
            ctx.progress(p);
        }, ctx.cancellation());
        // The mount re-reads pointers on a TTL; refresh now so the version is visible on return.
        catalog.refresh(Optional.of(req.dataset()));
        ObjectNode r = ControlProtocol.json().valueToTree(result);
        if (!r.has("dataset")) {
            r.put("dataset", req.dataset().toString());
        }
        return r;
    }

}
