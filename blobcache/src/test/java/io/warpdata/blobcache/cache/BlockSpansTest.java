package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlockHashList;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Byte ranges of members become the block spans a warm covers: sorted, merged, bounded. */
class BlockSpansTest {
    /** 10 blocks of 4 KiB, the last one 1 KiB. */
    private static final BlockHashList LIST = BlockHashList.of(new byte[9 * 4096 + 1024], 4096);

    private static List<List<Integer>> spans(long maxBytes, long[]... ranges) {
        return Warmer.blockSpans(LIST, List.of(ranges), maxBytes).stream().map(s -> List.of(s[0], s[1])).toList();
    }

    @Test
    void membersBecomeTheBlocksTheyLieInSortedAndMerged() {
        assertThat(spans(Long.MAX_VALUE, new long[] {20_000, 20_100}, new long[] {100, 5_000}, new long[] {4_096, 8_192}))
                .containsExactly(List.of(0, 2), List.of(4, 5));
        assertThat(spans(Long.MAX_VALUE, new long[] {8_000, 9_000}, new long[] {8_100, 12_000}))
                .as("overlapping members").containsExactly(List.of(1, 3));
        assertThat(spans(Long.MAX_VALUE, new long[] {36_000, 40_000})).as("to the short last block")
                .containsExactly(List.of(8, 10));
        assertThat(spans(Long.MAX_VALUE, new long[] {5, 5})).as("an empty member needs no block").isEmpty();
    }

    @Test
    void theBudgetCutsOffInBlobOrderAtWholeBlocks() {
        assertThat(spans(3 * 4096, new long[] {0, 4_096}, new long[] {10_000, 30_000}))
                .containsExactly(List.of(0, 1), List.of(2, 4));
        assertThat(spans(4095, new long[] {0, 100})).isEmpty();
    }
}
