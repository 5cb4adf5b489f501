package io.warpdata.daemon.warpd;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** A warpd command line that does not parse: two lines, as warpd's other errors, and exit 2. */
class WarpdUsageErrorTest {

    private record Run(int code, String err) {
    }

    private static Run run(String... args) {
        PrintStream saved = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            return new Run(WarpdCommand.run(args), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setErr(saved);
        }
    }

    @Test
    void versionPrintsTheVersion() {
        PrintStream saved = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        int code;
        try {
            code = WarpdCommand.run(new String[] {"--version"});
        } finally {
            System.setOut(saved);
        }
        assertThat(code).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).as("it printed nothing once").startsWith("warpd 0.1.0+");
    }

    @Test
    void aMisspeltOptionSaysSoAndSuggestsTheRightOne() {
        Run r = run("--mountt", "/tmp/x");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).startsWith("warpd: Unknown option").contains("--mount").contains("See 'warpd --help'");
        assertThat(r.err().lines().count()).isEqualTo(2);
    }

    @Test
    void aBadSizeIsOneErrorNotTheWholeUsage() {
        Run r = run("--mount", "/tmp/x", "--cache-size", "1XB");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).startsWith("warpd: ").contains("1XB").doesNotContain("Usage:");
        assertThat(r.err().lines().count()).isEqualTo(2);
    }

    @Test
    void aModeWarpdDoesNotHaveIsAUsageErrorAsABadSizeIs() {
        // audit 23: --mode offline exited 1, every other bad option value 2.
        Run r = run("--mount", "/tmp/x", "--mode", "offline");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).startsWith("warpd: ").contains("unknown cache mode 'offline'").doesNotContain("Usage:");
    }

    @Test
    void aHeapTooSmallToReadLargeFilesIsRefused() {
        // audit 23: 64-96 MiB mounted, then died on the first large read, leaving the mount dead.
        assertThat(WarpdCommand.heapTooSmall(64L << 20)).isTrue();
        assertThat(WarpdCommand.heapTooSmall(96L << 20)).isTrue();
        assertThat(WarpdCommand.heapTooSmall(155L << 20)).as("-Xmx160m as G1 reports it").isFalse();
        assertThat(WarpdCommand.heapTooSmall(384L << 20)).isFalse();
    }

    @Test
    void aHeapLeftUnboundedIsSaidOnce() {
        // audit 51: java -jar warp.jar warpd, as typed, peaked at 1.2 GB resident.
        String said = WarpdCommand.unboundedHeapWarning(java.util.List.of("--enable-native-access=ALL-UNNAMED"), 6L << 30);
        assertThat(said).startsWith("warpd: started without a heap bound").contains("6144 MiB").contains("-Xmx384m");
        assertThat(WarpdCommand.unboundedHeapWarning(java.util.List.of("-Xmx384m"), 384L << 20)).isNull();
        assertThat(WarpdCommand.unboundedHeapWarning(java.util.List.of("-XX:MaxRAMPercentage=10"), 2L << 30)).isNull();
        assertThat(WarpdCommand.unboundedHeapWarning(java.util.List.of(), 1L << 30)).as("small anyway").isNull();
    }
}
