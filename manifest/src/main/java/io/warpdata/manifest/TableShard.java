package io.warpdata.manifest;

import java.util.Objects;

/**
 * One Parquet file of a table: the file name shown in the mount, its blob and row count, and the
 * folder it sits in below the table ({@code ""} for the table's own folder; else Hive partition
 * folders such as {@code year=2026/month=11}, kept as the writer made them so that readers with
 * {@code hive_partitioning} see the partition columns).
 */
public record TableShard(String name, BlobRef blob, long rowCount, String dir) {
    public TableShard {
        Names.requireComponent("shards.name", name);
        Objects.requireNonNull(blob, "blob");
        Names.requireNonNegative("row_count", rowCount);
        Objects.requireNonNull(dir, "dir");
        if (!dir.isEmpty()) {
            Names.requireMemberPath("shards.dir", dir);
        }
    }

    /** A file in the table's own folder. */
    public TableShard(String name, BlobRef blob, long rowCount) {
        this(name, blob, rowCount, "");
    }

    /** Its path below the table's folder: {@code dir/name}, or {@code name}. */
    public String path() {
        return dir.isEmpty() ? name : dir + "/" + name;
    }
}
