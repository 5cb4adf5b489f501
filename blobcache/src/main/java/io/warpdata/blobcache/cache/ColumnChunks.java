package io.warpdata.blobcache.cache;

import java.util.Arrays;

/**
 * Where a Parquet file's column chunks lie: sorted, non-overlapping byte ranges
 * {@code [start, end)}, as its footer says ({@link ParquetFooter}). {@link #UNKNOWN} for a blob
 * that is not Parquet, or whose footer could not be read: read-ahead then goes on as for any blob.
 * Immutable; {@link #weight} is what it costs to keep (two longs per chunk).
 */
final class ColumnChunks {
    /** Not Parquet, or a footer that could not be read: nothing bounds read-ahead. */
    static final ColumnChunks UNKNOWN = new ColumnChunks(new long[0], new long[0]);

    private final long[] starts;
    private final long[] ends;

    private ColumnChunks(long[] starts, long[] ends) {
        this.starts = starts;
        this.ends = ends;
    }

    /**
     * The chunks {@code [starts[i], ends[i])} in any order, or {@link #UNKNOWN} if one is empty or
     * negative or two overlap (a footer that does not describe a real file).
     */
    static ColumnChunks of(long[] starts, long[] ends, int n) {
        if (n == 0) {
            return UNKNOWN;
        }
        long[] s = Arrays.copyOf(starts, n);
        long[] e = Arrays.copyOf(ends, n);
        boolean sorted = true;
        for (int i = 1; i < n && sorted; i++) {
            sorted = s[i - 1] <= s[i];
        }
        if (!sorted) {
            // Writers put chunks in file order; sorting is for the odd one that does not.
            Integer[] order = new Integer[n];
            for (int i = 0; i < n; i++) {
                order[i] = i;
            }
            Arrays.sort(order, (a, b) -> Long.compare(starts[a], starts[b]));
            for (int i = 0; i < n; i++) {
                s[i] = starts[order[i]];
                e[i] = ends[order[i]];
            }
        }
        for (int i = 0; i < n; i++) {
            if (s[i] < 0 || e[i] <= s[i] || (i > 0 && s[i] < e[i - 1])) {
                return UNKNOWN;
            }
        }
        return new ColumnChunks(s, e);
    }

    boolean known() {
        return starts.length > 0;
    }

    int count() {
        return starts.length;
    }

    long start(int i) {
        return starts[i];
    }

    long end(int i) {
        return ends[i];
    }

    /**
     * How many chunks start at or before {@code pos}: grows by one at each chunk a forward scan
     * enters, so the difference between two positions is how many chunks a stream went through.
     */
    int ordinal(long pos) {
        int i = Arrays.binarySearch(starts, pos);
        return i >= 0 ? i + 1 : -i - 1;
    }

    /**
     * Where the region holding {@code pos} ends: the end of its column chunk, or, between chunks
     * (the file's header, page indexes), the start of the next one; {@link Long#MAX_VALUE} after
     * the last chunk (the footer: nothing to bound).
     */
    long regionEnd(long pos) {
        int k = ordinal(pos);
        if (k > 0 && pos < ends[k - 1]) {
            return ends[k - 1];
        }
        return k < starts.length ? starts[k] : Long.MAX_VALUE;
    }

    /** Memory this layout holds, in bytes (for the bound on all layouts kept). */
    int weight() {
        return 16 * starts.length + 32;
    }

    @Override
    public String toString() {
        return known() ? starts.length + " column chunks [" + starts[0] + ", " + ends[ends.length - 1] + ")" : "unknown";
    }
}
