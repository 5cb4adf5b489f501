package io.warpdata.manifest;

import com.fasterxml.jackson.core.JsonGenerator;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/** {@code bindings}: {@code [{artifact, column, ref_type, table}]}, a table column naming members of an artifact. */
final class BindingCodec {
    private static final String ARTIFACT = "artifact";
    private static final String COLUMN = "column";
    private static final String REF_TYPE = "ref_type";
    private static final String TABLE = "table";

    private BindingCodec() {
    }

    static void write(JsonGenerator g, Binding b) throws IOException {
        g.writeStartObject();
        g.writeStringField(ARTIFACT, b.artifact());
        g.writeStringField(COLUMN, b.column());
        g.writeStringField(REF_TYPE, b.refType().json());
        g.writeStringField(TABLE, b.table());
        g.writeEndObject();
    }

    static List<Binding> readAll(StrictJson.Arr bindings) {
        List<Binding> out = new ArrayList<>(bindings.size());
        for (int i = 0; i < bindings.size(); i++) {
            StrictJson.Obj b = bindings.object(i).allow(ARTIFACT, COLUMN, REF_TYPE, TABLE);
            String artifact = b.component(ARTIFACT);
            String column = b.string(COLUMN);
            if (column.isEmpty()) {
                throw b.corrupted(b.at(COLUMN), "empty column name");
            }
            String r = b.string(REF_TYPE);
            RefType refType = b.check(b.at(REF_TYPE), () -> RefType.fromJson(r));
            String table = b.component(TABLE);
            out.add(b.check(b.path(), () -> new Binding(table, column, artifact, refType)));
        }
        return out;
    }
}
