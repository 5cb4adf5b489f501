package io.warpdata.daemon.mount;

import io.warpdata.daemon.ByteSize;
import io.warpdata.manifest.DatasetId;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code warpctl status --watch} in a real terminal: tmux runs it against a real warpd while
 * files are read through the mount, and what the pane shows is read back with capture-pane. The
 * tmux server is a private one ({@code -L}), killed at the end.
 */
class StatusWatchIT {
    private static final DatasetId DATASET = new DatasetId("ops", "watched");

    private static MountedStore m;

    @BeforeAll
    static void publish() throws IOException {
        m = MountedStore.serve("it-watch");
        m.publish(DATASET, m.writeSample("src", 200_000, 5, 1));
    }

    @AfterAll
    static void cleanUp() throws IOException {
        if (m != null) {
            m.close();
        }
    }

    @Test
    void watchShowsLiveThroughputAndTheBusiestDatasetInATerminal() throws Exception {
        Path mount = m.mount;
        Path cache = m.cache;
        String tmux = "warp-watch-it-" + ProcessHandle.current().pid();
        try {
            m.mount();
            String java = ProcessHandle.current().info().command().orElse("java");
            String command = "'" + java + "' --enable-native-access=ALL-UNNAMED -jar '" + WarpdProcess.JAR
                    + "' warpctl --socket '" + cache.resolve("warpd.sock") + "' status --watch";
            Shell.run("tmux", "-L", tmux, "new-session", "-d", "-s", "watch", "-x", "120", "-y", "40", command)
                    .requireSuccess();
            try {
                String first = waitForPane(tmux, "BUSIEST DATASETS", 30);
                assertThat(first).contains("warpd " + mount, "store: reachable", "GETs in flight", "cache hit rate");

                // Read files through the mount one after another for a few seconds, so that some
                // frame falls inside the reading and shows a rate.
                AtomicBoolean reading = new AtomicBoolean(true);
                long[] bytes = new long[1];
                Thread reader = new Thread(() -> {
                    // The latest link resolved: walk does not follow the link it starts at.
                    try (Stream<Path> files = Files.walk(mount.resolve("ops/watched").toRealPath())) {
                        for (Path f : files.filter(Files::isRegularFile).sorted().toList()) {
                            bytes[0] += Files.readAllBytes(f).length;
                            Thread.sleep(60);
                        }
                    } catch (IOException | InterruptedException e) {
                        throw new IllegalStateException(e);
                    } finally {
                        reading.set(false);
                    }
                });
                reader.start();
                String live = null;
                long deadline = System.nanoTime() + 20_000_000_000L;
                while (System.nanoTime() < deadline && live == null) {
                    String pane = capture(tmux);
                    if (pane.lines().anyMatch(l -> l.contains("ops/watched") && l.matches(".*\\s[1-9][0-9.]* [KMG]?B/s\\s.*"))) {
                        live = pane;
                    }
                    Thread.sleep(200);
                }
                reader.join(60_000);
                assertThat(live).as("a frame with a non-zero read rate for ops/watched; last pane:\n" + capture(tmux))
                        .isNotNull();
                assertThat(live).containsPattern("read through the mount\\s+[1-9][0-9.]* [KMG]?B/s")
                        .containsPattern("fetched from the store\\s+\\S+ [KMG]?B/s");
                assertThat(reading.get()).isFalse();

                // Once the reads are over, the totals settle on what was read.
                Thread.sleep(2500);
                assertThat(capture(tmux)).containsPattern("ops/watched\\s+0 B/s\\s+" + Pattern.quote(ByteSize.format(bytes[0])));

                Shell.run("tmux", "-L", tmux, "send-keys", "-t", "watch", "C-c").requireSuccess();
                long gone = System.nanoTime() + 15_000_000_000L;
                while (System.nanoTime() < gone && Shell.run("tmux", "-L", tmux, "has-session", "-t", "watch").exit() == 0) {
                    Thread.sleep(200);
                }
                assertThat(Shell.run("tmux", "-L", tmux, "has-session", "-t", "watch").exit())
                        .as("Ctrl-C ends the watch (and with it the tmux session)").isNotZero();
            } finally {
                Shell.run("tmux", "-L", tmux, "kill-server");
            }
        } finally {
            m.stopWarpds();
        }
    }

    private static String waitForPane(String tmux, String text, int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        String pane = "";
        while (System.nanoTime() < deadline) {
            pane = capture(tmux);
            if (pane.contains(text)) {
                return pane;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("the pane did not show '" + text + "' within " + seconds + " s:\n" + pane);
    }

    private static String capture(String tmux) {
        return Shell.run(null, Map.of(), 30, List.of("tmux", "-L", tmux, "capture-pane", "-p", "-t", "watch")).out();
    }
}
