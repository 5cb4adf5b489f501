package io.warpdata.vfs;

import io.warpdata.manifest.Artifact;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.Manifest;
import io.warpdata.manifest.ManifestCodec;
import io.warpdata.manifest.Table;
import io.warpdata.manifest.TableShard;
import io.warpdata.manifest.VersionHash;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The fixed facts of one version that the tree needs on every lookup: the manifest, its stored
 * JSON (served as {@code .warp/manifest.json}), its mtime, and shard names by table (and by
 * {@code ARTIFACT.tars} folder, for WebDataset shards that named their files). Immutable; shared
 * by every node of the version.
 */
public final class VersionTree {
    private final DatasetId dataset;
    private final VersionHash version;
    private final Manifest manifest;
    private final byte[] manifestJson;
    private final Instant createdAt;
    private final Map<String, Map<String, TableShard>> shardsByTable;
    /** Per table, each folder's entries (partition folders, then files), made once. */
    private final Map<String, Map<String, List<TableChild>>> foldersByTable;
    private final List<String> tarFolders;

    /** An entry of a table's folder: a file (its shard) or a partition folder (shard null). */
    record TableChild(String name, TableShard shard) {
    }

    public VersionTree(DatasetId dataset, VersionHash version, Manifest manifest) {
        this.dataset = dataset;
        this.version = version;
        this.manifest = manifest;
        this.manifestJson = ManifestCodec.toJson(manifest);
        this.createdAt = createdAt(manifest);
        Map<String, Map<String, TableShard>> byTable = new LinkedHashMap<>();
        Map<String, Map<String, List<TableChild>>> folders = new LinkedHashMap<>();
        for (Map.Entry<String, Table> t : manifest.tables().entrySet()) {
            Map<String, TableShard> shards = new LinkedHashMap<>();
            Map<String, Map<String, TableChild>> dirs = new LinkedHashMap<>();
            dirs.put("", new LinkedHashMap<>());
            for (TableShard s : t.getValue().shards()) {
                shards.put(s.path(), s);
                String parent = "";
                if (!s.dir().isEmpty()) {
                    for (String part : s.dir().split("/")) {
                        String here = parent.isEmpty() ? part : parent + "/" + part;
                        dirs.computeIfAbsent(parent, k -> new LinkedHashMap<>()).putIfAbsent(part, new TableChild(part, null));
                        dirs.computeIfAbsent(here, k -> new LinkedHashMap<>());
                        parent = here;
                    }
                }
                dirs.get(parent).put(s.name(), new TableChild(s.name(), s));
            }
            byTable.put(t.getKey(), shards);
            Map<String, List<TableChild>> listed = new LinkedHashMap<>();
            dirs.forEach((d, children) -> listed.put(d, List.copyOf(children.values())));
            folders.put(t.getKey(), listed);
        }
        List<String> tarFolders = new java.util.ArrayList<>();
        for (Map.Entry<String, Artifact> a : manifest.artifacts().entrySet()) {
            List<String> names = a.getValue().shardNames();
            if (names.isEmpty()) {
                continue;
            }
            // WebDataset shards as the files they were published as: read like a table's files.
            String folder = a.getKey() + Artifact.SHARD_FOLDER_SUFFIX;
            Map<String, TableShard> shards = new LinkedHashMap<>();
            List<TableChild> children = new java.util.ArrayList<>(names.size());
            for (int i = 0; i < names.size(); i++) {
                // Named by position: a tar's name may be any file name (spaces, accents), which a
                // table shard's may not; the folder shows it under its own.
                TableShard shard = new TableShard("shard-" + i, a.getValue().shards().get(i), 0);
                shards.put(names.get(i), shard);
                children.add(new TableChild(names.get(i), shard));
            }
            byTable.put(folder, shards);
            folders.put(folder, Map.of("", List.copyOf(children)));
            tarFolders.add(folder);
        }
        this.shardsByTable = byTable;
        this.foldersByTable = folders;
        this.tarFolders = List.copyOf(tarFolders);
    }

    /**
     * The folders of WebDataset shards shown as their files ({@code ARTIFACT.tars}, one per
     * artifact that named them), in artifact order; their nodes are table folders.
     */
    List<String> tarFolders() {
        return tarFolders;
    }

    public DatasetId dataset() {
        return dataset;
    }

    public VersionHash version() {
        return version;
    }

    public Manifest manifest() {
        return manifest;
    }

    /** The stored JSON; callers must not modify it. */
    byte[] manifestJson() {
        return manifestJson;
    }

    /** The version's {@code created_at}: seconds since the epoch (0 if it has none). */
    public long mtimeSeconds() {
        return createdAt.getEpochSecond();
    }

    /** The nanoseconds within {@link #mtimeSeconds()} of its {@code created_at}. */
    public int mtimeNanos() {
        return createdAt.getNano();
    }

    /**
     * The entries of folder {@code dir} of {@code table} ({@code ""}: the table's own), in
     * manifest order, or null if there is no such folder.
     */
    List<TableChild> tableFolder(String table, String dir) {
        Map<String, List<TableChild>> folders = foldersByTable.get(table);
        return folders == null ? null : folders.get(dir);
    }

    /**
     * Shards of {@code table} by path below the table's folder, in manifest order, or null if there
     * is no such table; also the tars of an {@code ARTIFACT.tars} folder by their names (their
     * {@link TableShard} is a stand-in named by position, of 0 rows: read as whole blobs only).
     */
    Map<String, TableShard> shards(String table) {
        return shardsByTable.get(table);
    }

    /** {@code ws/name@hash}, for log lines. */
    public String describe() {
        return dataset + "@" + version.hex();
    }

    /** The version's {@code created_at} metadata (ISO-8601 or epoch seconds) as epoch seconds; 0 if absent or unreadable. */
    static Instant createdAt(Manifest manifest) {
        String value = manifest.metadata().get("created_at");
        if (value == null || value.isEmpty()) {
            return Instant.EPOCH;
        }
        try {
            return Instant.parse(value);
        } catch (DateTimeParseException e) {
            try {
                return Instant.ofEpochSecond(Long.parseLong(value));
            } catch (NumberFormatException notNumeric) {
                return Instant.EPOCH;
            }
        }
    }

    @Override
    public String toString() {
        return describe();
    }
}
