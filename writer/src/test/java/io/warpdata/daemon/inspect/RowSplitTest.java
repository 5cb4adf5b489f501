package io.warpdata.daemon.inspect;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Properties of the one row split (issue 23 item 3, seed 000 E2): for world sizes 1 to 16 and
 * 1 to 4 workers per rank, over many tables (more files than ranks, fewer, empty files, one huge
 * file), every row goes to exactly one (rank, worker), each part is one contiguous run, and whole
 * files are used when they split evenly. The same split is checked end to end against
 * {@code warpctl stream --shard} and the Python package by python/tests/test_sharding.py.
 */
class RowSplitTest {
    @Test
    void everyRowGoesToExactlyOneRankAndWorker() {
        Random rng = new Random(23);
        List<long[]> tables = new ArrayList<>(List.of(new long[]{0}, new long[]{1}, new long[]{7}, new long[]{5, 0, 5},
                new long[]{1000}, new long[]{10, 10, 10}, new long[]{3, 900, 4, 4}, new long[]{100, 100, 100, 1},
                new long[]{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9}, new long[0]));
        for (int i = 0; i < 100; i++) {
            long[] t = new long[1 + rng.nextInt(40)];
            for (int j = 0; j < t.length; j++) {
                t[j] = rng.nextInt(201);
            }
            tables.add(t);
        }
        int wholeSplits = 0;
        for (long[] fileRows : tables) {
            long total = 0;
            Set<Long> bounds = new HashSet<>(List.of(0L));
            for (long n : fileRows) {
                total += n;
                bounds.add(total);
            }
            for (int world = 1; world <= 16; world++) {
                for (int workers = 1; workers <= 4; workers++) {
                    int[] owner = new int[(int) total];
                    java.util.Arrays.fill(owner, -1);
                    for (int rank = 0; rank < world; rank++) {
                        RowSplit.Range mine = RowSplit.of(fileRows, rank, world);
                        if (workers == 1 && mine.wholeFiles()) {
                            assertThat(bounds).as("whole files end at file bounds").contains(mine.start(), mine.end());
                            wholeSplits++;
                        }
                        for (int worker = 0; worker < workers; worker++) {
                            RowSplit.Range r = RowSplit.of(fileRows, rank, world, worker, workers);
                            assertThat(r.start()).isBetween(mine.start(), mine.end());
                            assertThat(r.end()).isBetween(r.start(), mine.end());
                            for (long row = r.start(); row < r.end(); row++) {
                                assertThat(owner[(int) row]).as("row %d of %s read twice (world %d, workers %d)",
                                        row, java.util.Arrays.toString(fileRows), world, workers).isEqualTo(-1);
                                owner[(int) row] = rank * workers + worker;
                            }
                        }
                    }
                    assertThat(owner).as("every row read (%s, world %d, workers %d)",
                            java.util.Arrays.toString(fileRows), world, workers).doesNotContain(-1);
                }
            }
        }
        assertThat(wholeSplits).isGreaterThan(1000);
    }

    @Test
    void evenSplitsGiveEveryRankAndEachWorkerAsManyRowsAsTheOthersAndReadEveryRow() {
        // audit 24: 120,000 rows on rank 0 and 80,003 on rank 1 (whole files) left rank 0's last 39
        // steps all-reducing with rank 1's next epoch, then hanging. Even splits are for that use.
        Random rng = new Random(24);
        List<long[]> tables = new ArrayList<>(List.of(new long[]{0}, new long[]{1}, new long[]{7}, new long[]{5, 0, 5},
                new long[]{40_000, 40_000, 40_000, 50_000, 30_003}, new long[]{1000, 1000, 498}, new long[0]));
        for (int i = 0; i < 60; i++) {
            long[] t = new long[1 + rng.nextInt(20)];
            for (int j = 0; j < t.length; j++) {
                t[j] = rng.nextInt(301);
            }
            tables.add(t);
        }
        for (long[] fileRows : tables) {
            long total = java.util.Arrays.stream(fileRows).sum();
            for (int world = 1; world <= 12; world++) {
                for (int workers = 1; workers <= 4; workers++) {
                    int[] reads = new int[(int) total];
                    long[] perWorker = null;
                    for (int rank = 0; rank < world; rank++) {
                        long[] mine = new long[workers];
                        for (int worker = 0; worker < workers; worker++) {
                            for (RowSplit.Range r : RowSplit.even(fileRows, rank, world, worker, workers)) {
                                assertThat(r.start()).isBetween(0L, r.end());
                                assertThat(r.end()).isLessThanOrEqualTo(total);
                                for (long row = r.start(); row < r.end(); row++) {
                                    reads[(int) row]++;
                                }
                                mine[worker] += r.rows();
                            }
                        }
                        if (perWorker == null) {
                            perWorker = mine;
                        }
                        assertThat(mine).as("rank %d of %d, %d workers, %s", rank, world, workers,
                                java.util.Arrays.toString(fileRows)).containsExactly(perWorker);
                        assertThat(java.util.Arrays.stream(mine).sum()).isEqualTo(total == 0 ? 0 : (total + world - 1) / world);
                    }
                    if (total > 0) {
                        assertThat(reads).as("every row read").doesNotContain(0);
                        assertThat(java.util.Arrays.stream(reads).filter(n -> n > 1).count()).as("rows read twice")
                                .isLessThan(world);
                        assertThat(java.util.Arrays.stream(reads).max().getAsInt()).as("fewer rows than ranks: one each")
                                .isLessThanOrEqualTo(total >= world ? 2 : (int) ((world + total - 1) / total));
                    }
                }
            }
        }
        assertThatThrownBy(() -> RowSplit.even(new long[]{5}, 2, 2, 0, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RowSplit.even(new long[]{5}, 0, 2, 1, 1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void wholeFilesWhenTheySplitEvenlyElseARowRange() {
        // Two files of 25000 and 17000 rows: 2 ranks get one file each; 3 ranks get thirds.
        assertThat(RowSplit.of(new long[]{25_000, 17_000}, 1, 2)).isEqualTo(new RowSplit.Range(25_000, 42_000, true));
        assertThat(RowSplit.of(new long[]{25_000, 17_000}, 1, 3)).isEqualTo(new RowSplit.Range(14_000, 28_000, false));
        // 60 rows in 3 files of 20, 2 ranks: uneven by files (40 vs 20), so rows 0-29 and 30-59.
        assertThat(RowSplit.of(new long[]{20, 20, 20}, 0, 2)).isEqualTo(new RowSplit.Range(0, 30, false));
        // Never round-robin: each part is one run.
        assertThat(RowSplit.of(new long[]{60}, 0, 2, 1, 2)).isEqualTo(new RowSplit.Range(15, 30, false));
        assertThatThrownBy(() -> RowSplit.of(new long[]{1}, 2, 2)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RowSplit.of(new long[]{1}, 0, 1, 1, 1)).isInstanceOf(IllegalArgumentException.class);
    }
}
