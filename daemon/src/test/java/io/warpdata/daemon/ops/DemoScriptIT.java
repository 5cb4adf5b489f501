package io.warpdata.daemon.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * scripts/demo end to end (S3Proxy, publish, warpd, reads through the mount), then
 * scripts/demo stop, which must leave no mount and none of the processes it started.
 */
class DemoScriptIT {
    private static final Duration TIMEOUT = Duration.ofMinutes(5);

    @TempDir
    Path demo;

    @AfterEach
    void stopWhateverTheDemoLeft() throws Exception {
        demo("stop");
    }

    @Test
    void demoShowsTheMountedDatasetAndStopLeavesNothingBehind() throws Exception {
        ScriptRun start = demo("start");

        assertThat(start.exitCode()).as(start.toString()).isZero();
        long warpd = pid("warpd");
        long s3proxy = pid("s3proxy");
        assertThat(ProcessHandle.of(warpd)).as("warpd runs after the demo returns").isPresent();
        assertThat(mountinfo()).contains(" " + demo.resolve("mnt") + " ");
        // The DuckDB query over the mounted Parquet: 16 train and 4 val images per class.
        assertThat(start.stdout()).contains("cat   | train | 16", "fish  | val   | 4");
        // The PNG read through the mount: its magic bytes, and the same hash as the source.
        assertThat(start.stdout()).contains("89 50 4e 47");
        List<String> hashes = start.stdout().lines().filter(l -> l.endsWith("cat_000.png"))
                .filter(l -> l.matches("[0-9a-f]{64}  .*")).map(l -> l.substring(0, 64)).toList();
        assertThat(hashes).hasSize(2).containsOnly(hashes.get(0));
        // warpctl against the demo's warpd: the exact command a user can copy, and its output.
        String sock = demo.resolve("warpd.sock").toString();
        assertThat(start.stdout()).contains("$ scripts/warpctl --socket " + sock + " status\n", "$ scripts/warpctl --socket " + sock + " cache stats\n")
                .containsPattern("warpd \\S+, up ")
                .contains("  mount:      " + demo.resolve("mnt"))
                .contains("  store:      reachable");
        String stats = start.stdout().substring(start.stdout().indexOf("$ scripts/warpctl --socket " + sock + " cache stats\n"));
        assertThat(stats).containsPattern("hit_rate\\s+\\d+\\.\\d%")
                .containsPattern("size_bytes\\s+.+ \\([1-9]\\d*\\)")
                .containsPattern("gets_issued\\s+[1-9]");
        assertThat(start.stdout()).as("the closing hint names the socket")
                .contains("scripts/warpctl --socket " + sock + " status", "export WARP_SOCKET=" + sock);

        ScriptRun stop = demo("stop");

        assertThat(stop.exitCode()).as(stop.toString()).isZero();
        assertThat(mountinfo()).doesNotContain(demo.resolve("mnt").toString());
        assertThat(ProcessHandle.of(warpd).map(ProcessHandle::isAlive)).isNotEqualTo(java.util.Optional.of(true));
        assertThat(ProcessHandle.of(s3proxy).map(ProcessHandle::isAlive)).isNotEqualTo(java.util.Optional.of(true));
        assertThat(demo.resolve("warpd.pid")).doesNotExist();
        assertThat(demo.resolve("s3proxy.pid")).doesNotExist();
    }

    private long pid(String name) throws Exception {
        return Long.parseLong(Files.readString(demo.resolve(name + ".pid")).strip());
    }

    private static String mountinfo() throws Exception {
        return Files.readString(Path.of("/proc/self/mountinfo"));
    }

    private ScriptRun demo(String command) throws Exception {
        return ScriptRun.run(List.of(ScriptRun.repoRoot().resolve("scripts/demo").toString(), command),
                Map.of("WARP_DEMO_DIR", demo.toString(), "WARP_JAR", ScriptRun.builtJar().toString()), TIMEOUT);
    }
}
