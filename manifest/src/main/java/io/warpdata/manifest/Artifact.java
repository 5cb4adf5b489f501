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
 */
public record Artifact(ArtifactKind kind, List<BlobRef> shards, BlobRef index, long memberCount, long memberBytes,
                       SortedMap<String, String> facts) {
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
    }

    /** An artifact without facts. */
    public Artifact(ArtifactKind kind, List<BlobRef> shards, BlobRef index, long memberCount, long memberBytes) {
        this(kind, shards, index, memberCount, memberBytes, new TreeMap<>());
    }
}
