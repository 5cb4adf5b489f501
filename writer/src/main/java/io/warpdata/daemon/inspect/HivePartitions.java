package io.warpdata.daemon.inspect;

import io.warpdata.manifest.Column;
import io.warpdata.manifest.TableShard;
import java.util.ArrayList;
import java.util.List;

/**
 * The partition columns of a table file in Hive partition folders ({@code year=2026/cls=dog/}),
 * which live in the folder names, not in the file. Every read of a table's file by warpd (rows,
 * head, Python's batches, views) places the file in its folders and reads it with these
 * arguments, so that it has the columns DuckDB gives it reading the mount with
 * {@code hive_partitioning = true}.
 */
public final class HivePartitions {
    private HivePartitions() {
    }

    /**
     * The {@code read_parquet} arguments for {@code shard} (each after a comma), its partition
     * columns typed as the table's schema says (as publish found them reading the whole table);
     * "" for a file in the table's own folder. The file must be read at a path that ends in the
     * shard's folders.
     */
    public static String readArgs(TableShard shard, List<Column> schema) {
        if (shard.dir().isEmpty()) {
            return "";
        }
        List<String> types = new ArrayList<>();
        for (String folder : shard.dir().split("/")) {
            int eq = folder.indexOf('=');
            if (eq <= 0) {
                continue;
            }
            String key = folder.substring(0, eq);
            for (Column c : schema) {
                if (c.name().equals(key)) {
                    types.add(RowRendering.literal(key) + ": " + RowRendering.literal(c.type()));
                }
            }
        }
        return ", hive_partitioning = true" + (types.isEmpty() ? "" : ", hive_types = {" + String.join(", ", types) + "}");
    }
}
