package io.warpdata.manifest;

import com.fasterxml.jackson.core.JsonGenerator;

import java.io.IOException;

/** {@code stats}: {@code {total_bytes, total_members, total_rows}}. */
final class StatsCodec {
    private static final String TOTAL_BYTES = "total_bytes";
    private static final String TOTAL_MEMBERS = "total_members";
    private static final String TOTAL_ROWS = "total_rows";

    private StatsCodec() {
    }

    static void write(JsonGenerator g, Stats s) throws IOException {
        g.writeStartObject();
        g.writeNumberField(TOTAL_BYTES, s.totalBytes());
        g.writeNumberField(TOTAL_MEMBERS, s.totalMembers());
        g.writeNumberField(TOTAL_ROWS, s.totalRows());
        g.writeEndObject();
    }

    static Stats read(StrictJson.Obj s) {
        s.allow(TOTAL_BYTES, TOTAL_MEMBERS, TOTAL_ROWS);
        long bytes = s.integer(TOTAL_BYTES);
        long members = s.integer(TOTAL_MEMBERS);
        long rows = s.integer(TOTAL_ROWS);
        return s.check(s.path(), () -> new Stats(rows, bytes, members));
    }
}
