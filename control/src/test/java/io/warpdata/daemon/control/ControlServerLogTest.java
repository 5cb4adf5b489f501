package io.warpdata.daemon.control;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** What warpd logs of a client's text stays on its line: no forged lines, no terminal escapes. */
class ControlServerLogTest {
    @Test
    void aClientsTextIsOneLineWithoutControlCharacters() {
        String forged = "id <\n[main] INFO io.warpdata.daemon.warpd.WarpDaemon - FORGED unmounted /warp\n\u001b[2J\u001b]0;t\u0007";
        String shown = ControlServer.printable(forged);
        assertThat(shown).doesNotContain("\n", "\u001b", "\u0007")
                .contains("id <\\x0a[main] INFO", "\\x1b[2J", "\\x1b]0;t\\x07");
        assertThat(ControlServer.printable("plain text, caf\u00e9")).isEqualTo("plain text, caf\u00e9");
        assertThat(ControlServer.printable("\u009b31m")).isEqualTo("\\x9b31m"); // the C1 CSI
        assertThat(ControlServer.printable(null)).isEqualTo("null");
    }
}
