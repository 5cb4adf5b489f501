package io.warpdata.daemon.mount;

import com.fasterxml.jackson.databind.JsonNode;
import io.warpdata.manifest.DatasetId;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.stream.Stream;

import static io.warpdata.daemon.mount.PassthroughChecks.kernelHasPassthrough;
import static io.warpdata.daemon.mount.PassthroughChecks.stats;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Passthrough through a real mount and a real warpd with {@code --passthrough on} (Linux 6.9+, as root): a
 * Parquet shard read whole and opened again gets a verified local copy, and from then on the kernel
 * reads it (and maps it) from the copy with no FUSE READ; a shard held open in the cached mode
 * while its copy is made keeps opening (the kernel refuses mixed modes on one inode); a copy
 * deleted under an open file leaves that file reading.
 */
class PassthroughIT {
    private static final DatasetId DATASET = new DatasetId("pt", "events");

    private static MountedStore m;
    private static Path src;

    @BeforeAll
    static void publishAndMount() throws IOException {
        m = MountedStore.serve("it-passthrough");
        src = m.writeSample("src", 400_000, 11, 0);
        m.publish(DATASET, src);
        m.mount("--passthrough", "on");
    }

    @AfterAll
    static void stop() throws IOException {
        if (m != null) {
            m.close();
        }
    }


    private static Path shard(int i) {
        return m.mount.resolve("pt/events/main/part-" + i + ".parquet");
    }

    private static byte[] expected(int i) throws IOException {
        return Files.readAllBytes(src.resolve("main/part-" + i + ".parquet"));
    }

    @Test
    void aShardReadAgainIsReadAndMappedByTheKernelFromItsCopy() throws Exception {
        boolean supported = kernelHasPassthrough();
        // warpd says at mount which it is; the rest of this test needs the kernel's passthrough.
        awaitOutput(supported ? "passthrough on" : "no passthrough");
        assertThat(m.control("status").requireSuccess().out())
                .contains(supported ? "passthrough: on: " : "passthrough: unavailable: ");
        assumeTrue(supported, "Linux 6.9+ only");
        byte[] want = expected(0);
        assertThat(want.length).as("a shard large enough to be copied").isGreaterThan(64 << 10);
        readUntilCopied(0);
        assertThat(settled().path("read").path("local_copy_bytes").asLong()).isGreaterThanOrEqualTo(want.length);

        dropPageCache();
        JsonNode before = settled();
        long readsBefore = before.path("fuse_requests").path("read").asLong();
        long passBefore = before.path("read").path("passthrough_opens").asLong();
        assertThat(Files.readAllBytes(shard(0))).isEqualTo(want);
        try (FileChannel ch = FileChannel.open(shard(0), StandardOpenOption.READ)) {
            MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size());
            byte[] mapped = new byte[want.length];
            map.get(mapped);
            assertThat(mapped).isEqualTo(want);
        }
        stats(m.cache, s -> s.path("read").path("passthrough_opens").asLong() >= passBefore + 2);
        JsonNode after = settled();
        assertThat(after.path("fuse_requests").path("read").asLong())
                .as("the kernel read the copy: no FUSE READ reached warpd, even with the page cache dropped")
                .isEqualTo(readsBefore);
        // warpctl status and doctor say it runs, and what it served.
        assertThat(m.control("status").requireSuccess().out())
                .containsPattern("passthrough: on: [1-9][0-9]* open\\(s\\) served from local copies \\([1-9][0-9]* cop");
        assertThat(m.control("doctor").out()).containsPattern("passthrough +on: [1-9]");
    }

    @Test
    void aShardHeldOpenWhileItsCopyIsMadeKeepsOpeningAndGoesPassthroughOnceClosed() throws Exception {
        assumeTrue(kernelHasPassthrough(), "Linux 6.9+ only");
        byte[] want = expected(1);
        long madeBefore = settled().path("read").path("local_copies_made").asLong();
        try (FileChannel held = FileChannel.open(shard(1), StandardOpenOption.READ)) {
            // The first open, through warpd (nothing is cached yet); read whole through it.
            ByteBuffer all = ByteBuffer.allocate(want.length);
            while (all.hasRemaining() && held.read(all, all.position()) > 0) {
                // every block cached
            }
            assertThat(all.array()).isEqualTo(want);
            // Opened and closed again meanwhile: the copy is made while the first open holds the inode.
            assertThat(Files.readAllBytes(shard(1))).isEqualTo(want);
            stats(m.cache, s -> s.path("read").path("local_copies_made").asLong() > madeBefore);
            // The inode is open cached: this open must not turn passthrough (ETXTBSY).
            long passBefore = settled().path("read").path("passthrough_opens").asLong();
            assertThat(Files.readAllBytes(shard(1))).isEqualTo(want);
            ByteBuffer tail = ByteBuffer.allocate(4);
            held.read(tail, want.length - 4);
            assertThat(tail.array()).containsExactly('P', 'A', 'R', '1');
            assertThat(settled().path("read").path("passthrough_opens").asLong()).isEqualTo(passBefore);
        }
        long passBefore = settled().path("read").path("passthrough_opens").asLong();
        // Once the kernel's RELEASE of the held file reached warpd, the next open goes passthrough.
        for (int i = 0; i < 100 && stats(m.cache, s -> true).path("read").path("passthrough_opens").asLong() == passBefore; i++) {
            assertThat(Files.readAllBytes(shard(1))).isEqualTo(want);
            Thread.sleep(50);
        }
        assertThat(stats(m.cache, s -> true).path("read").path("passthrough_opens").asLong()).isGreaterThan(passBefore);
    }

    @Test
    void aCopyDeletedUnderAnOpenFileLeavesItReadingAndTheNextOpenReadsThroughWarpd() throws Exception {
        assumeTrue(kernelHasPassthrough(), "Linux 6.9+ only");
        byte[] want = expected(0);
        readUntilCopied(0);
        long passBefore = settled().path("read").path("passthrough_opens").asLong();
        try (FileChannel open = FileChannel.open(shard(0), StandardOpenOption.READ)) {
            stats(m.cache, s -> s.path("read").path("passthrough_opens").asLong() > passBefore);
            m.control("cache", "gc", "--limit", "0").requireSuccess();
            try (Stream<Path> copies = Files.list(m.cache.resolve("v1/copies"))) {
                assertThat(copies).as("gc deletes the copies").isEmpty();
            }
            dropPageCache();
            ByteBuffer all = ByteBuffer.allocate(want.length);
            while (all.hasRemaining() && open.read(all, all.position()) > 0) {
                // reads the deleted copy the kernel still holds
            }
            assertThat(all.array()).isEqualTo(want);
        }
        assertThat(Files.readAllBytes(shard(0))).isEqualTo(want);
    }

    /** stats.json once two of its writes a second apart agree on the FUSE requests and read counters. */
    private static JsonNode settled() throws Exception {
        JsonNode last = stats(m.cache, s -> true);
        for (int i = 0; i < 20; i++) {
            Thread.sleep(1100);
            JsonNode now = stats(m.cache, s -> true);
            if (now.path("fuse_requests").equals(last.path("fuse_requests")) && now.path("read").equals(last.path("read"))) {
                return now;
            }
            last = now;
        }
        throw new AssertionError("warpd's counters never settled: " + last.path("fuse_requests"));
    }

    /** Reads shard {@code i} until warpd holds a copy of it ({@link PassthroughChecks#readUntilCopied}). */
    private static void readUntilCopied(int i) throws Exception {
        PassthroughChecks.readUntilCopied(shard(i), expected(i), m.cache);
    }

    /** Drops the kernel's page cache, so that a read that is not passthrough must reach warpd. */
    private static void dropPageCache() throws IOException {
        Shell.run("sync");
        Files.writeString(Path.of("/proc/sys/vm/drop_caches"), "1\n");
    }

    private static void awaitOutput(String text) throws InterruptedException {
        for (int i = 0; i < 100 && !m.warpd().output().contains(text); i++) {
            Thread.sleep(50);
        }
        assertThat(m.warpd().output()).contains(text);
    }
}
