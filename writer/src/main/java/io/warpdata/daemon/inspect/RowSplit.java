package io.warpdata.daemon.inspect;

import java.util.ArrayList;
import java.util.List;

/**
 * The one rule that decides which rows of a table a rank reads, and which of those a DataLoader
 * worker inside the rank reads. {@code warpctl stream --shard}, the {@code table.batches} control
 * operation (the Python package {@code warpdata}, and through it the {@code warpctl init} stub) all
 * call it, so their splits are identical.
 *
 * <p>Rows are numbered across the table's Parquet files in manifest order and file order. The
 * split is deterministic at the shard-file level (seed 000, E2): with at least as many files as
 * ranks, each file goes to the rank in whose even share of the rows its middle row falls, so a
 * rank reads one contiguous run of whole files, provided every rank gets a file and none gets more
 * than 25% over its share. Otherwise each rank reads one contiguous run of rows
 * ({@code total * rank / world} up to {@code total * (rank + 1) / world}). Never round-robin:
 * contiguous rows name contiguous members, which sit one after another in the tar shards.
 *
 * <p>Workers split their rank's rows by the same rule, applied to the parts of the files that
 * lie in the rank's run. Every row goes to exactly one (rank, worker). ({@link #even} is the
 * other split, for distributed training: as many rows on every rank, a few read twice.)
 */
public final class RowSplit {
    private RowSplit() {
    }

    /** Rows {@code [start, end)}, by whole files or as a plain row range. */
    public record Range(long start, long end, boolean wholeFiles) {
        public long rows() {
            return end - start;
        }

        /** How the range was chosen, as the tools print it. */
        public String how() {
            return wholeFiles ? "whole files" : "row range";
        }
    }

    /**
     * The rows rank {@code rank} of {@code world} reads.
     *
     * @param fileRows rows per file, in manifest order
     * @throws IllegalArgumentException unless {@code 0 <= rank < world}
     */
    public static Range of(long[] fileRows, int rank, int world) {
        requireRank(rank, world);
        long total = total(fileRows);
        if (world > 1 && fileRows.length >= world && total > 0) {
            long[] first = new long[world];
            long[] last = new long[world];
            java.util.Arrays.fill(first, -1);
            long start = 0;
            for (long n : fileRows) {
                int owner = (int) Math.min(world - 1, (2 * start + n) * world / (2 * total));
                if (first[owner] < 0) {
                    first[owner] = start;
                }
                last[owner] = start + n;
                start += n;
            }
            long share = (total + world - 1) / world;
            boolean even = true;
            for (int r = 0; r < world && even; r++) {
                even = first[r] >= 0 && (last[r] - first[r]) * 4 <= share * 5;
            }
            if (even) {
                return new Range(first[rank], last[rank], true);
            }
        }
        return new Range(total * rank / world, total * (rank + 1) / world, false);
    }

    /**
     * The rows worker {@code worker} of {@code workers} of rank {@code rank} reads when every rank
     * must read as many rows, and every worker as many as the same worker of every other rank
     * (distributed training: a rank with fewer batches than the others leaves their collectives
     * waiting at the end of the epoch, audit 24). Ranks read plain row ranges (never whole files:
     * those may differ by a quarter of a share), which differ by at most one row; a rank one row
     * short reads its first row once more, as torch's DistributedSampler pads, so that every rank
     * reads {@code ceil(total / world)} rows. Its workers split those positions as row ranges, so
     * each worker's count is the same on every rank. Every row is read at least once; at most
     * {@code world - 1} rows twice (a table of fewer rows than ranks: each rank reads one).
     *
     * @return the row ranges to read, in order (the padded row last); empty for an empty table
     * @throws IllegalArgumentException unless {@code 0 <= rank < world} and {@code 0 <= worker < workers}
     */
    public static List<Range> even(long[] fileRows, int rank, int world, int worker, int workers) {
        requireRank(rank, world);
        if (workers < 1 || worker < 0 || worker >= workers) {
            throw new IllegalArgumentException("worker " + worker + " is not in [0, " + workers + ")");
        }
        long total = total(fileRows);
        if (total == 0) {
            return List.of();
        }
        long start = total * rank / world;
        long n = total * (rank + 1) / world - start;
        long share = (total + world - 1) / world;
        long a = share * worker / workers;
        long b = share * (worker + 1) / workers;
        List<Range> out = new ArrayList<>(2);
        if (a < Math.min(b, n)) {
            out.add(new Range(start + a, start + Math.min(b, n), false));
        }
        if (b > Math.max(a, n)) {
            // share - n is 0 or 1: one row, this rank's first (a rank of none: the row at its place,
            // which the next rank reads, so no row is read by more than ceil(world / total) ranks).
            out.add(new Range(start, start + 1, false));
        }
        return out;
    }

    /**
     * The rows worker {@code worker} of {@code workers} inside rank {@code rank} of {@code world}
     * reads: the rank's range split again by the same rule, over the parts of the files inside it.
     *
     * @throws IllegalArgumentException unless {@code 0 <= rank < world} and {@code 0 <= worker < workers}
     */
    public static Range of(long[] fileRows, int rank, int world, int worker, int workers) {
        Range mine = of(fileRows, rank, world);
        if (workers < 1 || worker < 0 || worker >= workers) {
            throw new IllegalArgumentException("worker " + worker + " is not in [0, " + workers + ")");
        }
        if (workers == 1) {
            return mine;
        }
        List<Long> parts = new ArrayList<>();
        long start = 0;
        for (long n : fileRows) {
            long from = Math.max(start, mine.start());
            long to = Math.min(start + n, mine.end());
            if (to > from) {
                parts.add(to - from);
            }
            start += n;
        }
        Range sub = of(parts.stream().mapToLong(Long::longValue).toArray(), worker, workers);
        return new Range(mine.start() + sub.start(), mine.start() + sub.end(), mine.wholeFiles() && sub.wholeFiles());
    }

    private static void requireRank(int rank, int world) {
        if (world < 1 || rank < 0 || rank >= world) {
            throw new IllegalArgumentException("rank " + rank + " is not in [0, " + world + ")");
        }
    }

    /** The rows of all files. */
    private static long total(long[] fileRows) {
        long total = 0;
        for (long n : fileRows) {
            if (n < 0) {
                throw new IllegalArgumentException("a file with " + n + " rows");
            }
            total += n;
        }
        return total;
    }
}
