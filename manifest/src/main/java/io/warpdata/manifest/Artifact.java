package io.warpdata.manifest;

import java.util.List;
import java.util.Objects;

/**
 * Raw files (images, audio, ...) stored as tar shards; the member index blob maps each member
 * path to (shard, data offset, length, mode, content hash), see {@link MemberIndex}.
 */
public record Artifact(ArtifactKind kind, List<BlobRef> shards, BlobRef index, long memberCount, long memberBytes) {
    public Artifact {
        Objects.requireNonNull(kind, "kind");
        shards = List.copyOf(shards);
        Objects.requireNonNull(index, "index");
        Names.requireNonNegative("member_count", memberCount);
        Names.requireNonNegative("member_bytes", memberBytes);
    }
}
