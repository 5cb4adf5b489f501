package io.warpdata.manifest;

import com.fasterxml.jackson.core.JsonGenerator;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;

/** {@code artifacts}: name -> {@code {index: blob, kind, member_bytes, member_count, shards: [blob]}}. */
final class ArtifactCodec {
    private static final String INDEX = "index";
    private static final String KIND = "kind";
    private static final String MEMBER_BYTES = "member_bytes";
    private static final String MEMBER_COUNT = "member_count";
    private static final String SHARDS = "shards";

    private ArtifactCodec() {
    }

    static void write(JsonGenerator g, Artifact a) throws IOException {
        g.writeStartObject();
        g.writeFieldName(INDEX);
        BlobRefCodec.write(g, a.index());
        g.writeStringField(KIND, a.kind().json());
        g.writeNumberField(MEMBER_BYTES, a.memberBytes());
        g.writeNumberField(MEMBER_COUNT, a.memberCount());
        g.writeArrayFieldStart(SHARDS);
        for (BlobRef shard : a.shards()) {
            BlobRefCodec.write(g, shard);
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    static SortedMap<String, Artifact> readAll(StrictJson.Obj artifacts) {
        return artifacts.named("artifact", ArtifactCodec::read);
    }

    private static Artifact read(StrictJson.Obj a) {
        a.allow(INDEX, KIND, MEMBER_BYTES, MEMBER_COUNT, SHARDS);
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
        return a.check(a.path(), () -> new Artifact(kind, shards, index, memberCount, memberBytes));
    }
}
