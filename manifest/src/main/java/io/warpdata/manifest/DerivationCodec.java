package io.warpdata.manifest;

import com.fasterxml.jackson.core.JsonGenerator;

import java.io.IOException;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/** {@code derived_from}: {@code {dataset_id, query: {term: text}, table, version}}. */
final class DerivationCodec {
    private static final String DATASET_ID = "dataset_id";
    private static final String QUERY = "query";
    private static final String TABLE = "table";
    private static final String VERSION = "version";

    private DerivationCodec() {
    }

    static void write(JsonGenerator g, Derivation d) throws IOException {
        g.writeStartObject();
        g.writeStringField(DATASET_ID, d.parent().toString());
        g.writeObjectFieldStart(QUERY);
        for (Map.Entry<String, String> e : d.query().entrySet()) {
            g.writeStringField(e.getKey(), e.getValue());
        }
        g.writeEndObject();
        g.writeStringField(TABLE, d.table());
        g.writeStringField(VERSION, d.parentVersion().hex());
        g.writeEndObject();
    }

    static Derivation read(StrictJson.Obj o) {
        o.allow(DATASET_ID, QUERY, TABLE, VERSION);
        String idText = o.string(DATASET_ID);
        DatasetId id = o.check(o.at(DATASET_ID), () -> DatasetId.parse(idText));
        StrictJson.Obj q = o.object(QUERY);
        SortedMap<String, String> query = new TreeMap<>();
        for (Map.Entry<String, StrictJson.Value> f : q.fields()) {
            if (query.containsKey(f.getKey())) {
                throw q.corrupted(q.at(f.getKey()), "duplicate query term '" + f.getKey() + "'");
            }
            query.put(f.getKey(), q.string(f));
        }
        String table = o.string(TABLE);
        String versionText = o.string(VERSION);
        VersionHash version = o.check(o.at(VERSION), () -> new VersionHash(versionText));
        return o.check(o.path(), () -> new Derivation(id, version, table, query));
    }
}
