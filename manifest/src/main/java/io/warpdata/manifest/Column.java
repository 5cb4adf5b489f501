package io.warpdata.manifest;

import java.util.Objects;

/** One column of a table's schema: name and type as DuckDB reports it for the Parquet file. */
public record Column(String name, String type) {
    public Column {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
    }
}
