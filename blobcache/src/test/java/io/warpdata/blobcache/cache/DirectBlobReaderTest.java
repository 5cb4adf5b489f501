package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warpdata.store.FaultStore;
import io.warpdata.store.FaultStore.Call;
import io.warpdata.store.FaultStore.Fault;
import io.warpdata.store.InMemoryBlobStore;
import io.warpdata.store.StoreUnavailableException;
import io.warpdata.manifest.BlobRef;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class DirectBlobReaderTest {
    private static final int BS = 64 * 1024;
    private static final RetryPolicy FAST = new RetryPolicy(Duration.ofMillis(1), Duration.ofMillis(5), Duration.ofSeconds(5));

    private final InMemoryBlobStore memory = new InMemoryBlobStore();
    private final FaultStore store = new FaultStore(memory);

    @Test
    void readsAnyRangeVerifiedAcrossBlockBoundaries() {
        byte[] data = TestBlobs.bytes(5 * BS + 123, 1);
        BlobRef ref = TestBlobs.put(memory, data, BS);
        try (DirectBlobReader r = new DirectBlobReader(store, FAST)) {
            byte[] dst = new byte[3 * BS];
            int n = r.read(ref, BS - 10, dst, 0, dst.length);
            assertThat(n).isEqualTo(dst.length);
            assertThat(dst).isEqualTo(Arrays.copyOfRange(data, BS - 10, BS - 10 + dst.length));
            assertThat(r.metrics().getsIssued.sum()).as("one list GET + one ranged GET").isEqualTo(2);
            assertThat(store.bytes(Call.READ)).isEqualTo(4L * BS);
        }
    }

    @Test
    void readNearEndIsShortOnlyByTheBlobEnd() {
        byte[] data = TestBlobs.bytes(2 * BS + 7, 2);
        BlobRef ref = TestBlobs.put(memory, data, BS);
        try (DirectBlobReader r = new DirectBlobReader(store, FAST)) {
            byte[] dst = new byte[100];
            assertThat(r.read(ref, data.length - 7, dst, 0, 100)).isEqualTo(7);
            assertThat(Arrays.copyOf(dst, 7)).isEqualTo(Arrays.copyOfRange(data, data.length - 7, data.length));
            assertThat(r.read(ref, data.length, dst, 0, 100)).isZero();
            assertThat(r.readAll(ref)).isEqualTo(data);
        }
    }

    @Test
    void wrongBytesFromStoreRefetchedOnceThenFails() {
        byte[] data = TestBlobs.bytes(3 * BS, 3);
        BlobRef ref = TestBlobs.put(memory, data, BS);
        try (DirectBlobReader r = new DirectBlobReader(store, FAST)) {
            store.on(Call.READ).once().corrupt();
            assertThat(r.readAll(ref)).isEqualTo(data);
            assertThat(r.metrics().verificationFailures.sum()).isEqualTo(1);

            store.on(Call.READ).corrupt();
            assertThatThrownBy(() -> r.read(ref, 0, new byte[10], 0, 10))
                    .isInstanceOf(BlockVerificationException.class)
                    .hasMessageContaining(ref.id().hex());
        }
    }

    @Test
    void transient500sAreRetried() {
        byte[] data = TestBlobs.bytes(BS + 5, 4);
        BlobRef ref = TestBlobs.put(memory, data, BS);
        try (DirectBlobReader r = new DirectBlobReader(store, FAST)) {
            store.on(Call.READ).times(3).fail(Fault.UNAVAILABLE);
            assertThat(r.readAll(ref)).isEqualTo(data);
            assertThat(r.metrics().retries.sum()).isEqualTo(3);
        }
    }

    @Test
    void persistentFailureFailsWithinDeadline() {
        byte[] data = TestBlobs.bytes(BS, 5);
        BlobRef ref = TestBlobs.put(memory, data, BS);
        RetryPolicy shortDeadline = FAST.withReadDeadline(Duration.ofMillis(300));
        try (DirectBlobReader r = new DirectBlobReader(store, shortDeadline)) {
            store.on(Call.READ).fail(Fault.UNAVAILABLE);
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> r.readAll(ref)).isInstanceOf(StoreUnavailableException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(3));
        }
    }
}
