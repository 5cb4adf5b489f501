package io.warpdata.daemon.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** How the order file's relative lines are named to warpd (end to end: OrderPrefetchIT). */
class PrefetchCommandTest {
    @Test
    void linesAsFindPrintsThemNameTheSameMembers() {
        assertThat(PrefetchCommand.relative("./cat/cat_000.png")).isEqualTo("cat/cat_000.png");
        assertThat(PrefetchCommand.relative("././cat//cat_000.png")).isEqualTo("cat/cat_000.png");
        assertThat(PrefetchCommand.relative("cat/./cat_000.png")).isEqualTo("cat/cat_000.png");
        assertThat(PrefetchCommand.relative("cat/cat_000.png")).isEqualTo("cat/cat_000.png");
        assertThat(PrefetchCommand.relative("../cat_000.png")).as("left for warpd to refuse").isEqualTo("../cat_000.png");
    }
}
