package io.warpdata.daemon.mount;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warpdata.daemon.control.ControlClient;
import io.warpdata.daemon.control.ControlProtocol;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An order plan over more than the cache keeps, end to end: 240 files of 20-400 KB (about 50 MB
 * in tar shards of 8 MiB; a fifth of them over the 256 KiB a random read fetches on its own) read in a shuffled order through a warpd with {@code --cache-size 12M}. A plan
 * fetching blocks there has them evicted between the reads of their files and fetches them
 * again (1.3-1.6x on the bench); it fetches the files instead, each once, ahead of its reader.
 * Asserted on warpd's counters and the bytes read.
 */
class OrderPrefetchSmallCacheIT {
    private static final int CLASSES = 8;
    private static final int PER_CLASS = 30;
    private static final int FILES = CLASSES * PER_CLASS;
    private static final ObjectMapper JSON = new ObjectMapper();

    private static MountedStore store;
    private static Path src;
    private static long totalBytes;
    private static String version;

    @BeforeAll
    static void publish() throws Exception {
        store = MountedStore.start("it-order-small", "--cache-size", "12M");
        src = Files.createDirectories(store.work.resolve("src/images"));
        Random rnd = new Random(3);
        for (int c = 0; c < CLASSES; c++) {
            Path classDir = Files.createDirectories(src.resolve("c" + c));
            for (int i = 0; i < PER_CLASS; i++) {
                byte[] data = new byte[20_000 + rnd.nextInt(380_000)];
                rnd.nextBytes(data);
                Files.write(classDir.resolve(String.format("img%03d.jpg", i)), data);
                totalBytes += data.length;
            }
        }
        JsonNode p = json(store.warpctl("publish", "zoo/small", "--artifact", "images=" + src, "--shard-size", "8MiB",
                "--set-latest", "--json"));
        version = p.get("version").asText();
    }

    @AfterAll
    static void stop() throws IOException {
        if (store != null) {
            store.close();
        }
    }

    private static JsonNode json(Shell.Result r) {
        r.requireSuccess();
        try {
            return JSON.readTree(r.out());
        } catch (IOException e) {
            throw new UncheckedIOException("not JSON: " + r.out(), e);
        }
    }

    private static JsonNode call(String op) {
        return store.call(op);
    }

    private static Map<String, Long> counters() throws InterruptedException {
        return store.readCounters();
    }

    /** Every file, shuffled with {@code seed}. */
    private static List<String> shuffled(long seed) {
        List<String> order = new ArrayList<>();
        for (int c = 0; c < CLASSES; c++) {
            for (int i = 0; i < PER_CLASS; i++) {
                order.add(String.format("c%d/img%03d.jpg", c, i));
            }
        }
        Collections.shuffle(order, new Random(seed));
        return order;
    }

    /** The read counters of the warpd whose socket is {@code socket}, once they stop moving. */
    private static Map<String, Long> countersOf(Path socket) throws InterruptedException {
        Map<String, Long> last = null;
        for (int i = 0; i < 50; i++) {
            Map<String, Long> now = new TreeMap<>();
            try (ControlClient c = ControlClient.connect(socket)) {
                c.call("cache.stats", ControlProtocol.object()).path("counters").fields()
                        .forEachRemaining(e -> now.put(e.getKey(), e.getValue().asLong()));
            }
            if (now.equals(last)) {
                return now;
            }
            last = now;
            Thread.sleep(200);
        }
        return last;
    }

    /**
     * The same shuffled epoch told to a warpd whose cache keeps nothing: its directory on an 8 MiB
     * tmpfs, under the 1 GiB free-space floor (a full disk), with a 1G --cache-size that would keep
     * the plan's blocks. What is fetched ahead then waits in the 32 MiB memory tier only: the plan
     * fetched its blocks up to its 256 MiB horizon, all 50 MB at once, and most again when their
     * readers came. It goes on by file, no further than 8 MiB ahead: each file once.
     */
    @Test
    void aShuffledPlanOnADiskThatKeepsNothingFetchesEachFileOnce() throws Exception {
        Path tmpfs = Files.createDirectories(store.work.resolve("full-cache"));
        Path mnt = Files.createDirectories(store.work.resolve("full-mnt"));
        Shell.run("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", tmpfs.toString()).requireSuccess();
        WarpdProcess w = null;
        try {
            w = store.startWarpd(mnt, tmpfs, "--cache-size", "1G");
            Path images = mnt.resolve("zoo/small@" + version + "/images");
            List<String> order = shuffled(9);
            Path orderFile = store.work.resolve("order-full.txt");
            Files.write(orderFile, order.stream().map(f -> images.resolve(f).toString()).toList(), StandardCharsets.UTF_8);
            Path socket = tmpfs.resolve("warpd.sock");
            Map<String, Long> before = countersOf(socket);
            Shell.Result r = WarpdProcess.warpctl(socket, store.env(), "prefetch", "--order", orderFile.toString(),
                    "--plan", "full epoch", "--json").requireSuccess();
            JsonNode plan = JSON.readTree(r.out());
            assertThat(plan.get("members").asInt()).isEqualTo(FILES);
            assertThat(plan.get("fetches").asText()).as("%s", plan).isEqualTo("files");
            assertThat(plan.get("ahead_bytes").asLong()).as("what memory holds, not 256 MiB").isEqualTo(8L << 20);
            for (String f : order) {
                assertThat(Files.readAllBytes(images.resolve(f))).as(f).isEqualTo(Files.readAllBytes(src.resolve(f)));
            }
            Map<String, Long> after = countersOf(socket);
            Map<String, Long> d = new TreeMap<>();
            after.forEach((k, v) -> d.put(k, v - before.getOrDefault(k, 0L)));
            System.out.printf("disk that keeps nothing: %d files, %d bytes; plan %s; counters of the pass: %s%n", FILES,
                    totalBytes, plan, d);
            assertThat(d.get("read_errors")).as("%s", d).isZero();
            assertThat(d.get("cache_writes_skipped")).as("the disk kept nothing; %s", d).isPositive();
            assertThat(d.get("planned_files")).as("files fetched ahead of their reader; %s", d)
                    .isGreaterThanOrEqualTo(FILES / 2);
            assertThat(d.get("bytes_fetched")).as("bytes fetched for %d read; %s", totalBytes, d)
                    .isBetween(totalBytes, totalBytes + totalBytes / 10 + (1 << 20));
        } finally {
            if (w != null) {
                w.close();
            }
            WarpdProcess.unmount(mnt);
            Shell.run("umount", tmpfs.toString());
        }
    }

    @Test
    void aShuffledPlanOverMoreThanTheCacheKeepsFetchesEachFileOnce() throws Exception {
        Path images = store.mount.resolve("zoo/small@" + version + "/images");
        List<String> order = shuffled(8);
        Path orderFile = store.work.resolve("order.txt");
        Files.write(orderFile, order.stream().map(f -> images.resolve(f).toString()).toList(), StandardCharsets.UTF_8);

        Map<String, Long> before = counters();
        JsonNode plan = json(store.warpctl("prefetch", "--order", orderFile.toString(), "--plan", "small epoch", "--json"));
        assertThat(plan.get("members").asInt()).isEqualTo(FILES);
        assertThat(plan.get("fetches").asText()).as("%s", plan).isEqualTo("files");
        assertThat(plan.get("ahead_bytes").asLong()).as("what a 12M cache holds for it").isLessThanOrEqualTo(3L << 20);
        for (String f : order) {
            assertThat(Files.readAllBytes(images.resolve(f))).as(f).isEqualTo(Files.readAllBytes(src.resolve(f)));
        }
        Map<String, Long> after = counters();
        Map<String, Long> d = new TreeMap<>();
        after.forEach((k, v) -> d.put(k, v - before.getOrDefault(k, 0L)));
        System.out.printf("%d files, %d bytes; counters of the pass: %s%n", FILES, totalBytes, d);

        assertThat(call("stats").path("order_plans").toString()).as("the plan fetches files")
                .contains("\"name\":\"small epoch\"", "\"fetches\":\"files\"");
        assertThat(d.get("read_errors")).as("%s", d).isZero();
        assertThat(d.get("planned_files")).as("files fetched ahead of their reader; %s", d)
                .isGreaterThanOrEqualTo(FILES * 3 / 4);
        assertThat(d.get("planned_blocks")).as("no blocks fetched for the plan; %s", d).isZero();
        // Each file once (by the plan, or by its reader when it got there first), and the block
        // hash lists; the member index was read when the folder was listed.
        assertThat(d.get("bytes_fetched")).as("bytes fetched for %d read; %s", totalBytes, d)
                .isBetween(totalBytes, totalBytes + totalBytes / 20 + (1 << 20));
        assertThat(d.get("prefetch_wasted_bytes")).as("%s", d).isLessThanOrEqualTo(totalBytes / 50);
    }
}
