package io.warpdata.daemon.cli;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** How {@code warpctl cache stats} prints a value. */
class CacheStatsTextTest {
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    @Test
    void aCacheInMemoryHasNoDirectoryOrDiskRatherThanNull() {
        // audit 33: --mode remote printed "dir null" and "free_bytes null".
        assertThat(CacheCommand.Stats.show("dir", JSON.nullNode())).isEqualTo("(none: the cache is in memory)");
        assertThat(CacheCommand.Stats.show("free_bytes", JSON.nullNode())).isEqualTo("(none: the cache is in memory)");
        assertThat(CacheCommand.Stats.show("size_bytes", JSON.numberNode(2_000_000L))).isEqualTo("2.0 MB (2000000)");
        assertThat(CacheCommand.Stats.show("hit_rate", JSON.numberNode(0.5))).isEqualTo("50.0%");
    }
}
