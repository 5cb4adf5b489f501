package io.warpdata.blobcache.mirror;

import io.warpdata.manifest.BlobId;
import io.warpdata.store.BlobStore;
import io.warpdata.store.S3ProxyFixture;
import io.warpdata.store.StoreLayout;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shipped nginx mirror configuration (systemd/mirror/nginx/) run as shipped by Debian's nginx,
 * in front of a real S3 server (S3Proxy with AWS V4 authentication, so every request nginx makes
 * to it is signed by the shipped warp-s3-sign.js), read by {@link HttpMirror}. Upstream requests
 * are counted at the S3 server's storage layer.
 */
class NginxMirrorIT {
    static final int BLOCK = 1 << 20;
    static final String PREFIX = "fleet";

    @TempDir
    static Path dir;
    static S3ProxyFixture s3;
    static BlobStore store;
    static NginxMirror nginx;
    static HttpMirror mirror;

    @BeforeAll
    static void start() throws Exception {
        s3 = S3ProxyFixture.start();
        store = s3.openStore(PREFIX);
        nginx = NginxMirror.start(dir, s3.port(), "/" + s3.bucket() + "/" + PREFIX, S3ProxyFixture.ACCESS_KEY, S3ProxyFixture.SECRET_KEY);
        mirror = new HttpMirror(nginx.base(), Duration.ofSeconds(20));
    }

    @AfterAll
    static void stop() {
        try {
            if (mirror != null) {
                mirror.close();
            }
        } finally {
            try {
                if (nginx != null) {
                    nginx.close();
                }
            } finally {
                if (store != null) {
                    store.close();
                }
                if (s3 != null) {
                    s3.close();
                }
            }
        }
    }

    /** A random blob of {@code size} bytes put in the store under its content address. */
    private static String publish(int size, long seed) {
        byte[] data = new byte[size];
        new Random(seed).nextBytes(data);
        String key = StoreLayout.blob(BlobId.of(data));
        store.put(key, data);
        return key;
    }

    private static long storeGets() {
        return s3.counters().gets.sum();
    }

    @Test
    void rangedReadsReturnTheStoresBytesAndASecondReadIsACacheHit() throws Exception {
        int size = 3 * BLOCK + 12_345;
        String key = publish(size, 1);
        byte[] expected = store.get(key);
        long before = storeGets();
        byte[] got = new byte[size];
        for (int block = 3; block >= 0; block--) {
            int len = Math.min(BLOCK, size - block * BLOCK);
            assertTrue(mirror.read(new MirrorRange(key, (long) block * BLOCK, len, BLOCK), got, block * BLOCK));
        }
        assertArrayEquals(expected, got);
        assertEquals(4, storeGets() - before, "one upstream GET per 1 MiB slice");

        // A run of two blocks, and everything again: all from nginx's cache.
        long cached = storeGets();
        byte[] run = new byte[2 * BLOCK];
        assertTrue(mirror.read(new MirrorRange(key, BLOCK, 2 * BLOCK, BLOCK), run, 0));
        assertArrayEquals(Arrays.copyOfRange(expected, BLOCK, 3 * BLOCK), run);
        Arrays.fill(got, (byte) 0);
        for (int block = 0; block < 4; block++) {
            int len = Math.min(BLOCK, size - block * BLOCK);
            assertTrue(mirror.read(new MirrorRange(key, (long) block * BLOCK, len, BLOCK), got, block * BLOCK));
        }
        assertArrayEquals(expected, got);
        assertEquals(0, storeGets() - cached, "cached slices are not fetched again");
    }

    @Test
    void concurrentMissesOfOneSliceMakeOneUpstreamRequest() throws Exception {
        String key = publish(2 * BLOCK, 2);
        byte[] expected = Arrays.copyOfRange(store.get(key), BLOCK, 2 * BLOCK);
        int readers = 8;
        long before = storeGets();
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(readers);
        try {
            List<Future<byte[]>> results = new ArrayList<>();
            for (int i = 0; i < readers; i++) {
                results.add(pool.submit(() -> {
                    // Each reader is its own client, as each node is.
                    try (HttpMirror node = new HttpMirror(nginx.base(), Duration.ofSeconds(30))) {
                        byte[] dst = new byte[BLOCK];
                        go.await();
                        assertTrue(node.read(new MirrorRange(key, BLOCK, BLOCK, BLOCK), dst, 0));
                        return dst;
                    }
                }));
            }
            go.countDown();
            for (Future<byte[]> r : results) {
                assertArrayEquals(expected, r.get());
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(1, storeGets() - before, readers + " simultaneous misses of one slice: upstream requests");
    }

    @Test
    void aClientsAuthorizationIsNeverForwardedAndOnlyImmutableKeysAreServed() throws Exception {
        String key = publish(BLOCK, 3);
        byte[] expected = store.get(key);
        try (HttpClient raw = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
            long before = storeGets();
            // A client that sends credentials of its own: nginx replaces them with its signature
            // (were they forwarded, the S3 server would refuse the request with 403).
            HttpResponse<byte[]> answer = raw.send(HttpRequest.newBuilder(URI.create(nginx.base() + "/" + key))
                    .header("Authorization", "AWS4-HMAC-SHA256 Credential=someone-else/20260101/us-east-1/s3/aws4_request,"
                            + " SignedHeaders=host, Signature=0000")
                    .header("Range", "bytes=0-" + (BLOCK - 1))
                    .header("User-Agent", "nosy-client")
                    .build(), HttpResponse.BodyHandlers.ofByteArray());
            assertEquals(206, answer.statusCode(), nginx.errorLog());
            assertArrayEquals(expected, answer.body());
            assertEquals(1, storeGets() - before, "the request went to the store, signed by nginx");

            long pointerBefore = storeGets();
            HttpResponse<String> signedUrl = raw.send(HttpRequest.newBuilder(URI.create(nginx.base() + "/" + key
                    + "?X-Amz-Signature=abc")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(400, signedUrl.statusCode(), "a query string (a signed URL) is refused");
            HttpResponse<String> pointer = raw.send(HttpRequest.newBuilder(URI.create(nginx.base()
                    + "/datasets/ws/name/latest.json")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(404, pointer.statusCode(), "pointers never come from a cache");
            assertEquals(0, storeGets() - pointerBefore);
        }

        // HttpMirror's own requests: the access log shows none sent an Authorization header.
        assertTrue(mirror.read(new MirrorRange(key, 0, BLOCK, BLOCK), new byte[BLOCK], 0));
        List<String> log = nginx.accessLog();
        List<String> warpd = log.stream().filter(l -> l.contains("ua=\"warpd\"")).toList();
        List<String> nosy = log.stream().filter(l -> l.contains("ua=\"nosy-client\"")).toList();
        assertFalse(warpd.isEmpty(), "no request of warpd's in the access log:\n" + String.join("\n", log));
        assertEquals(1, nosy.size(), String.join("\n", log));
        assertTrue(nosy.getFirst().contains("client_auth=PRESENT"), "the log shows a client's Authorization: " + nosy.getFirst());
        for (String line : warpd) {
            assertTrue(line.contains("client_auth=none"), "warpd sent an Authorization header: " + line);
        }
    }

    @Test
    void wholeSmallObjectsComeThroughToo() throws Exception {
        byte[] hashList = "a small blob read whole".getBytes();
        String key = StoreLayout.blob(BlobId.of(hashList));
        store.put(key, hashList);
        assertArrayEquals(hashList, mirror.get(key, 64 << 10).orElseThrow());
        long before = storeGets();
        assertArrayEquals(hashList, mirror.get(key, 64 << 10).orElseThrow());
        assertEquals(0, storeGets() - before);
        assertTrue(mirror.get(StoreLayout.blob(BlobId.of("absent".getBytes())), 64 << 10).isEmpty(),
                "a key the store does not have is a miss");
        // Version manifests are never asked of a mirror (their metadata is not hashed): refused.
        byte[] manifest = "{\"version\":1}".getBytes();
        String manifestKey = "datasets/ws/name/versions/" + BlobId.of(manifest).hex() + ".json";
        store.put(manifestKey, manifest);
        assertTrue(mirror.get(manifestKey, 64 << 10).isEmpty(), "the shipped config refuses a version manifest");
    }
}
