package io.warpdata.manifest;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Outside text in a message or log line stays on its line: no forged lines, no terminal escapes. */
class PrintableTest {
    @Test
    void controlCharactersAreEscapedAndTheRestKept() {
        String forged = "id <\n[main] INFO io.warpdata.daemon.warpd.WarpDaemon - FORGED unmounted /warp\n\u001b[2J\u001b]0;t\u0007";
        String shown = Printable.of(forged);
        assertThat(shown).doesNotContain("\n", "\u001b", "\u0007")
                .contains("id <\\x0a[main] INFO", "\\x1b[2J", "\\x1b]0;t\\x07");
        assertThat(Printable.of("plain text, caf\u00e9")).isEqualTo("plain text, caf\u00e9");
        assertThat(Printable.of("\u009b31m")).isEqualTo("\\x9b31m"); // the C1 CSI
        assertThat(Printable.of("\u007f")).isEqualTo("\\x7f");
        assertThat(Printable.of(null)).isEqualTo("null");
    }
}
