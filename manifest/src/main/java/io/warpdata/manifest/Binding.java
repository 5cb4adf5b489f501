package io.warpdata.manifest;

import java.util.Objects;

/** Links a table column whose values are member paths to the artifact holding those members. */
public record Binding(String table, String column, String artifact, RefType refType) {
    public Binding {
        Names.requireComponent("bindings.table", table);
        Objects.requireNonNull(column, "column");
        if (column.isEmpty()) {
            throw new ManifestValidationException("bindings.column", "empty column name");
        }
        Names.requireComponent("bindings.artifact", artifact);
        Objects.requireNonNull(refType, "refType");
    }
}
