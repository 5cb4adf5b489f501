package io.warpdata.daemon.control.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warpdata.catalog.Catalog;
import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.ControlProtocol;
import io.warpdata.daemon.control.Operation;
import io.warpdata.daemon.control.OperationContext;
import io.warpdata.manifest.Artifact;
import io.warpdata.manifest.Binding;
import io.warpdata.manifest.Column;
import io.warpdata.manifest.Manifest;
import io.warpdata.manifest.Table;
import io.warpdata.manifest.TableShard;

import java.util.Map;

/**
 * {@code info {dataset}}: one version as the daemon sees it: tables (shard files, rows, bytes,
 * schema), artifacts (shards, members), bindings. {@code warpctl init} builds its loader from this.
 */
public final class InfoOperation implements Operation {
    private final Catalog catalog;

    public InfoOperation(Catalog catalog) {
        this.catalog = catalog;
    }

    @Override
    public String name() {
        return "info";
    }

    @Override
    public AccessPolicy.Access access() {
        return AccessPolicy.Access.OPEN;
    }

    @Override
    public JsonNode run(OperationContext ctx) {
        return describe(catalog.resolve(Datasets.ref(ctx.args())));
    }

    /** The {@code info} result for one resolved version. */
    public static ObjectNode describe(Catalog.Resolved v) {
        Manifest m = v.manifest();
        ObjectNode r = ControlProtocol.object();
        r.put("dataset", v.id().toString());
        r.put("version", v.version().hex());
        ObjectNode tables = r.putObject("tables");
        for (Map.Entry<String, Table> t : m.tables().entrySet()) {
            ObjectNode tn = tables.putObject(t.getKey());
            tn.put("rows", t.getValue().rowCount());
            tn.put("bytes", t.getValue().byteSize());
            ArrayNode shards = tn.putArray("shards");
            for (TableShard s : t.getValue().shards()) {
                ObjectNode sn = shards.addObject();
                sn.put("name", s.name());
                sn.put("rows", s.rowCount());
                sn.put("bytes", s.blob().size());
            }
            ArrayNode schema = tn.putArray("schema");
            for (Column c : t.getValue().schema()) {
                schema.addObject().put("name", c.name()).put("type", c.type());
            }
        }
        ObjectNode artifacts = r.putObject("artifacts");
        for (Map.Entry<String, Artifact> a : m.artifacts().entrySet()) {
            ObjectNode an = artifacts.putObject(a.getKey());
            an.put("kind", a.getValue().kind().json());
            an.put("shards", a.getValue().shards().size());
            an.put("members", a.getValue().memberCount());
            an.put("member_bytes", a.getValue().memberBytes());
        }
        ArrayNode bindings = r.putArray("bindings");
        for (Binding b : m.bindings()) {
            bindings.addObject().put("table", b.table()).put("column", b.column())
                    .put("artifact", b.artifact()).put("ref_type", b.refType().json());
        }
        r.put("total_rows", m.stats().totalRows());
        r.put("total_bytes", m.readableBytes());
        return r;
    }
}
