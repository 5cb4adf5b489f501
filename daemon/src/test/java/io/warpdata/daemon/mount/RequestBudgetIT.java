package io.warpdata.daemon.mount;

import io.warpdata.store.S3ProxyFixture;
import io.warpdata.manifest.DatasetId;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a mount costs the store in metadata requests (issue 13's request budget), counted at the
 * S3 server: (a) idle after a job used {@code ws/name}, (b) a training job reading through
 * {@code ws/name/...} without pause. Only pointer re-checks may happen, each one conditional GET
 * of one small object per link in use per pointer TTL, and never a LIST.
 *
 * <p>In the suite the window is short and the TTL 2 s, so that the mechanism is checked in
 * seconds. The figures in docs/stores.md come from the real thing:
 * {@code scripts/test -Dit.test=RequestBudgetIT -Dwarp.budget.window=600s -Dwarp.budget.ttl=30s ...}
 * (each phase prints its requests per minute).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RequestBudgetIT {
    private static final DatasetId DATASET = new DatasetId("budget", "images");
    private static final Duration WINDOW = parse(System.getProperty("warp.budget.window", "12s"));
    private static final Duration TTL = parse(System.getProperty("warp.budget.ttl", "2s"));

    private static MountedStore m;
    private static S3ProxyFixture s3;

    private static Duration parse(String text) {
        return Duration.parse("PT" + text.toUpperCase(java.util.Locale.ROOT));
    }

    @BeforeAll
    static void publishMountAndWarm() throws IOException {
        m = MountedStore.serve("it-budget");
        s3 = m.s3;
        m.publish(DATASET, m.writeSample("src", 2_000, 5, 4));
        m.mount("--pointer-ttl", TTL.toMillis() + "ms");
        // A job starts: every file read once through the latest link (the cache fills).
        // (The trailing slash makes find follow the link; without it find would list nothing.)
        Shell.Result read = Shell.bash("find " + m.mount.resolve("budget/images") + "/ -type f -print0 | xargs -0 cat | wc -c")
                .requireSuccess();
        assertThat(Long.parseLong(read.out().trim())).isPositive();
    }

    @AfterAll
    static void stop() throws IOException {
        if (m != null) {
            m.close();
        }
    }

    /** At most one re-check of the one link in use per TTL (plus one for the window's edges). */
    private static long budget() {
        return WINDOW.toMillis() / TTL.toMillis() + 1;
    }

    private static void report(String phase) {
        double minutes = WINDOW.toMillis() / 60_000.0;
        long metadata = s3.counters().metadata();
        System.out.printf("request budget, %s: %d metadata requests in %s (%.1f/min; %d LIST, %d conditional GET,"
                        + " pointer TTL %s)%n", phase, metadata, WINDOW, metadata / minutes, s3.counters().lists(),
                s3.counters().conditionalGets.sum(), TTL);
        s3.counters().metadataRequests.stream().limit(20).forEach(r -> System.out.println("  " + r));
    }

    @Test
    @Order(1)
    void anIdleMountOnlyRecheckesItsLinkWithConditionalGets() throws InterruptedException {
        s3.resetCounters();
        Thread.sleep(WINDOW.toMillis());
        report("idle");
        assertThat(s3.counters().lists()).isZero();
        // At most one re-check of the link per TTL; none at all when the kernel has let go of the
        // link (then nothing is watched): either way only conditional GETs.
        assertThat(s3.counters().metadata()).isBetween(0L, budget());
        assertThat(s3.counters().conditionalGets.sum()).isEqualTo(s3.counters().metadata());
        assertThat(s3.counters().rangedGets()).isZero();
    }

    @Test
    @Order(2)
    void aTrainingJobReadingThroughTheLatestLinkCostsNoMore() {
        s3.resetCounters();
        // Epochs over every image through ws/name/... until the window is over.
        String script = "import os, sys, time\n"
                + "root, until = sys.argv[1], time.time() + float(sys.argv[2])\n"
                + "epochs = 0\n"
                + "while time.time() < until:\n"
                + "    for d, _, files in os.walk(root):\n"
                + "        for f in files:\n"
                + "            with open(os.path.join(d, f), 'rb') as fh: fh.read()\n"
                + "    epochs += 1\n"
                + "print(epochs)\n";
        Shell.Result r = Shell.run(null, Map.of(), (int) WINDOW.toSeconds() + 120, List.of("python3", "-c", script,
                m.mount.resolve("budget/images").toString(), String.valueOf(WINDOW.toSeconds()))).requireSuccess();
        report("training (" + r.out().trim() + " epochs)");
        assertThat(Integer.parseInt(r.out().trim())).isPositive();
        assertThat(s3.counters().lists()).isZero();
        assertThat(s3.counters().metadata()).isLessThanOrEqualTo(budget());
        assertThat(s3.counters().rangedGets()).as("every byte was cached before").isZero();
    }
}
