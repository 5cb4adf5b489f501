package io.warpdata.manifest;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** A table: Parquet shards, in order, and the schema they share. */
public record Table(List<TableShard> shards, List<Column> schema) {
    public static final String FORMAT = "parquet";

    public Table {
        shards = List.copyOf(shards);
        schema = List.copyOf(schema);
        Set<String> seen = new HashSet<>();
        for (TableShard s : shards) {
            if (!seen.add(s.path())) {
                throw new ManifestValidationException("shards", "duplicate shard name '" + s.path() + "'");
            }
        }
        Set<String> columns = new HashSet<>();
        for (Column c : schema) {
            if (!columns.add(c.name())) {
                throw new ManifestValidationException("schema", "duplicate column name '" + c.name() + "'");
            }
        }
    }

    public long rowCount() {
        return shards.stream().mapToLong(TableShard::rowCount).sum();
    }

    public long byteSize() {
        return shards.stream().mapToLong(s -> s.blob().size()).sum();
    }
}
