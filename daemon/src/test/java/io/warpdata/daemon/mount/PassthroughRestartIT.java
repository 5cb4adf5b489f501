package io.warpdata.daemon.mount;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warpdata.manifest.DatasetId;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A passthrough copy outlives a restart of warpd: the restarted daemon hashes it against its
 * name before serving it, and then the kernel reads it with no FUSE READ and no new copy; a copy
 * altered on disk while warpd was stopped is deleted, and the file reads right, through warpd.
 */
class PassthroughRestartIT {
    private static final DatasetId DATASET = new DatasetId("pt", "restart");
    private static final ObjectMapper JSON = new ObjectMapper();

    private static MountedStore m;
    private static Path src;

    @BeforeAll
    static void publishAndMount() throws IOException {
        m = MountedStore.serve("it-passthrough-restart");
        src = m.writeSample("src", 400_000, 12, 0);
        m.publish(DATASET, src);
        m.mount("--passthrough", "on");
    }

    @AfterAll
    static void stop() throws IOException {
        if (m != null) {
            m.close();
        }
    }

    @Test
    void aCopyIsServedAgainAfterARestartOnceItHashesToItsNameAndAnAlteredOneIsDeleted() throws Exception {
        String[] v = Files.readString(Path.of("/proc/sys/kernel/osrelease")).trim().split("[.-]");
        assumeTrue(Integer.parseInt(v[0]) > 6 || (Integer.parseInt(v[0]) == 6 && Integer.parseInt(v[1]) >= 9),
                "Linux 6.9+ only");
        byte[] want0 = Files.readAllBytes(src.resolve("main/part-0.parquet"));
        byte[] want1 = Files.readAllBytes(src.resolve("main/part-1.parquet"));
        Path shard0 = m.mount.resolve("pt/restart/main/part-0.parquet");
        Path shard1 = m.mount.resolve("pt/restart/main/part-1.parquet");
        Path copies = m.cache.resolve("v1/copies");
        readUntilCopied(shard0, want0, copies);
        readUntilCopied(shard1, want1, copies);

        m.stopWarpds();
        Path altered = copyOf(copies, want1);
        altered.toFile().setWritable(true, true);
        byte[] bad = want1.clone();
        bad[bad.length / 2] ^= 1;
        Files.write(altered, bad);
        m.mount("--passthrough", "on"); // the same cache directory

        JsonNode adopted = stats(s -> s.path("read").path("local_copy_bytes").asLong() == want0.length
                && !Files.exists(altered));
        assertThat(adopted.path("read").path("local_copies_made").asLong()).as("nothing copied anew").isZero();
        assertThat(m.warpd().output()).contains("do not hash to its name");
        long readsBefore = adopted.path("fuse_requests").path("read").asLong();
        Files.writeString(Path.of("/proc/sys/vm/drop_caches"), "1\n");
        assertThat(Files.readAllBytes(shard0)).isEqualTo(want0);
        JsonNode after = stats(s -> s.path("read").path("passthrough_opens").asLong() >= 1);
        Thread.sleep(1500);
        after = stats(s -> true);
        assertThat(after.path("fuse_requests").path("read").asLong())
                .as("the kept copy served the read, not warpd").isEqualTo(readsBefore);
        assertThat(Files.readAllBytes(shard1)).as("the altered copy is not served").isEqualTo(want1);
    }

    private static void readUntilCopied(Path file, byte[] want, Path copies) throws Exception {
        for (int n = 0; n < 50; n++) {
            assertThat(Files.readAllBytes(file)).isEqualTo(want);
            if (copyOf(copies, want) != null) {
                return;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("no copy of " + file + " was made");
    }

    private static Path copyOf(Path copies, byte[] want) throws IOException {
        try (Stream<Path> s = Files.list(copies)) {
            return s.filter(p -> {
                try {
                    return Files.size(p) == want.length && java.util.Arrays.equals(Files.readAllBytes(p), want);
                } catch (IOException gone) {
                    return false;
                }
            }).findFirst().orElse(null);
        }
    }

    private static JsonNode stats(java.util.function.Predicate<JsonNode> ready) throws Exception {
        Path file = m.cache.resolve("stats.json");
        JsonNode s = null;
        for (int i = 0; i < 150; i++) {
            try {
                s = Files.exists(file) ? JSON.readTree(file.toFile()) : null;
            } catch (IOException torn) {
                s = null;
            }
            if (s != null && ready.test(s)) {
                return s;
            }
            Thread.sleep(100);
        }
        assertThat(s).as("stats.json was written").isNotNull();
        assertThat(ready.test(s)).as("stats.json never showed the expected counters: " + s.path("read")).isTrue();
        return s;
    }
}
