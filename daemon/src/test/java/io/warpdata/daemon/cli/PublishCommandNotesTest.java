package io.warpdata.daemon.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.warpdata.daemon.control.protocol.Wire;
import io.warpdata.daemon.control.protocol.PublishCall;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What warpctl says after a publish through warpd, from what warpd answered. */
class PublishCommandNotesTest {
    private static PublishCall.Reply reply(Integer formatVersion) {
        return new PublishCall.Reply("ws/name", "ab".repeat(32), 0, 0, 0, 1, 10, 1, 0, 100, 0, true, true, List.of(),
                List.of(), "published", formatVersion);
    }

    @Test
    void aWarpdThatDoesNotSayItsFormatIsSaidToBeOlder() {
        // Audit 42: an older warpd ignored shard_files and tensor_hashes, silently.
        assertThat(PublishCommand.olderDaemonNote(reply(null), true, "0.1.0+7d493873")).hasValueSatisfying(n -> assertThat(n)
                .contains("warpd (0.1.0+7d493873) is older than this warpctl", "before commit 00a20612", "ARTIFACT.tars/", "_tensor_index.parquet",
                        "--no-daemon"));
        assertThat(PublishCommand.olderDaemonNote(reply(3), true, "0.1.0+abc")).isEmpty();
        assertThat(PublishCommand.olderDaemonNote(reply(1), true, "0.1.0+abc")).as("format 1 said").isEmpty();
        assertThat(PublishCommand.olderDaemonNote(reply(null), false, "0.1.0+old")).as("no tars nor safetensors asked").isEmpty();
    }

    @Test
    void anOlderWarpdsReplyWithoutAFormatHasNone() throws Exception {
        String old = "{\"dataset\":\"ws/name\",\"version\":\"" + "ab".repeat(32) + "\",\"summary\":\"published\"}";
        PublishCall.Reply r = Wire.reply("publish", Wire.json().readTree(old), PublishCall.Reply.class);
        assertThat(r.formatVersion()).as("no format, not 0, which is none (audit 44)").isNull();
    }
}
