package io.warpdata.manifest;

import java.util.Objects;

/** One Parquet file of a table: the file name shown in the mount, its blob and row count. */
public record TableShard(String name, BlobRef blob, long rowCount) {
    public TableShard {
        Names.requireComponent("shards.name", name);
        Objects.requireNonNull(blob, "blob");
        Names.requireNonNegative("row_count", rowCount);
    }
}
