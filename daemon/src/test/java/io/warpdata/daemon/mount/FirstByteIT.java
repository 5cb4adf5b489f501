package io.warpdata.daemon.mount;

import static org.assertj.core.api.Assertions.assertThat;

import io.warpdata.store.BlobStore;
import io.warpdata.store.FaultStore;
import io.warpdata.manifest.DatasetId;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Time to first byte through a real mount (warpd from the shaded jar, the kernel's own path walk
 * through the latest link) when the store answers every GET one round trip late: S3Proxy with
 * {@code delayGets}. The daemon has run a while (it served another dataset of the workspace, so
 * the workspace is known and its code warm); the dataset read is then published by another
 * machine and nothing of it is cached. Counted at the server: the round trips that waited for
 * one another before the byte was there ({@link FaultStore#chain}), which the delay makes
 * independent of the machine's speed; the elapsed time is printed beside them.
 */
class FirstByteIT {
    /** Far longer than warpd's, S3Proxy's and the kernel's own work between two requests. */
    private static final Duration RTT = Duration.ofMillis(250);

    @Test
    void firstByteOfANewDatasetThroughItsLatestLinkWaitsForFourRoundTrips() throws IOException {
        try (MountedStore m = MountedStore.start("it-ttfb")) {
            publish(m, "first", 1);
            warmUp(m.mount.resolve("lab/first/images/cat/img1.jpg"));
            publish(m, "fresh", 2);
            m.s3.resetCounters();
            m.s3.faults().delayGets(RTT);

            long start = System.nanoTime();
            int first = firstByte(m.mount.resolve("lab/fresh/images/cat/img1.jpg"));
            long end = System.nanoTime();
            m.s3.faults().clear();

            byte[] expected = Files.readAllBytes(m.work.resolve("src-fresh/images/cat/img1.jpg"));
            assertThat((byte) first).isEqualTo(expected[0]);
            List<FaultStore.Request> chain = FaultStore.chain(m.s3.counters().timeline, end);
            System.out.printf("first byte through the mount: %d serial round trips of %d ms (%.1f RTT elapsed), %d requests:%n",
                    chain.size(), RTT.toMillis(), (end - start) / (double) RTT.toNanos(), m.s3.counters().timeline.size());
            m.s3.counters().timeline.forEach(r -> System.out.printf("  %6.1f .. %6.1f RTT  %s%n",
                    (r.startNanos() - start) / (double) RTT.toNanos(), (r.endNanos() - start) / (double) RTT.toNanos(),
                    r.what()));
            assertThat(chain).as("round trips one after another").hasSize(4);
        }
    }

    /** {@code lab/name}: images and a table, published straight into the store (not through warpd). */
    private static void publish(MountedStore m, String name, int variant) {
        Path src = m.work.resolve("src-" + name);
        SampleData.writeParquet(src, 100, variant);
        SampleData.writeImages(src.resolve("images"), variant);
        try (BlobStore store = m.s3.openStore("it-ttfb")) {
            SampleData.publish(store, m.work, new DatasetId("lab", name), src, true);
        }
    }

    /**
     * The warm-up read: the workspace did not exist when the mount started, and "no such
     * workspace" is trusted for a second (the catalog's negative TTL), so a publish that lands
     * within it is seen a moment later. Retried for up to 10 s; the measured read is not.
     */
    private static void warmUp(Path file) throws IOException {
        long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (true) {
            try {
                firstByte(file);
                return;
            } catch (java.nio.file.NoSuchFileException e) {
                if (System.nanoTime() > until) {
                    throw e;
                }
                try {
                    Thread.sleep(200);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /** Opens {@code file} and reads its first byte, as a program would. */
    private static int firstByte(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file)) {
            ByteBuffer one = ByteBuffer.allocate(1);
            assertThat(ch.read(one)).isEqualTo(1);
            return one.get(0);
        }
    }
}
