package io.warpdata.manifest;

import com.fasterxml.jackson.core.JsonGenerator;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;

/**
 * {@code artifacts}: name -> {@code {facts?: {name: text}, index: blob, kind, member_bytes,
 * member_count, shard_names?: [name], shards: [blob], tensor_hashes?: blob}}; {@code facts} only
 * when a checked format gave some, {@code shard_names} only when WebDataset shards' file names were
 * kept (format 3), {@code tensor_hashes} only when its safetensors members' tensors were hashed
 * (format 4).
 */
final class ArtifactCodec {
    private static final String FACTS = "facts";
    private static final String INDEX = "index";
    private static final String KIND = "kind";
    private static final String MEMBER_BYTES = "member_bytes";
    private static final String MEMBER_COUNT = "member_count";
    private static final String SHARD_NAMES = "shard_names";
    private static final String SHARDS = "shards";
    private static final String TENSOR_HASHES = "tensor_hashes";
    private static final String TENSOR_HEADERS = "tensor_headers";

    private ArtifactCodec() {
    }

    static void write(JsonGenerator g, Artifact a) throws IOException {
        g.writeStartObject();
        // Written only when there are some: every artifact without them keeps its version's id.
        if (!a.facts().isEmpty()) {
            g.writeObjectFieldStart(FACTS);
            for (var f : a.facts().entrySet()) {
                g.writeStringField(f.getKey(), f.getValue());
            }
            g.writeEndObject();
        }
        g.writeFieldName(INDEX);
        BlobRefCodec.write(g, a.index());
        g.writeStringField(KIND, a.kind().json());
        g.writeNumberField(MEMBER_BYTES, a.memberBytes());
        g.writeNumberField(MEMBER_COUNT, a.memberCount());
        if (!a.shardNames().isEmpty()) {
            g.writeArrayFieldStart(SHARD_NAMES);
            for (String n : a.shardNames()) {
                g.writeString(n);
            }
            g.writeEndArray();
        }
        g.writeArrayFieldStart(SHARDS);
        for (BlobRef shard : a.shards()) {
            BlobRefCodec.write(g, shard);
        }
        g.writeEndArray();
        if (a.tensorHashes() != null) {
            g.writeFieldName(TENSOR_HASHES);
            BlobRefCodec.write(g, a.tensorHashes());
        }
        if (a.tensorHeaders() != null) {
            g.writeFieldName(TENSOR_HEADERS);
            BlobRefCodec.write(g, a.tensorHeaders());
        }
        g.writeEndObject();
    }

    static SortedMap<String, Artifact> readAll(StrictJson.Obj artifacts) {
        return artifacts.named("artifact", ArtifactCodec::read);
    }

    private static Artifact read(StrictJson.Obj a) {
        a.allow(FACTS, INDEX, KIND, MEMBER_BYTES, MEMBER_COUNT, SHARD_NAMES, SHARDS, TENSOR_HASHES, TENSOR_HEADERS);
        java.util.SortedMap<String, String> facts = new java.util.TreeMap<>();
        if (a.get(FACTS) != null) {
            StrictJson.Obj f = a.object(FACTS);
            for (var e : f.fields()) {
                if (facts.put(e.getKey(), f.string(e)) != null) {
                    throw f.corrupted(f.at(e.getKey()), "duplicate fact '" + e.getKey() + "'");
                }
            }
        }
        BlobRef index = BlobRefCodec.readObject(a.object(INDEX));
        String k = a.string(KIND);
        ArtifactKind kind = a.check(a.at(KIND), () -> ArtifactKind.fromJson(k));
        long memberBytes = a.integer(MEMBER_BYTES);
        long memberCount = a.integer(MEMBER_COUNT);
        StrictJson.Arr list = a.array(SHARDS);
        List<BlobRef> shards = new ArrayList<>(list.size());
        for (int i = 0; i < list.size(); i++) {
            shards.add(BlobRefCodec.readObject(list.object(i)));
        }
        List<String> names = new ArrayList<>();
        if (a.get(SHARD_NAMES) != null) {
            StrictJson.Arr n = a.array(SHARD_NAMES);
            for (int i = 0; i < n.size(); i++) {
                names.add(n.string(i));
            }
            if (names.isEmpty()) {
                throw a.corrupted(a.at(SHARD_NAMES), "is empty (written only when there are names)");
            }
        }
        BlobRef tensorHashes = a.get(TENSOR_HASHES) == null ? null : BlobRefCodec.readObject(a.object(TENSOR_HASHES));
        BlobRef tensorHeaders = a.get(TENSOR_HEADERS) == null ? null : BlobRefCodec.readObject(a.object(TENSOR_HEADERS));
        return a.check(a.path(), () -> new Artifact(kind, shards, index, memberCount, memberBytes, facts, names,
                tensorHashes, tensorHeaders));
    }
}
