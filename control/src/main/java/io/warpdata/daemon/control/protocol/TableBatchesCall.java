package io.warpdata.daemon.control.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.util.RawValue;

import java.util.List;

/**
 * {@code table.batches {dataset, table?, columns?, where?, limit?, batch_size?, rank?, world?,
 * worker?, workers?}}: a table's rows as columnar {@code batch} events, then the counts. The
 * Python package reads tables through this.
 */
public final class TableBatchesCall {
    private TableBatchesCall() {
    }

    /**
     * Absent numbers take their defaults: all rows, 1024 a batch, rank 0 of 1, worker 0 of 1.
     * {@code even}: as many rows on every rank and on each worker as on the same worker of the
     * others (distributed training; a rank one row short reads its first row again); absent or
     * false: every row once.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Request(@JsonProperty(required = true) String dataset, String table, Names columns, String where,
                          Long limit, Integer batchSize, Integer rank, Integer world, Integer worker, Integer workers,
                          Boolean even) {
        /** The one row split (every row once). */
        public Request(String dataset, String table, Names columns, String where, Long limit, Integer batchSize,
                       Integer rank, Integer world, Integer worker, Integer workers) {
            this(dataset, table, columns, where, limit, batchSize, rank, world, worker, workers, null);
        }
    }

    /**
     * One {@code "event":"batch"} line. Written by warpd only (warpctl reads tables in-process).
     *
     * @param columns {@code {name: [values]}}, already JSON (DuckDB writes it)
     * @param base64  the BLOB columns, whose values are base64; absent when none
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Batch(long rows, RawValue columns, List<String> base64) {
    }

    /** @param range the rows this (rank, worker) read */
    public record Reply(String dataset, String version, String table, long rows, long batches, long bytesRead,
                        RowRange range) {
    }

    /** @param how how the range was cut: by row groups, by rows, ... */
    public record RowRange(long start, long end, String how) {
    }
}
