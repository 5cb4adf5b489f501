package io.warpdata.daemon.inspect;

import io.warpdata.daemon.ByteSize;
import io.warpdata.manifest.Artifact;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.Binding;
import io.warpdata.manifest.Column;
import io.warpdata.manifest.Manifest;
import io.warpdata.manifest.Table;
import io.warpdata.manifest.TableShard;
import io.warpdata.manifest.VersionHash;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What {@code info}, {@code inspect} and {@code schema} show of a version, as text for people
 * and as plain maps (rendered to JSON by the CLI) for scripts. Reads only the manifest.
 */
public final class VersionReport {
    private final Manifest manifest;
    private final VersionHash version;
    private final List<String> names;

    public VersionReport(Manifest manifest, VersionHash version) {
        this(manifest, version, List.of());
    }

    /**
     * @param names what the version goes by ({@code latest}, {@code tag v1}, {@code branch dev}),
     *              shown by {@link #infoText()} and {@link #infoJson(boolean)}
     */
    public VersionReport(Manifest manifest, VersionHash version, List<String> names) {
        this.manifest = manifest;
        this.version = version;
        this.names = List.copyOf(names);
    }

    /** The manifest summary: id, version, creation, tables, artifacts, bindings. */
    public String infoText() {
        StringBuilder sb = new StringBuilder();
        sb.append("dataset:  ").append(manifest.datasetId()).append('\n');
        sb.append("version:  ").append(version.hex()).append('\n');
        sb.append("created:  ").append(manifest.metadata().getOrDefault("created_at", "?"));
        if (manifest.metadata().containsKey("creator")) {
            sb.append(" by ").append(manifest.metadata().get("creator"));
        }
        sb.append('\n');
        if (!names.isEmpty()) {
            sb.append("names:    ").append(String.join(", ", names)).append('\n');
        }
        manifest.derivedFrom().ifPresent(d -> {
            sb.append("view of:  ").append(d.parent()).append('@').append(d.parentVersion().hex()).append(", table ")
                    .append(d.table()).append('\n');
            d.query().forEach((k, v) -> sb.append("          ").append(k).append(": ").append(v).append('\n'));
        });
        sb.append("totals:   ").append(manifest.stats().totalRows()).append(" rows, ")
                .append(manifest.stats().totalMembers()).append(" members, ")
                .append(ByteSize.format(manifest.readableBytes()));
        if (manifest.derivedFrom().isPresent() && manifest.stats().totalBytes() != manifest.readableBytes()) {
            sb.append(" (its rows and members; the parent's shards they lie in hold ")
                    .append(ByteSize.format(manifest.stats().totalBytes())).append(')');
        }
        sb.append('\n');
        if (!manifest.tables().isEmpty()) {
            TextTable t = new TextTable(List.of("TABLE", "ROWS", "BYTES", "SHARDS", "COLUMNS"));
            manifest.tables().forEach((name, table) -> t.add(List.of(name, Long.toString(table.rowCount()),
                    ByteSize.format(table.byteSize()), Integer.toString(table.shards().size()),
                    Integer.toString(table.schema().size()))));
            sb.append('\n').append(t.render(true));
        }
        if (!manifest.artifacts().isEmpty()) {
            // Members' bytes and the shards' (tar headers and padding: 512-1,535 bytes a member more;
            // audit 18 read 2.8 GB here against 3.7 GB in the totals).
            TextTable t = new TextTable(List.of("ARTIFACT", "KIND", "MEMBERS", "MEMBER BYTES", "SHARDS", "SHARD BYTES"));
            manifest.artifacts().forEach((name, a) -> t.add(List.of(name, a.kind().json(),
                    Long.toString(a.memberCount()), ByteSize.format(a.memberBytes()), Integer.toString(a.shards().size()),
                    ByteSize.format(a.shards().stream().mapToLong(BlobRef::size).sum()))));
            sb.append('\n').append(t.render(true));
            manifest.artifacts().forEach((name, a) -> {
                if (!a.shardNames().isEmpty()) {
                    sb.append("files:    ").append(name).append(Artifact.SHARD_FOLDER_SUFFIX).append("/ in the mount holds the ")
                            .append(a.shardNames().size()).append(" tar file(s) of ").append(name)
                            .append(" as published (").append(a.shardNames().get(0))
                            .append(a.shardNames().size() > 1 ? ", ...)" : ")").append('\n');
                }
            });
        }
        if (!manifest.bindings().isEmpty()) {
            sb.append('\n').append(bindingsTable().render(true));
        }
        return sb.toString();
    }

    /** Tables with every shard and column, artifacts with every shard, bindings. */
    public String inspectText() {
        StringBuilder sb = new StringBuilder();
        sb.append(manifest.datasetId()).append('@').append(version.hex()).append('\n');
        manifest.tables().forEach((name, table) -> {
            sb.append("\ntable ").append(name).append(": ").append(table.rowCount()).append(" rows in ")
                    .append(table.shards().size()).append(" shard(s), ").append(ByteSize.format(table.byteSize()))
                    .append('\n');
            TextTable shards = new TextTable(List.of("SHARD", "ROWS", "BYTES", "BLOB"));
            for (TableShard s : table.shards()) {
                shards.add(List.of(s.name(), Long.toString(s.rowCount()), Long.toString(s.blob().size()),
                        s.blob().id().hex()));
            }
            sb.append(indent(shards.render(true)));
            sb.append(indent(schemaTable(table).render(true)));
        });
        manifest.artifacts().forEach((name, a) -> {
            sb.append("\nartifact ").append(name).append(": ").append(a.kind().json()).append(", ")
                    .append(a.memberCount()).append(" members, ").append(ByteSize.format(a.memberBytes()))
                    .append(" in ").append(a.shards().size()).append(" shard(s) of ")
                    .append(ByteSize.format(a.shards().stream().mapToLong(BlobRef::size).sum())).append('\n');
            a.facts().forEach((k, v) -> sb.append("  ").append(k).append(": ").append(v).append('\n'));
            TextTable shards = new TextTable(List.of("SHARD", "BYTES", "BLOB"));
            for (int i = 0; i < a.shards().size(); i++) {
                BlobRef b = a.shards().get(i);
                shards.add(List.of(a.shardNames().isEmpty() ? Integer.toString(i) : i + " " + a.shardNames().get(i),
                        Long.toString(b.size()), b.id().hex()));
            }
            shards.add(List.of("index", Long.toString(a.index().size()), a.index().id().hex()));
            sb.append(indent(shards.render(true)));
        });
        if (!manifest.bindings().isEmpty()) {
            sb.append('\n').append(bindingsTable().render(true));
        }
        return sb.toString();
    }

    /** The schema of one table, or of every table when {@code table} is null. */
    public String schemaText(String table) {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, Table> e : selected(table).entrySet()) {
            if (table == null && manifest.tables().size() > 1) {
                sb.append(e.getKey()).append(":\n").append(indent(schemaTable(e.getValue()).render(true)));
            } else {
                sb.append(schemaTable(e.getValue()).render(true));
            }
        }
        return sb.toString();
    }

    /**
     * The table a command shows when none is named: {@code main}, the seeds' name for a
     * dataset's primary table, when there is one; else the first by name; empty without tables.
     */
    public java.util.Optional<String> defaultTable() {
        if (manifest.tables().containsKey("main")) {
            return java.util.Optional.of("main");
        }
        return manifest.tables().isEmpty() ? java.util.Optional.empty() : java.util.Optional.of(manifest.tables().firstKey());
    }

    /** Tables to show: one named, or all. */
    public Map<String, Table> selected(String table) {
        if (table == null) {
            return manifest.tables();
        }
        Table t = manifest.tables().get(table);
        if (t == null) {
            throw new NoSuchTableException(manifest.datasetId() + "@" + version.shortHex(12), table,
                    manifest.tables().keySet());
        }
        return Map.of(table, t);
    }

    private static TextTable schemaTable(Table table) {
        TextTable t = new TextTable(List.of("COLUMN", "TYPE"));
        for (Column c : table.schema()) {
            t.add(List.of(c.name(), c.type()));
        }
        return t;
    }

    private TextTable bindingsTable() {
        TextTable t = new TextTable(List.of("BINDING", "ARTIFACT", "TYPE"));
        for (Binding b : manifest.bindings()) {
            t.add(List.of(b.table() + "." + b.column(), b.artifact(), b.refType().json()));
        }
        return t;
    }

    private static String indent(String text) {
        return text.lines().map(l -> "  " + l + "\n").reduce("", String::concat);
    }

    /** The summary as plain maps, for {@code --json}. */
    public Map<String, Object> infoJson(boolean detailed) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("dataset", manifest.datasetId().toString());
        m.put("version", version.hex());
        m.put("metadata", manifest.metadata());
        m.put("names", names);
        manifest.derivedFrom().ifPresent(d -> {
            Map<String, Object> dm = new LinkedHashMap<>();
            dm.put("dataset", d.parent().toString());
            dm.put("version", d.parentVersion().hex());
            dm.put("table", d.table());
            dm.put("query", d.query());
            m.put("derived_from", dm);
        });
        Map<String, Object> stats = new LinkedHashMap<>();
        stats.put("total_rows", manifest.stats().totalRows());
        stats.put("total_members", manifest.stats().totalMembers());
        stats.put("total_bytes", manifest.readableBytes());
        if (manifest.derivedFrom().isPresent()) {
            // A view's own bytes above; the parent's shards it reads them from hold this much.
            stats.put("shard_bytes", manifest.stats().totalBytes());
        }
        m.put("stats", stats);
        Map<String, Object> tables = new LinkedHashMap<>();
        manifest.tables().forEach((name, t) -> {
            Map<String, Object> tm = new LinkedHashMap<>();
            tm.put("rows", t.rowCount());
            tm.put("bytes", t.byteSize());
            tm.put("shard_count", t.shards().size());
            tm.put("schema", schemaJson(t));
            if (detailed) {
                List<Object> shards = new ArrayList<>();
                for (TableShard s : t.shards()) {
                    Map<String, Object> sm = blobJson(s.blob());
                    sm.put("name", s.name());
                    sm.put("rows", s.rowCount());
                    shards.add(sm);
                }
                tm.put("shards", shards);
            }
            tables.put(name, tm);
        });
        m.put("tables", tables);
        Map<String, Object> artifacts = new LinkedHashMap<>();
        manifest.artifacts().forEach((name, a) -> artifacts.put(name, artifactJson(a, detailed)));
        m.put("artifacts", artifacts);
        List<Object> bindings = new ArrayList<>();
        for (Binding b : manifest.bindings()) {
            Map<String, Object> bm = new LinkedHashMap<>();
            bm.put("table", b.table());
            bm.put("column", b.column());
            bm.put("artifact", b.artifact());
            bm.put("ref_type", b.refType().json());
            bindings.add(bm);
        }
        m.put("bindings", bindings);
        return m;
    }

    /** Schemas as plain maps: table -> [{name, type}]. */
    public Map<String, Object> schemaJson(String table) {
        Map<String, Object> m = new LinkedHashMap<>();
        selected(table).forEach((name, t) -> m.put(name, schemaJson(t)));
        return m;
    }

    private static List<Object> schemaJson(Table t) {
        List<Object> cols = new ArrayList<>();
        for (Column c : t.schema()) {
            Map<String, Object> cm = new LinkedHashMap<>();
            cm.put("name", c.name());
            cm.put("type", c.type());
            cols.add(cm);
        }
        return cols;
    }

    private static Map<String, Object> artifactJson(Artifact a, boolean detailed) {
        Map<String, Object> am = new LinkedHashMap<>();
        am.put("kind", a.kind().json());
        am.put("members", a.memberCount());
        am.put("member_bytes", a.memberBytes());
        am.put("shard_count", a.shards().size());
        if (!a.facts().isEmpty()) {
            am.put("facts", a.facts());
        }
        if (!a.shardNames().isEmpty()) {
            // As the text says it (audit 25): the tars as files, in ARTIFACT.tars/ of the mount.
            am.put("shard_files", a.shardNames());
        }
        if (detailed) {
            List<Object> shards = new ArrayList<>();
            for (int i = 0; i < a.shards().size(); i++) {
                Map<String, Object> sm = blobJson(a.shards().get(i));
                if (!a.shardNames().isEmpty()) {
                    sm.put("name", a.shardNames().get(i));
                }
                shards.add(sm);
            }
            am.put("shards", shards);
            am.put("index", blobJson(a.index()));
        }
        return am;
    }

    private static Map<String, Object> blobJson(BlobRef b) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("hash", b.id().hex());
        m.put("bytes", b.size());
        m.put("blocks", b.blocks().hex());
        return m;
    }

    /** A table name that the version does not have. */
    public static final class NoSuchTableException extends io.warpdata.manifest.WarpException {
        public NoSuchTableException(String version, String table, java.util.Collection<String> tables) {
            super("Version " + version + " has no table '" + table + "'",
                    "Its tables are " + tables + "; pass one of them with --table.");
        }

        @Override
        public String type() {
            return "TableNotFound";
        }
    }

    /** A command that reads a table was pointed at a version that holds only artifacts (exit code 1). */
    public static final class NoTablesException extends io.warpdata.manifest.WarpException {
        public NoTablesException(String message, String nextStep) {
            super(message, nextStep);
        }

        @Override
        public String type() {
            return "NoTables";
        }
    }
}
