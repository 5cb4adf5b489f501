package io.warpdata.manifest;

import com.fasterxml.jackson.core.JsonGenerator;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SortedMap;

/**
 * {@code tables}: name -> {@code {format, schema: [{name, type}], shards: [{blob, dir?, name,
 * row_count}]}}; {@code dir} only for files in partition folders.
 */
final class TableCodec {
    private static final String FORMAT = "format";
    private static final String SCHEMA = "schema";
    private static final String SHARDS = "shards";
    private static final String NAME = "name";
    private static final String TYPE = "type";
    private static final String ROW_COUNT = "row_count";
    private static final String DIR = "dir";

    private TableCodec() {
    }

    static void write(JsonGenerator g, Table t) throws IOException {
        g.writeStartObject();
        g.writeStringField(FORMAT, Table.FORMAT);
        g.writeArrayFieldStart(SCHEMA);
        for (Column c : t.schema()) {
            g.writeStartObject();
            g.writeStringField(NAME, c.name());
            g.writeStringField(TYPE, c.type());
            g.writeEndObject();
        }
        g.writeEndArray();
        g.writeArrayFieldStart(SHARDS);
        for (TableShard s : t.shards()) {
            g.writeStartObject();
            BlobRefCodec.writeFields(g, s.blob());
            // Only for files in partition folders: every other version keeps its id.
            if (!s.dir().isEmpty()) {
                g.writeStringField(DIR, s.dir());
            }
            g.writeStringField(NAME, s.name());
            g.writeNumberField(ROW_COUNT, s.rowCount());
            g.writeEndObject();
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    static SortedMap<String, Table> readAll(StrictJson.Obj tables) {
        return tables.named("table", TableCodec::read);
    }

    private static Table read(StrictJson.Obj t) {
        t.allow(FORMAT, SCHEMA, SHARDS);
        String format = t.string(FORMAT);
        if (!Table.FORMAT.equals(format)) {
            throw t.corrupted(t.at(FORMAT), "unsupported table format '" + format + "' (only '" + Table.FORMAT + "')");
        }
        List<Column> schema = schema(t.array(SCHEMA));
        List<TableShard> shards = shards(t.array(SHARDS));
        return t.check(t.path(), () -> new Table(shards, schema));
    }

    private static List<Column> schema(StrictJson.Arr columns) {
        List<Column> out = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (int i = 0; i < columns.size(); i++) {
            StrictJson.Obj c = columns.object(i).allow(NAME, TYPE);
            String name = c.string(NAME);
            if (name.isEmpty()) {
                throw c.corrupted(c.at(NAME), "empty column name");
            }
            if (!names.add(name)) {
                throw c.corrupted(c.at(NAME), "duplicate column name '" + name + "'");
            }
            String type = c.string(TYPE);
            out.add(c.check(c.path(), () -> new Column(name, type)));
        }
        return out;
    }

    private static List<TableShard> shards(StrictJson.Arr shards) {
        List<TableShard> out = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (int i = 0; i < shards.size(); i++) {
            StrictJson.Obj s = shards.object(i).allow(BlobRefCodec.BLOCKS, BlobRefCodec.BYTE_SIZE, BlobRefCodec.HASH, DIR,
                    NAME, ROW_COUNT);
            BlobRef blob = BlobRefCodec.read(s);
            String dir = s.get(DIR) == null ? "" : s.string(DIR);
            if (s.get(DIR) != null) {
                s.check(s.at(DIR), () -> Names.requireMemberPath("dir", dir));
            }
            String name = s.component(NAME);
            String path = dir.isEmpty() ? name : dir + "/" + name;
            if (!names.add(path)) {
                throw s.corrupted(s.at(NAME), "duplicate shard name '" + path + "'");
            }
            long rows = s.integer(ROW_COUNT);
            out.add(s.check(s.path(), () -> new TableShard(name, blob, rows, dir)));
        }
        return out;
    }
}
