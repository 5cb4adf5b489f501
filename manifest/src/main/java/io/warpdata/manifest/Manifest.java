package io.warpdata.manifest;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * One immutable dataset version. Everything but {@link #metadata()} is hashed into the version
 * id (see {@link ManifestCodec#version(Manifest)}); metadata holds non-hashed facts such as
 * {@code created_at} and {@code creator}.
 *
 * <p>Tables and artifacts share one namespace: each becomes a directory of the version in the
 * mount, so a name may not be used twice, nor be {@code .warp}.
 *
 * <p>{@link #formatVersion()} is the format the version is (or will be) stored in, hashed with
 * the rest: a new manifest takes {@link #formatFor the oldest that describes it}; a stored one
 * keeps the number it was written with ({@link ManifestCodec#FORMAT_VERSION}).
 */
public record Manifest(DatasetId datasetId,
                       SortedMap<String, Table> tables,
                       SortedMap<String, Artifact> artifacts,
                       List<Binding> bindings,
                       Stats stats,
                       SortedMap<String, String> metadata,
                       Optional<Derivation> derivedFrom,
                       int formatVersion) {
    public Manifest {
        if (formatVersion < 1 || formatVersion > ManifestCodec.FORMAT_VERSION) {
            throw new ManifestValidationException("format_version", "format version " + formatVersion
                    + " (this Warp writes 1 to " + ManifestCodec.FORMAT_VERSION + ")");
        }
        Objects.requireNonNull(derivedFrom, "derivedFrom");
        Objects.requireNonNull(datasetId, "datasetId");
        tables = Collections.unmodifiableSortedMap(new TreeMap<>(tables));
        artifacts = Collections.unmodifiableSortedMap(new TreeMap<>(artifacts));
        bindings = List.copyOf(bindings);
        Objects.requireNonNull(stats, "stats");
        metadata = Collections.unmodifiableSortedMap(new TreeMap<>(metadata));
        for (String t : tables.keySet()) {
            Names.requireComponent("tables." + t, t);
            if (artifacts.containsKey(t)) {
                throw new ManifestValidationException("artifacts." + t, "name '" + t + "' is used by a table and an artifact");
            }
        }
        for (Map.Entry<String, Artifact> a : artifacts.entrySet()) {
            Names.requireComponent("artifacts." + a.getKey(), a.getKey());
            if (a.getValue().tensorHashes() != null && formatVersion < 4) {
                throw new ManifestValidationException("artifacts." + a.getKey() + ".tensor_hashes",
                        "tensor hashes came with format 4, this version says " + formatVersion);
            }
            if (a.getValue().tensorHeaders() != null && formatVersion < 5) {
                throw new ManifestValidationException("artifacts." + a.getKey() + ".tensor_headers",
                        "tensor headers came with format 5, this version says " + formatVersion);
            }
            if (a.getValue().shardNames().isEmpty()) {
                continue;
            }
            if (formatVersion < 3) {
                throw new ManifestValidationException("artifacts." + a.getKey() + ".shard_names",
                        "shard names came with format 3, this version says " + formatVersion);
            }
            String folder = a.getKey() + Artifact.SHARD_FOLDER_SUFFIX;
            if (folder.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 255) {
                throw new ManifestValidationException("artifacts." + a.getKey() + ".shard_names", "the folder of its shard"
                        + " files, '" + folder + "', is longer than a file name may be (255 bytes)");
            }
            if (tables.containsKey(folder) || artifacts.containsKey(folder)) {
                throw new ManifestValidationException("artifacts." + a.getKey() + ".shard_names", "the folder of its shard"
                        + " files, '" + folder + "', is the name of " + (tables.containsKey(folder) ? "a table" : "an artifact"));
            }
        }
        for (int i = 0; i < bindings.size(); i++) {
            Binding b = bindings.get(i);
            if (!tables.containsKey(b.table())) {
                throw new ManifestValidationException("bindings[" + i + "].table", "no table named '" + b.table() + "'");
            }
            if (!artifacts.containsKey(b.artifact())) {
                throw new ManifestValidationException("bindings[" + i + "].artifact", "no artifact named '" + b.artifact() + "'");
            }
        }
    }

    /** A new version, in the oldest format that describes it. */
    public Manifest(DatasetId datasetId, SortedMap<String, Table> tables, SortedMap<String, Artifact> artifacts,
                    List<Binding> bindings, Stats stats, SortedMap<String, String> metadata,
                    Optional<Derivation> derivedFrom) {
        this(datasetId, tables, artifacts, bindings, stats, metadata, derivedFrom, formatFor(artifacts));
    }

    /** A new ordinary (not derived) version. */
    public Manifest(DatasetId datasetId, SortedMap<String, Table> tables, SortedMap<String, Artifact> artifacts,
                    List<Binding> bindings, Stats stats, SortedMap<String, String> metadata) {
        this(datasetId, tables, artifacts, bindings, stats, metadata, Optional.empty());
    }

    /**
     * The oldest format that describes a version of these artifacts: 5 when one names tensor
     * headers ({@link Artifact#tensorHeaders()}); 4 when one names tensor hashes
     * ({@link Artifact#tensorHashes()}); 3 when one names its shards' files
     * ({@link Artifact#shardNames()}); 2 when one has its member index in parts (more than
     * {@link MemberIndex#PART_MEMBERS} members, as every publisher cuts them), so that a warpd
     * that cannot read parts refuses the version by its number instead of failing on its index as
     * if it were damaged; else 1, which every Warp reads.
     */
    public static int formatFor(Map<String, Artifact> artifacts) {
        int format = 1;
        for (Artifact a : artifacts.values()) {
            if (a.tensorHeaders() != null) {
                return 5;
            }
            if (a.tensorHashes() != null) {
                format = 4;
            }
            if (format >= 4) {
                continue;
            }
            if (!a.shardNames().isEmpty()) {
                format = 3;
            }
            if (format < 3 && a.memberCount() > MemberIndex.PART_MEMBERS) {
                format = 2;
            }
        }
        return format;
    }

    /** Builds a manifest, deriving {@link Stats} from the tables and artifacts. */
    public static Manifest of(DatasetId id, Map<String, Table> tables, Map<String, Artifact> artifacts,
                              List<Binding> bindings, Map<String, String> metadata) {
        long rows = tables.values().stream().mapToLong(Table::rowCount).sum();
        long bytes = tables.values().stream().mapToLong(Table::byteSize).sum()
                + artifacts.values().stream().mapToLong(a -> a.shards().stream().mapToLong(BlobRef::size).sum()).sum();
        long members = artifacts.values().stream().mapToLong(Artifact::memberCount).sum();
        return new Manifest(id, new TreeMap<>(tables), new TreeMap<>(artifacts), bindings,
                new Stats(rows, bytes, members), new TreeMap<>(metadata));
    }

    /**
     * The bytes a reader of this version can read: its tables and its artifacts' members. For an
     * ordinary version that is {@link Stats#totalBytes()} (tables and artifact shards). A view's
     * artifacts share their parent's shards and select some of their members, so only those
     * members count: the shards' totals (the recorded stats, which the version's hash covers)
     * would report the parent's size.
     */
    public long readableBytes() {
        if (derivedFrom.isEmpty()) {
            return stats.totalBytes();
        }
        return tables.values().stream().mapToLong(Table::byteSize).sum()
                + artifacts.values().stream().mapToLong(Artifact::memberBytes).sum();
    }

    /** The same manifest as a version derived from another ({@link Derivation}: a view). */
    public Manifest derivedFrom(Derivation derivation) {
        return new Manifest(datasetId, tables, artifacts, bindings, stats, metadata, Optional.of(derivation));
    }

    /** The same manifest with other metadata (the version id does not change). */
    public Manifest withMetadata(Map<String, String> newMetadata) {
        return new Manifest(datasetId, tables, artifacts, bindings, stats, new TreeMap<>(newMetadata), derivedFrom,
                formatVersion);
    }
}
