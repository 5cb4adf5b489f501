package io.warpdata.store.s3;

import io.warpdata.store.AuthenticationException;
import io.warpdata.store.BlobStore;
import io.warpdata.store.BlobStoreContract;
import io.warpdata.store.S3ProxyFixture;
import io.warpdata.store.StoreException;
import io.warpdata.store.StoreNotAnsweringException;
import io.warpdata.store.StoreUnavailableException;
import io.warpdata.store.StoreUnreachableException;
import io.warpdata.store.Versioned;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class S3BlobStoreIT extends BlobStoreContract {
    private static final AtomicInteger PREFIXES = new AtomicInteger();
    private static S3ProxyFixture s3;
    private S3BlobStore store;

    @BeforeAll
    static void startServer() {
        s3 = S3ProxyFixture.start();
    }

    @AfterAll
    static void stopServer() {
        if (s3 != null) {
            s3.close();
        }
    }

    private static S3BlobStore.Config fastRetries() {
        return S3BlobStore.Config.defaults().withRetries(4, Duration.ofMillis(10), Duration.ofMillis(50));
    }

    @BeforeEach
    void open() {
        s3.faults().clear();
        store = s3.openStore("t" + PREFIXES.incrementAndGet(), fastRetries());
    }

    @AfterEach
    void closeStore() {
        s3.faults().clear();
        store.close();
    }

    @Override
    protected BlobStore store() {
        return store;
    }

    /** S3Proxy 2.6.0 accepts a PUT whatever its If-Match / If-None-Match says (probed). */
    @Override
    protected boolean atomicConditionalWrites() {
        return false;
    }

    @Test
    void aStaleMoveIsRefusedEvenByAServerThatIgnoresConditions() {
        String key = "datasets/ws/n/latest.json";
        String first = store.putIfUnchanged(key, "a".getBytes(), null);
        store.put(key, "someone else".getBytes());
        assertThatThrownBy(() -> store.putIfUnchanged(key, "b".getBytes(), first))
                .isInstanceOf(io.warpdata.store.PointerMovedException.class);
        assertThat(store.get(key)).asString().isEqualTo("someone else");
    }

    @Test
    void theConditionalWriteProbeFindsThatS3Proxy4RefusesALosingPutAndLeavesNothing() {
        assertThat(store.enforcesConditionalWrites("warp-probe/conditional-write-1")).contains(true);
        assertThat(store.length("warp-probe/conditional-write-1")).isEmpty();
    }

    @Test
    void rereadingAnUnchangedPointerIsAConditionalGetWithoutABody() {
        store.put("datasets/ws/n/latest.json", "{\"version\":\"x\"}".getBytes());
        Versioned v = store.getIfChanged("datasets/ws/n/latest.json", null, 1024);
        s3.resetCounters();
        assertThat(store.getIfChanged("datasets/ws/n/latest.json", v.tag(), 1024)).isNull();
        assertThat(s3.counters().gets()).isEqualTo(1);
        assertThat(s3.counters().bytesServed()).as("304: no body").isZero();
    }

    @Test
    void aServerThatIsNotListeningIsUnreachableNotMerelyUnavailable() throws Exception {
        int port;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
            port = free.getLocalPort();
        }
        try (S3BlobStore dead = S3BlobStore.open("s3://" + S3ProxyFixture.BUCKET + "/x",
                java.util.Optional.of("http://127.0.0.1:" + port), fastRetries())) {
            assertThatThrownBy(() -> dead.get("k")).isInstanceOf(StoreUnreachableException.class)
                    .hasMessageContaining("cannot connect to http://127.0.0.1:" + port);
        }
    }

    @Test
    void rangedReadIsOneRangedGetServingOnlyTheRange() {
        store.put("blob", bytes(1 << 20, 7));
        s3.resetCounters();
        byte[] dst = new byte[4096];
        store.read("blob", 100_000, dst, 0, 4096);
        assertThat(s3.counters().gets()).isEqualTo(1);
        assertThat(s3.counters().rangedGets()).isEqualTo(1);
        assertThat(s3.counters().bytesServed()).isEqualTo(4096);
    }

    @Test
    void largeFileIsUploadedInPartsAndRoundTrips() throws Exception {
        Path f = tmp.resolve("big.bin");
        long size = 70L << 20;
        MessageDigest want = MessageDigest.getInstance("SHA-256");
        byte[] chunk = new byte[1 << 20];
        Random r = new Random(11);
        try (OutputStream out = Files.newOutputStream(f)) {
            for (long done = 0; done < size; done += chunk.length) {
                r.nextBytes(chunk);
                out.write(chunk);
                want.update(chunk);
            }
        }
        s3.resetCounters();
        assertThat(store.putIfAbsent("blobs/big", f)).isTrue();
        assertThat(s3.counters().parts.sum()).isEqualTo(5);
        assertThat(s3.counters().puts()).isEqualTo(1);
        assertThat(store.length("blobs/big")).hasValue(size);
        MessageDigest got = MessageDigest.getInstance("SHA-256");
        byte[] buf = new byte[8 << 20];
        for (long off = 0; off < size; off += buf.length) {
            int n = (int) Math.min(buf.length, size - off);
            store.read("blobs/big", off, buf, 0, n);
            got.update(buf, 0, n);
        }
        assertThat(HexFormat.of().formatHex(got.digest())).isEqualTo(HexFormat.of().formatHex(want.digest()));
        assertThat(store.putIfAbsent("blobs/big", f)).isFalse();
        assertThat(store.list("blobs/")).containsExactly("big");
    }

    @Test
    void wrongCredentialsAreAnAuthenticationError() {
        store.put("k", new byte[] {1});
        try (S3BlobStore bad = s3.openStore(store.describe().substring(("s3://" + s3.bucket() + "/").length()),
                fastRetries().withCredentials("wrong", "wrong-secret"))) {
            assertThatThrownBy(() -> bad.get("k")).isInstanceOf(AuthenticationException.class)
                    .hasMessageContaining("k")
                    .satisfies(e -> assertThat(((StoreException) e).nextStep()).contains("AWS_ACCESS_KEY_ID"));
        }
    }

    @Test
    void transient500And503AreRetriedThenSucceed() {
        byte[] data = bytes(1000, 5);
        store.put("k", data);
        s3.faults().failNextGetsWith500(1).failNextGetsWith503(1);
        byte[] dst = new byte[1000];
        store.read("k", 0, dst, 0, 1000);
        assertThat(dst).isEqualTo(data);
        assertThat(store.retries()).isEqualTo(2);
        assertThat(store.clientRetries()).as("what warp_store_client_retries_total reports").isEqualTo(2);
        assertThat(new io.warpdata.store.HealthCheckedStore(store, io.warpdata.store.StoreHealth.of("s3")).clientRetries())
                .as("through the health check warpd wraps it in").isEqualTo(2);
        assertThat(s3.counters().faultsInjected.sum()).isEqualTo(2);
    }

    @Test
    void aBoundedGetReadsTheObjectIntoOneArrayOfItsLength() {
        byte[] data = bytes(704_524, 13); // a member index part of 8,192 members (the 10M scale run's)
        store.put("blobs/part", data);
        var threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        assertThat(store.get("blobs/part", 32 << 20)).isEqualTo(data); // warms up the client's classes
        long before = threads.getCurrentThreadAllocatedBytes();
        byte[] got = store.get("blobs/part", 32 << 20);
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertThat(got).isEqualTo(data);
        // One array of the object's length plus the request's own objects. The SDK's
        // getObjectAsBytes allocated 5x the object (a buffer doubling to 1 MiB, then two copies):
        // arrays of 1 MiB or more that G1 allocates outside the young generation (docs/bench.md "Scale").
        assertThat(allocated).as("bytes allocated by the GET's thread").isLessThan(data.length + (1L << 20));
        // Transient failures are retried by the client; the bytes are still exact.
        s3.faults().failNextGetsWith500(1).failNextGetsWith503(1);
        assertThat(store.get("blobs/part", 32 << 20)).isEqualTo(data);
        assertThat(store.retries()).isEqualTo(2);
        // A corrupt answer has the object's length (the caller verifies the bytes).
        s3.faults().corruptNextGets(1);
        assertThat(store.get("blobs/part", 32 << 20)).hasSize(data.length).isNotEqualTo(data);
        // At the bound exactly: read; one byte under it: refused.
        assertThat(store.get("blobs/part", data.length)).isEqualTo(data);
        assertThatThrownBy(() -> store.get("blobs/part", data.length - 1))
                .isInstanceOf(io.warpdata.store.ObjectTooLargeException.class);
    }

    @Test
    void persistent500IsStoreUnavailableAfterBoundedRetries() {
        store.put("k", bytes(10, 6));
        s3.faults().failAllGets();
        assertThatThrownBy(() -> store.read("k", 0, new byte[10], 0, 10))
                .isInstanceOf(StoreUnavailableException.class)
                .hasMessageContaining("k");
        assertThat(store.retries()).isEqualTo(3);
    }

    @Test
    void aServerThatAnswersNothingFailsAfterOneAnswerTimeoutWithoutRetries() {
        store.put("k", bytes(10, 8));
        s3.faults().hangGets();
        try (S3BlobStore silent = s3.openStore(store.describe().substring(("s3://" + s3.bucket() + "/").length()),
                fastRetries().withAnswerTimeout(Duration.ofMillis(300)))) {
            for (Runnable op : new Runnable[] {
                () -> silent.read("k", 0, new byte[10], 0, 10),
                () -> silent.get("k", 1 << 20),
                () -> silent.getIfChanged("k", null, 1 << 10)}) {
                assertThatThrownBy(op::run).isInstanceOf(StoreNotAnsweringException.class)
                        .hasMessageContaining("not answering").hasMessageContaining("300 ms");
            }
            assertThat(silent.retries()).as("silence is not retried by the client: the read path decides").isZero();
        }
    }

    @Test
    void hungServerTimesOutInsteadOfBlocking() {
        store.put("k", bytes(10, 8));
        s3.faults().hangGets();
        try (S3BlobStore impatient = s3.openStore(store.describe().substring(("s3://" + s3.bucket() + "/").length()),
                fastRetries().withTimeouts(Duration.ofMillis(300), Duration.ofSeconds(2)))) {
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> impatient.read("k", 0, new byte[10], 0, 10))
                    .isInstanceOf(StoreUnavailableException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void tricklingServerFailsWithinTheCallTimeoutInsteadOfHanging() {
        byte[] data = bytes(64 << 10, 10);
        store.put("k", data);
        s3.faults().trickleGets(Duration.ofMillis(50)); // 64 KiB at 20 bytes a second: nearly an hour
        try (S3BlobStore impatient = s3.openStore(store.describe().substring(("s3://" + s3.bucket() + "/").length()),
                fastRetries().withTimeouts(Duration.ofMillis(500), Duration.ofSeconds(2)))) {
            for (Runnable op : new Runnable[] {
                () -> impatient.read("k", 0, new byte[data.length], 0, data.length),
                () -> impatient.get("k"),
                () -> impatient.get("k", 1 << 20)}) {
                long t0 = System.nanoTime();
                assertThatThrownBy(op::run).isInstanceOf(StoreException.class);
                // Not refused at once for another reason: it ran into the timeouts, and no further.
                assertThat(Duration.ofNanos(System.nanoTime() - t0)).isBetween(Duration.ofMillis(450), Duration.ofSeconds(10));
            }
        }
    }

    @Test
    void corruptedBytesAreServedWithTheRightLength() {
        byte[] data = bytes(100, 9);
        store.put("k", data);
        s3.faults().corruptNextGets(1);
        byte[] dst = new byte[100];
        store.read("k", 0, dst, 0, 100);
        assertThat(dst).isNotEqualTo(data);
        store.read("k", 0, dst, 0, 100);
        assertThat(dst).isEqualTo(data);
    }

    @Test
    void missingBucketSaysToCreateIt() {
        try (S3BlobStore nobucket = S3BlobStore.open("s3://no-such-bucket/p",
                java.util.Optional.of(s3.endpoint().toString()), fastRetries())) {
            assertThatThrownBy(() -> nobucket.get("k")).isInstanceOf(StoreException.class)
                    .hasMessageContaining("no-such-bucket")
                    .satisfies(e -> assertThat(((StoreException) e).nextStep()).contains("Create the bucket"));
        }
    }

    @Test
    void failedMultipartUploadIsAbortedAndLeavesNothingVisible() throws Exception {
        Path f = tmp.resolve("mp.bin");
        Files.write(f, bytes(12 << 20, 12));
        try (S3BlobStore small = s3.openStore(store.describe().substring(("s3://" + s3.bucket() + "/").length()),
                fastRetries().withMultipart(5L << 20, 5L << 20, 2))) {
            s3.faults().failNextParts(Integer.MAX_VALUE);
            assertThatThrownBy(() -> small.putIfAbsent("blobs/mp", f)).isInstanceOf(StoreUnavailableException.class)
                    .hasMessageContaining("blobs/mp");
            s3.faults().clear();
            assertThat(small.length("blobs/mp")).isEmpty();
            assertThat(small.list("blobs/")).isEmpty();
            assertThat(small.putIfAbsent("blobs/mp", f)).isTrue();
            assertThat(small.get("blobs/mp")).isEqualTo(Files.readAllBytes(f));
        }
    }

    @Test
    void filesystemBackedServerKeepsObjectsAcrossRestarts() throws Exception {
        Path dir = tmp.resolve("s3data");
        try (S3ProxyFixture fs = S3ProxyFixture.start(dir); BlobStore s = fs.openStore("p")) {
            s.put("a/b", new byte[] {4, 2});
        }
        try (S3ProxyFixture fs = S3ProxyFixture.start(dir); BlobStore s = fs.openStore("p")) {
            assertThat(s.get("a/b")).containsExactly(4, 2);
            assertThat(fs.env()).containsEntry("WARP_S3_ENDPOINT", fs.endpoint().toString());
        }
    }
}
