package io.warpdata.blobcache.mirror;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HttpMirrorTest {
    static final String KEY = "blobs/sha256/ab/ab" + "0".repeat(62);
    static final int BLOCK = 1024;

    MirrorServer server;
    HttpMirror mirror;
    byte[] blob;

    @BeforeEach
    void start() throws Exception {
        server = new MirrorServer();
        blob = new byte[3 * BLOCK + 100];
        new Random(7).nextBytes(blob);
        server.objects.put(KEY, blob);
        mirror = new HttpMirror(server.base(), Duration.ofSeconds(10));
    }

    @AfterEach
    void stop() {
        mirror.close();
        server.close();
    }

    @Test
    void readsBlockAlignedRangeOfTheStoreKeyUnderBase() throws Exception {
        byte[] dst = new byte[2 * BLOCK + 10];
        assertTrue(mirror.read(new MirrorRange(KEY, BLOCK, 2 * BLOCK, BLOCK), dst, 10));
        assertArrayEquals(Arrays.copyOfRange(blob, BLOCK, 3 * BLOCK), Arrays.copyOfRange(dst, 10, dst.length));
        MirrorServer.Seen request = server.seen.getFirst();
        assertEquals("GET", request.method());
        assertEquals("/warp/" + KEY, request.uri().getRawPath());
        assertEquals("bytes=1024-3071", request.headers().getFirst("Range"));
    }

    @Test
    void readsTheShortLastBlockOfABlob() throws Exception {
        byte[] dst = new byte[100];
        assertTrue(mirror.read(new MirrorRange(KEY, 3 * BLOCK, 100, BLOCK), dst, 0));
        assertArrayEquals(Arrays.copyOfRange(blob, 3 * BLOCK, blob.length), dst);
    }

    @Test
    void sendsNoCredentialsCookiesOrQueryString() throws Exception {
        mirror.read(new MirrorRange(KEY, 0, BLOCK, BLOCK), new byte[BLOCK], 0);
        mirror.get(KEY, 1 << 20);
        assertEquals(2, server.seen.size());
        for (MirrorServer.Seen request : server.seen) {
            assertNull(request.uri().getRawQuery(), "query string sent: " + request.uri());
            for (String header : request.headers().keySet()) {
                String h = header.toLowerCase(java.util.Locale.ROOT);
                assertTrue(h.equals("host") || h.equals("range") || h.equals("user-agent") || h.equals("connection")
                        || h.equals("content-length"), "unexpected header sent to a mirror: " + header + ": "
                        + request.headers().get(header));
            }
            assertFalse(request.headers().containsKey("Authorization"));
            assertFalse(request.headers().containsKey("Cookie"));
        }
    }

    @Test
    void refusesBaseUrlsThatCarrySecrets() {
        assertThrows(IllegalArgumentException.class, () -> new HttpMirror(URI.create("http://user:pw@cache:8080/warp"), Duration.ofSeconds(2)));
        assertThrows(IllegalArgumentException.class,
                () -> new HttpMirror(URI.create("http://cache:8080/warp?X-Amz-Signature=abc"), Duration.ofSeconds(2)));
        assertThrows(IllegalArgumentException.class, () -> new HttpMirror(URI.create("ftp://cache/warp"), Duration.ofSeconds(2)));
        assertEquals("http://cache:8080/warp", new HttpMirror(URI.create("http://cache:8080/warp/"), Duration.ofSeconds(2)).name());
    }

    @Test
    void notFoundIsAMissNotAFailure() throws Exception {
        assertFalse(mirror.read(new MirrorRange("blobs/sha256/cd/cd" + "1".repeat(62), 0, BLOCK, BLOCK), new byte[BLOCK], 0));
        assertEquals(Optional.empty(), mirror.get("datasets/a/b/versions/" + "2".repeat(64) + ".json", 1000));
    }

    @Test
    void serverErrorsAreFailures() {
        server.behaviour.set(MirrorServer.Behaviour.STATUS_500);
        MirrorException e = assertThrows(MirrorException.class, () -> mirror.read(new MirrorRange(KEY, 0, BLOCK, BLOCK), new byte[BLOCK], 0));
        assertEquals(MirrorException.Kind.STATUS, e.kind());
        server.behaviour.set(MirrorServer.Behaviour.STATUS_403);
        e = assertThrows(MirrorException.class, () -> mirror.read(new MirrorRange(KEY, 0, BLOCK, BLOCK), new byte[BLOCK], 0));
        assertEquals(MirrorException.Kind.STATUS, e.kind());
        assertTrue(e.getMessage().contains("403"), e.getMessage());
    }

    @Test
    void answersThatDoNotMatchTheRangeAreFailures() {
        MirrorRange second = new MirrorRange(KEY, BLOCK, BLOCK, BLOCK);
        server.behaviour.set(MirrorServer.Behaviour.WRONG_RANGE);
        assertEquals(MirrorException.Kind.BAD_ANSWER,
                assertThrows(MirrorException.class, () -> mirror.read(second, new byte[BLOCK], 0)).kind());
        server.behaviour.set(MirrorServer.Behaviour.IGNORE_RANGE);
        assertEquals(MirrorException.Kind.BAD_ANSWER,
                assertThrows(MirrorException.class, () -> mirror.read(second, new byte[BLOCK], 0)).kind());
    }

    @Test
    void aShortBodyIsAFailure() {
        server.behaviour.set(MirrorServer.Behaviour.SHORT_BODY);
        MirrorException e = assertThrows(MirrorException.class,
                () -> mirror.read(new MirrorRange(KEY, 0, BLOCK, BLOCK), new byte[BLOCK], 0));
        // Content-Length promised more than came: the client sees the connection end early.
        assertTrue(e.kind() == MirrorException.Kind.CONNECTION || e.kind() == MirrorException.Kind.BAD_ANSWER, e.toString());
    }

    @Test
    void aHangingMirrorIsATimeout() {
        server.behaviour.set(MirrorServer.Behaviour.HANG);
        try (HttpMirror impatient = new HttpMirror(server.base(), Duration.ofMillis(300))) {
            MirrorException e = assertThrows(MirrorException.class,
                    () -> impatient.read(new MirrorRange(KEY, 0, BLOCK, BLOCK), new byte[BLOCK], 0));
            assertEquals(MirrorException.Kind.TIMEOUT, e.kind());
        }
    }

    @Test
    void aResetConnectionIsAFailure() throws Exception {
        try (ServerSocket resetter = new ServerSocket(0, 10, InetAddress.getLoopbackAddress())) {
            // Every connection (the client retries a GET once) is reset once the request is in.
            Thread t = Thread.ofPlatform().daemon().start(() -> {
                while (!resetter.isClosed()) {
                    try (Socket s = resetter.accept()) {
                        InputStream in = s.getInputStream();
                        in.read(new byte[4096]);
                        s.setSoLinger(true, 0);
                    } catch (Exception ignored) {
                        // closed by the test; its assertion says what happened
                    }
                }
            });
            try (HttpMirror resetting = new HttpMirror(URI.create("http://127.0.0.1:" + resetter.getLocalPort() + "/warp"),
                    Duration.ofSeconds(5))) {
                MirrorException e = assertThrows(MirrorException.class,
                        () -> resetting.read(new MirrorRange(KEY, 0, BLOCK, BLOCK), new byte[BLOCK], 0));
                assertEquals(MirrorException.Kind.CONNECTION, e.kind(), e.toString());
            }
            resetter.close();
            t.join(5000);
        }
    }

    @Test
    void aRefusedConnectionIsAFailure() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        try (HttpMirror dead = new HttpMirror(URI.create("http://127.0.0.1:" + port + "/warp"), Duration.ofSeconds(2))) {
            assertEquals(MirrorException.Kind.CONNECTION, assertThrows(MirrorException.class,
                    () -> dead.read(new MirrorRange(KEY, 0, BLOCK, BLOCK), new byte[BLOCK], 0)).kind());
        }
    }

    @Test
    void getReadsAWholeSmallObjectAndRefusesALargerOne() throws Exception {
        assertArrayEquals(blob, mirror.get(KEY, blob.length).orElseThrow());
        assertEquals(MirrorException.Kind.BAD_ANSWER,
                assertThrows(MirrorException.class, () -> mirror.get(KEY, blob.length - 1)).kind());
    }

    @Test
    void rangesMustStartOnABlockBoundary() {
        assertThrows(IllegalArgumentException.class, () -> new MirrorRange(KEY, 100, BLOCK, BLOCK));
        assertThrows(IllegalArgumentException.class, () -> new MirrorRange("../etc/passwd", 0, BLOCK, BLOCK));
    }
}
