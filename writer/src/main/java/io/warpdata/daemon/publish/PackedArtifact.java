package io.warpdata.daemon.publish;

import io.warpdata.manifest.ArtifactKind;
import io.warpdata.manifest.MemberIndex;

import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.Objects;

/** An artifact ready to upload: its tar shards (in order), its member index, and totals. */
public record PackedArtifact(ArtifactKind kind, List<StagedBlob> shards, MemberIndex members, StagedBlob index,
                             long memberCount, long memberBytes, SortedMap<String, String> facts) {
    public PackedArtifact {
        Objects.requireNonNull(kind, "kind");
        shards = List.copyOf(shards);
        Objects.requireNonNull(members, "members");
        Objects.requireNonNull(index, "index");
        facts = java.util.Collections.unmodifiableSortedMap(new TreeMap<>(facts));
    }

    /** A packing without format facts. */
    public PackedArtifact(ArtifactKind kind, List<StagedBlob> shards, MemberIndex members, StagedBlob index,
                          long memberCount, long memberBytes) {
        this(kind, shards, members, index, memberCount, memberBytes, new TreeMap<>());
    }

    /** The same packing with one more fact. */
    public PackedArtifact withFact(String name, String value) {
        TreeMap<String, String> more = new TreeMap<>(facts);
        more.put(name, value);
        return new PackedArtifact(kind, shards, members, index, memberCount, memberBytes, more);
    }

    /** The same packing, published as a checked format with what the check learned. */
    public PackedArtifact asFormat(ArtifactKind other, Map<String, String> formatFacts) {
        return new PackedArtifact(other, shards, members, index, memberCount, memberBytes, new TreeMap<>(formatFacts));
    }
}
