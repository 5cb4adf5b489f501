package io.warpdata.daemon.publish;

import io.warpdata.manifest.ArtifactKind;
import io.warpdata.manifest.MemberIndex;

import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.Objects;

/**
 * An artifact ready to upload: its tar shards (in order), its member index, totals, and the file
 * names of WebDataset shards ({@link io.warpdata.manifest.Artifact#shardNames()}; else empty) or
 * why they were left out ({@code shardNamesLeftOut}; else "").
 */
public record PackedArtifact(ArtifactKind kind, List<StagedBlob> shards, MemberIndex members, StagedIndex stagedIndex,
                             long memberCount, long memberBytes, SortedMap<String, String> facts,
                             List<String> shardNames, String shardNamesLeftOut) {
    public PackedArtifact {
        Objects.requireNonNull(kind, "kind");
        shards = List.copyOf(shards);
        Objects.requireNonNull(members, "members");
        Objects.requireNonNull(stagedIndex, "stagedIndex");
        facts = java.util.Collections.unmodifiableSortedMap(new TreeMap<>(facts));
        shardNames = List.copyOf(shardNames);
        Objects.requireNonNull(shardNamesLeftOut, "shardNamesLeftOut");
    }

    /** A packing without shard names. */
    public PackedArtifact(ArtifactKind kind, List<StagedBlob> shards, MemberIndex members, StagedIndex index,
                          long memberCount, long memberBytes, SortedMap<String, String> facts) {
        this(kind, shards, members, index, memberCount, memberBytes, facts, List.of(), "");
    }

    /** A packing without format facts. */
    public PackedArtifact(ArtifactKind kind, List<StagedBlob> shards, MemberIndex members, StagedIndex index,
                          long memberCount, long memberBytes) {
        this(kind, shards, members, index, memberCount, memberBytes, new TreeMap<>());
    }

    /** The blob the manifest names as the artifact's index (flat, or a parted index's top). */
    public StagedBlob index() {
        return stagedIndex.top();
    }

    /** The same packing with one more fact. */
    public PackedArtifact withFact(String name, String value) {
        TreeMap<String, String> more = new TreeMap<>(facts);
        more.put(name, value);
        return new PackedArtifact(kind, shards, members, stagedIndex, memberCount, memberBytes, more, shardNames,
                shardNamesLeftOut);
    }

    /**
     * The same packing without shard names (the mount will not show its shards as files), saying
     * why ({@link #shardNamesLeftOut}: a note of the publish's result).
     */
    public PackedArtifact withoutShardNames(String why) {
        return new PackedArtifact(kind, shards, members, stagedIndex, memberCount, memberBytes, facts, List.of(), why);
    }

    /** The same packing, published as a checked format with what the check learned. */
    public PackedArtifact asFormat(ArtifactKind other, Map<String, String> formatFacts) {
        return new PackedArtifact(other, shards, members, stagedIndex, memberCount, memberBytes, new TreeMap<>(formatFacts));
    }
}
