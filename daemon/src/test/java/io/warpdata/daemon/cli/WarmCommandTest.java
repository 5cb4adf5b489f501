package io.warpdata.daemon.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.warpdata.daemon.control.protocol.WarmCall;
import org.junit.jupiter.api.Test;

/** What warm's last line says of the cache, from what warpd answered. */
class WarmCommandTest {
    private static WarmCall.Reply reply(long done, long total, boolean truncated, Boolean fits) {
        return new WarmCall.Reply(done, total, done, 1, 1, 0, "ws/name", "ab".repeat(32), truncated, 1.5, fits);
    }

    @Test
    void inCacheOnlyWhenWarpdSaysItFits() {
        assertThat(WarmCommand.summary(reply(1000, 1000, false, true), false))
                .isEqualTo("warmed ws/name@abababababab: 1.0 KB in cache (1.0 KB fetched now) in 1.5 s");
        assertThat(WarmCommand.summary(reply(10, 1000, false, false), true))
                .contains("10 B kept in the cache of the 1.0 KB asked, the rest did not fit");
        // Audit 42: a warpd before "fits" answered none, and warm said "in cache" of a cache that
        // held nothing.
        assertThat(WarmCommand.summary(reply(1000, 1000, false, null), false))
                .contains("1.0 KB read through (").doesNotContain("in cache");
        assertThat(WarmCommand.summary(reply(500, 1000, true, null), false))
                .contains("500 B read through (", "(stopped at --max-bytes)").doesNotContain("in cache");
        assertThat(WarmCommand.summary(reply(500, 1000, true, true), false)).contains("500 B in cache (", "(stopped at");
    }
}
