package io.warpdata.manifest;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Raw files (images, audio, ...) stored as tar shards; the member index blob maps each member
 * path to (shard, data offset, length, mode, content hash), see {@link MemberIndex}.
 *
 * @param facts what publish learned of a checked format (safetensors: files, tensors, dtypes;
 *              a tensor warehouse: samples, dimensions), as short strings; hashed, so the version
 *              id covers them; empty for plain folders and tar shards
 * @param shardNames the file names the shards were published under, one per shard (WebDataset
 *              shards only: they are the user's tar files byte for byte, and the mount shows them
 *              as {@code ARTIFACT.tars/NAME}); empty when not recorded (folders, views, versions
 *              before format 3, names that could not be kept)
 * @param tensorHashes the {@link TensorHashes} of its safetensors members, by which one tensor is
 *              fetched on its own (format 4); null when it has none, or was published before
 * @param tensorHeaders the {@link TensorHeaders} of those members, their headers deflated, by which
 *              a tensor is found without reading its file's header (format 5); null when it has
 *              none, or was published before; never without {@code tensorHashes}
 */
public record Artifact(ArtifactKind kind, List<BlobRef> shards, BlobRef index, long memberCount, long memberBytes,
                       SortedMap<String, String> facts, List<String> shardNames, BlobRef tensorHashes,
                       BlobRef tensorHeaders) {
    /** {@code ARTIFACT.tars} is the mount's folder of the shard files {@link #shardNames()} names. */
    public static final String SHARD_FOLDER_SUFFIX = ".tars";
    /** Most facts an artifact carries, and the longest one: a summary, never a listing. */
    public static final int MAX_FACTS = 64;
    public static final int MAX_FACT_CHARS = 4096;

    public Artifact {
        Objects.requireNonNull(kind, "kind");
        shards = List.copyOf(shards);
        Objects.requireNonNull(index, "index");
        Names.requireNonNegative("member_count", memberCount);
        Names.requireNonNegative("member_bytes", memberBytes);
        facts = Collections.unmodifiableSortedMap(new TreeMap<>(facts));
        if (facts.size() > MAX_FACTS) {
            throw new ManifestValidationException("facts", facts.size() + " facts, more than " + MAX_FACTS);
        }
        for (Map.Entry<String, String> f : facts.entrySet()) {
            if (!f.getKey().matches("[a-z][a-z0-9_]{0,63}")) {
                throw new ManifestValidationException("facts." + f.getKey(), "is not a fact name");
            }
            Objects.requireNonNull(f.getValue(), f.getKey());
            if (f.getValue().length() > MAX_FACT_CHARS) {
                throw new ManifestValidationException("facts." + f.getKey(), "is longer than " + MAX_FACT_CHARS + " characters");
            }
        }
        if (tensorHeaders != null && tensorHashes == null) {
            throw new ManifestValidationException("tensor_headers", "an artifact names tensor headers only with its tensor hashes");
        }
        shardNames = List.copyOf(shardNames);
        if (!shardNames.isEmpty()) {
            if (kind != ArtifactKind.WEBDATASET_SHARDS) {
                throw new ManifestValidationException("shard_names", "only webdataset_shards artifacts name their shards, not "
                        + kind.json());
            }
            if (shardNames.size() != shards.size()) {
                throw new ManifestValidationException("shard_names", shardNames.size() + " names for " + shards.size()
                        + " shards");
            }
            java.util.Set<String> seen = new java.util.HashSet<>();
            for (int i = 0; i < shardNames.size(); i++) {
                Names.requireFileName("shard_names[" + i + "]", shardNames.get(i));
                if (!seen.add(shardNames.get(i))) {
                    throw new ManifestValidationException("shard_names[" + i + "]", "'" + shardNames.get(i)
                            + "' names two shards");
                }
            }
        }
    }

    /** An artifact without tensor headers. */
    public Artifact(ArtifactKind kind, List<BlobRef> shards, BlobRef index, long memberCount, long memberBytes,
                    SortedMap<String, String> facts, List<String> shardNames, BlobRef tensorHashes) {
        this(kind, shards, index, memberCount, memberBytes, facts, shardNames, tensorHashes, null);
    }

    /** An artifact without tensor hashes. */
    public Artifact(ArtifactKind kind, List<BlobRef> shards, BlobRef index, long memberCount, long memberBytes,
                    SortedMap<String, String> facts, List<String> shardNames) {
        this(kind, shards, index, memberCount, memberBytes, facts, shardNames, null, null);
    }

    /** The same artifact naming {@code hashes} as its tensor hashes and {@code headers} as their headers (null: none). */
    public Artifact withTensorHashes(BlobRef hashes, BlobRef headers) {
        return new Artifact(kind, shards, index, memberCount, memberBytes, facts, shardNames, hashes, headers);
    }

    /** An artifact whose shards' names are not recorded. */
    public Artifact(ArtifactKind kind, List<BlobRef> shards, BlobRef index, long memberCount, long memberBytes,
                    SortedMap<String, String> facts) {
        this(kind, shards, index, memberCount, memberBytes, facts, List.of());
    }

    /** An artifact without facts. */
    public Artifact(ArtifactKind kind, List<BlobRef> shards, BlobRef index, long memberCount, long memberBytes) {
        this(kind, shards, index, memberCount, memberBytes, new TreeMap<>());
    }
}
