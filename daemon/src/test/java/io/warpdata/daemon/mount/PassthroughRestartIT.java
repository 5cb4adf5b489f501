package io.warpdata.daemon.mount;

import com.fasterxml.jackson.databind.JsonNode;
import io.warpdata.manifest.DatasetId;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static io.warpdata.daemon.mount.PassthroughChecks.copyOf;
import static io.warpdata.daemon.mount.PassthroughChecks.kernelHasPassthrough;
import static io.warpdata.daemon.mount.PassthroughChecks.readUntilCopied;
import static io.warpdata.daemon.mount.PassthroughChecks.stats;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A passthrough copy outlives a restart of warpd: the restarted daemon hashes it against its
 * name before serving it, and then the kernel reads it with no FUSE READ and no new copy; a copy
 * altered on disk while warpd was stopped is deleted, and the file reads right, through warpd.
 */
class PassthroughRestartIT {
    private static final DatasetId DATASET = new DatasetId("pt", "restart");

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
        assumeTrue(kernelHasPassthrough(), "Linux 6.9+ only");
        byte[] want0 = Files.readAllBytes(src.resolve("main/part-0.parquet"));
        byte[] want1 = Files.readAllBytes(src.resolve("main/part-1.parquet"));
        Path shard0 = m.mount.resolve("pt/restart/main/part-0.parquet");
        Path shard1 = m.mount.resolve("pt/restart/main/part-1.parquet");
        readUntilCopied(shard0, want0, m.cache);
        readUntilCopied(shard1, want1, m.cache);

        m.stopWarpds();
        Path altered = copyOf(m.cache, want1);
        altered.toFile().setWritable(true, true);
        byte[] bad = want1.clone();
        bad[bad.length / 2] ^= 1;
        Files.write(altered, bad);
        m.mount("--passthrough", "on"); // the same cache directory

        JsonNode adopted = stats(m.cache, s -> s.path("read").path("local_copy_bytes").asLong() == want0.length
                && !Files.exists(altered));
        assertThat(adopted.path("read").path("local_copies_made").asLong()).as("nothing copied anew").isZero();
        assertThat(m.warpd().output()).contains("do not hash to its name");
        long readsBefore = adopted.path("fuse_requests").path("read").asLong();
        Files.writeString(Path.of("/proc/sys/vm/drop_caches"), "1\n");
        assertThat(Files.readAllBytes(shard0)).isEqualTo(want0);
        stats(m.cache, s -> s.path("read").path("passthrough_opens").asLong() >= 1);
        Thread.sleep(1500);
        JsonNode after = stats(m.cache, s -> true);
        assertThat(after.path("fuse_requests").path("read").asLong())
                .as("the kept copy served the read, not warpd").isEqualTo(readsBefore);
        assertThat(Files.readAllBytes(shard1)).as("the altered copy is not served").isEqualTo(want1);
    }
}
