package io.warpdata.daemon.publish;

import io.warpdata.manifest.ArtifactKind;
import io.warpdata.manifest.MemberIndex;

import java.util.List;
import java.util.Objects;

/** An artifact ready to upload: its tar shards (in order), its member index, and totals. */
public record PackedArtifact(ArtifactKind kind, List<StagedBlob> shards, MemberIndex members, StagedBlob index,
                             long memberCount, long memberBytes) {
    public PackedArtifact {
        Objects.requireNonNull(kind, "kind");
        shards = List.copyOf(shards);
        Objects.requireNonNull(members, "members");
        Objects.requireNonNull(index, "index");
    }

    /** The same packing, published as another kind (a checked format). */
    public PackedArtifact withKind(ArtifactKind other) {
        return new PackedArtifact(other, shards, members, index, memberCount, memberBytes);
    }
}
