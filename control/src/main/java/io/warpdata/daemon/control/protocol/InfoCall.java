package io.warpdata.daemon.control.protocol;

import com.fasterxml.jackson.annotation.JsonProperty;

import java.util.List;
import java.util.Map;

/**
 * {@code info {dataset}}: one version as the daemon sees it: tables (shard files, rows, bytes,
 * schema), artifacts (shards, members), bindings. {@code warpctl init} builds its loader from
 * this; the Python package reads it as {@code Dataset}.
 */
public final class InfoCall {
    private InfoCall() {
    }

    public record Reply(@JsonProperty(required = true) String dataset,
                        @JsonProperty(required = true) String version,
                        Map<String, TableInfo> tables,
                        Map<String, ArtifactInfo> artifacts,
                        List<BindingInfo> bindings,
                        long totalRows,
                        long totalBytes,
                        List<String> names,
                        DerivedFromInfo derivedFrom) {
        public Reply {
            tables = tables == null ? Map.of() : tables;
            artifacts = artifacts == null ? Map.of() : artifacts;
            bindings = bindings == null ? List.of() : bindings;
            names = names == null ? List.of() : names;
        }
    }

    /**
     * Where a view came from (as {@code warpctl info} shows it): its parent and the query's terms.
     *
     * @param query the terms given ({@code where}, {@code order_by}, {@code limit}, {@code sample}, ...)
     */
    public record DerivedFromInfo(String dataset, String version, String table, Map<String, String> query) {
    }

    public record TableInfo(long rows, long bytes, List<ShardInfo> shards, List<ColumnInfo> schema) {
        public TableInfo {
            shards = shards == null ? List.of() : shards;
            schema = schema == null ? List.of() : schema;
        }
    }

    public record ShardInfo(String name, long rows, long bytes) {
    }

    public record ColumnInfo(String name, String type) {
    }

    /**
     * @param kind files, tar, ... as in the manifest
     * @param shardFiles the names WebDataset shards were published as, which the mount shows in
     *        {@code ARTIFACT.tars/}; null when the artifact has none (and from an older warpd)
     * @param facts what publish's check of its format learned, as {@code warpctl inspect} shows it
     *        (a safetensors dataset's files, tensors, dtypes, shapes; a tensor warehouse's); null
     *        when it has none (and from an older warpd). Audit 40: Python had no way to them.
     */
    public record ArtifactInfo(String kind, long shards, long members, long memberBytes, List<String> shardFiles,
                               Map<String, String> facts) {
        public ArtifactInfo(String kind, long shards, long members, long memberBytes) {
            this(kind, shards, members, memberBytes, null, null);
        }
    }

    /** @param refType as in the manifest's binding, e.g. {@code file} */
    public record BindingInfo(String table, String column, String artifact, String refType) {
    }
}
