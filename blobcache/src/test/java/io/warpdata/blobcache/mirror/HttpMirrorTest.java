package io.warpdata.blobcache.mirror;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

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
                // audit 26: "IOException ...: HTTP/1.1 header parser received no bytes" said nothing plain.
                assertTrue(e.getMessage().contains("closed the connection without answering")
                        || e.getMessage().contains("reset the connection"), e.getMessage());
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
            MirrorException e = assertThrows(MirrorException.class,
                    () -> dead.read(new MirrorRange(KEY, 0, BLOCK, BLOCK), new byte[BLOCK], 0));
            assertEquals(MirrorException.Kind.CONNECTION, e.kind());
            // audit 26: it said only "ConnectException reading blobs/...".
            assertTrue(e.getMessage().contains("connection refused (nothing listens there"), e.getMessage());
        }
    }

    @Test
    void getReadsAWholeSmallObjectAndRefusesALargerOne() throws Exception {
        assertArrayEquals(blob, mirror.get(KEY, blob.length).orElseThrow());
        assertEquals(MirrorException.Kind.BAD_ANSWER,
                assertThrows(MirrorException.class, () -> mirror.get(KEY, blob.length - 1)).kind());
    }

    /** A chunked whole object was refused as "larger than N bytes, or sent no Content-Length". */
    @Test
    void aChunkedWholeObjectIsRefusedSayingItCameWithoutALength() {
        server.behaviour.set(MirrorServer.Behaviour.CHUNKED);
        MirrorException e = assertThrows(MirrorException.class, () -> mirror.get(KEY, blob.length));
        assertEquals(MirrorException.Kind.BAD_ANSWER, e.kind());
        assertTrue(e.getMessage().contains("without a Content-Length (a chunked answer)"), e.getMessage());
        assertFalse(e.getMessage().contains("larger than"), e.getMessage());
    }

    @Test
    void rangesMustStartOnABlockBoundary() {
        assertThrows(IllegalArgumentException.class, () -> new MirrorRange(KEY, 100, BLOCK, BLOCK));
        assertThrows(IllegalArgumentException.class, () -> new MirrorRange("../etc/passwd", 0, BLOCK, BLOCK));
    }

    /** One connection of {@link RawServer}: the request has been read; answer it as the test likes. */
    @FunctionalInterface
    interface Script {
        void answer(OutputStream out) throws Exception;
    }

    /**
     * A raw-socket server on loopback that reads each request's head and answers by a script,
     * byte by byte as the test wants: what no HTTP server library lets a test do (trickle, stop
     * mid-body, close mid-body).
     */
    static final class RawServer implements AutoCloseable {
        final ServerSocket socket;
        final AtomicInteger requests = new AtomicInteger();
        final Thread acceptor;

        RawServer(Script script) throws Exception {
            socket = new ServerSocket(0, 10, InetAddress.getLoopbackAddress());
            acceptor = Thread.ofPlatform().daemon().start(() -> {
                while (!socket.isClosed()) {
                    try (Socket s = socket.accept()) {
                        s.setTcpNoDelay(true);
                        readHead(s.getInputStream());
                        requests.incrementAndGet();
                        script.answer(s.getOutputStream());
                    } catch (Exception ignored) {
                        // closed by the client or the test; the test's assertions say what happened
                    }
                }
            });
        }

        URI base() {
            return URI.create("http://127.0.0.1:" + socket.getLocalPort() + "/warp");
        }

        private static void readHead(InputStream in) throws Exception {
            int matched = 0;
            byte[] end = "\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
            while (matched < end.length) {
                int b = in.read();
                if (b < 0) {
                    throw new java.io.EOFException("request ended early");
                }
                matched = b == end[matched] ? matched + 1 : (b == end[0] ? 1 : 0);
            }
        }

        @Override
        public void close() throws Exception {
            socket.close();
            acceptor.join(5_000);
        }
    }

    private static void head(OutputStream out, int contentLength, long first, long total) throws Exception {
        out.write(("HTTP/1.1 206 Partial Content\r\nContent-Length: " + contentLength + "\r\nContent-Range: bytes " + first
                + "-" + (first + contentLength - 1) + "/" + total + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    @Test
    void anAnswerThatKeepsComingIsServedThoughItTakesLongerThanTheTimeout() throws Exception {
        byte[] body = Arrays.copyOf(blob, 2 * BLOCK);
        // 2 KiB in 10 parts 250 ms apart: 2.5 s in all, never 1 s without a byte.
        try (RawServer slow = new RawServer(out -> {
            Thread.sleep(250);
            head(out, body.length, 0, blob.length);
            for (int at = 0; at < body.length; at += body.length / 10 + 1) {
                Thread.sleep(250);
                out.write(body, at, Math.min(body.length / 10 + 1, body.length - at));
                out.flush();
            }
        }); HttpMirror patient = new HttpMirror(slow.base(), Duration.ofSeconds(1))) {
            byte[] dst = new byte[body.length];
            long start = System.nanoTime();
            assertTrue(patient.read(new MirrorRange(KEY, 0, body.length, BLOCK), dst, 0));
            assertArrayEquals(body, dst);
            assertTrue(System.nanoTime() - start > Duration.ofSeconds(2).toNanos(), "the answer was not trickled");
            assertEquals(1, slow.requests.get());
        }
    }

    @Test
    void aMuteServerIsATimeoutAfterOneRequest() throws Exception {
        CountDownLatch end = new CountDownLatch(1);
        try (RawServer mute = new RawServer(out -> end.await());
             HttpMirror impatient = new HttpMirror(mute.base(), Duration.ofMillis(300))) {
            MirrorException e = assertThrows(MirrorException.class,
                    () -> impatient.read(new MirrorRange(KEY, 0, BLOCK, BLOCK), new byte[BLOCK], 0));
            assertEquals(MirrorException.Kind.TIMEOUT, e.kind(), e.toString());
            assertTrue(e.getMessage().contains("sent nothing for 300 ms"), e.getMessage());
            assertEquals(1, mute.requests.get(), "the client asked again");
            end.countDown();
        } finally {
            end.countDown();
        }
    }

    @Test
    void aServerThatStopsMidBodyIsATimeoutAndItsLateBytesNeverLand() throws Exception {
        CountDownLatch timedOut = new CountDownLatch(1);
        CountDownLatch lateSent = new CountDownLatch(1);
        byte[] body = Arrays.copyOf(blob, 2 * BLOCK);
        try (RawServer stalling = new RawServer(out -> {
            try {
                head(out, body.length, 0, blob.length);
                out.write(body, 0, BLOCK);
                out.flush();
                timedOut.await();
                out.write(body, BLOCK, BLOCK);
                out.flush();
            } finally {
                lateSent.countDown();
            }
        }); HttpMirror impatient = new HttpMirror(stalling.base(), Duration.ofMillis(500))) {
            byte[] dst = new byte[body.length];
            Arrays.fill(dst, (byte) 0x5A);
            MirrorException e = assertThrows(MirrorException.class,
                    () -> impatient.read(new MirrorRange(KEY, 0, body.length, BLOCK), dst, 0));
            assertEquals(MirrorException.Kind.TIMEOUT, e.kind(), e.toString());
            // The reader owns its buffer again: let the rest of the body come, then look.
            timedOut.countDown();
            assertTrue(lateSent.await(10, TimeUnit.SECONDS));
            Thread.sleep(200);
            byte[] untouched = new byte[BLOCK];
            Arrays.fill(untouched, (byte) 0x5A);
            assertArrayEquals(untouched, Arrays.copyOfRange(dst, BLOCK, 2 * BLOCK), "a late byte landed in the reader's buffer");
        }
    }

    @Test
    void aConnectionClosedMidBodyIsAConnectionFailure() throws Exception {
        try (RawServer closing = new RawServer(out -> {
            head(out, 2 * BLOCK, 0, blob.length);
            out.write(blob, 0, BLOCK);
            out.flush();
        }); HttpMirror mirror = new HttpMirror(closing.base(), Duration.ofSeconds(5))) {
            MirrorException e = assertThrows(MirrorException.class,
                    () -> mirror.read(new MirrorRange(KEY, 0, 2 * BLOCK, BLOCK), new byte[2 * BLOCK], 0));
            assertEquals(MirrorException.Kind.CONNECTION, e.kind(), e.toString());
            assertEquals(2, closing.requests.get(), "a dropped connection is tried once more, and only once");
            assertEquals(1, e.getSuppressed().length, "the first drop is kept beside the second");
        }
    }

    @Test
    void oneConnectionClosedMidAnswerIsTriedOnceMoreAndServes() throws Exception {
        AtomicInteger answers = new AtomicInteger();
        try (RawServer onceClosing = new RawServer(out -> {
            head(out, BLOCK, BLOCK, blob.length);
            // The first answer stops after its headers, as a proxy dropping one collapsed client does.
            if (answers.getAndIncrement() > 0) {
                out.write(blob, BLOCK, BLOCK);
            }
            out.flush();
        }); HttpMirror mirror = new HttpMirror(onceClosing.base(), Duration.ofSeconds(5))) {
            byte[] dst = new byte[BLOCK];
            assertTrue(mirror.read(new MirrorRange(KEY, BLOCK, BLOCK, BLOCK), dst, 0));
            assertArrayEquals(Arrays.copyOfRange(blob, BLOCK, 2 * BLOCK), dst);
            assertEquals(2, onceClosing.requests.get());
        }
    }

    @Test
    void aConnectionDroppedAfterALongAnswerIsNotTriedAgain() throws Exception {
        try (RawServer slowThenClosing = new RawServer(out -> {
            head(out, BLOCK, 0, blob.length);
            // Bytes every 300 ms for 1.5 s (never silent for the 1 s timeout), then the connection closes.
            for (int i = 0; i < 5; i++) {
                out.write(blob, i * 10, 10);
                out.flush();
                Thread.sleep(300);
            }
        }); HttpMirror mirror = new HttpMirror(slowThenClosing.base(), Duration.ofSeconds(1))) {
            MirrorException e = assertThrows(MirrorException.class,
                    () -> mirror.read(new MirrorRange(KEY, 0, BLOCK, BLOCK), new byte[BLOCK], 0));
            assertEquals(MirrorException.Kind.CONNECTION, e.kind(), e.toString());
            assertEquals(1, slowThenClosing.requests.get(), "the reader waited a timeout already: the next tier serves it");
        }
    }

    @Test
    void aWholeObjectCutShortIsTriedOnceMore() throws Exception {
        byte[] small = Arrays.copyOf(blob, 1000);
        AtomicInteger answers = new AtomicInteger();
        try (RawServer onceClosing = new RawServer(out -> {
            out.write(("HTTP/1.1 200 OK\r\nContent-Length: " + small.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(small, 0, answers.getAndIncrement() == 0 ? 10 : small.length);
            out.flush();
        }); HttpMirror mirror = new HttpMirror(onceClosing.base(), Duration.ofSeconds(5))) {
            assertArrayEquals(small, mirror.get(KEY, BLOCK).orElseThrow());
            assertEquals(2, onceClosing.requests.get());
        }
    }

    @Test
    void anErrorStatusIsNotTriedAgain() throws Exception {
        try (RawServer failing = new RawServer(out -> {
            out.write("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
        }); HttpMirror mirror = new HttpMirror(failing.base(), Duration.ofSeconds(5))) {
            assertEquals(MirrorException.Kind.STATUS, assertThrows(MirrorException.class,
                    () -> mirror.read(new MirrorRange(KEY, 0, BLOCK, BLOCK), new byte[BLOCK], 0)).kind());
            assertEquals(1, failing.requests.get());
        }
    }

    @Test
    void aMirrorThatDripsForEverStopsAtTheCeiling() throws Exception {
        CountDownLatch end = new CountDownLatch(1);
        try (RawServer dripping = new RawServer(out -> {
            head(out, BLOCK, 0, blob.length);
            for (int i = 0; i < BLOCK && end.getCount() > 0; i++) {
                out.write(blob[i]);
                out.flush();
                Thread.sleep(100);
            }
        }); HttpMirror mirror = new HttpMirror(dripping.base(), Duration.ofMillis(800), Duration.ofMillis(1500))) {
            MirrorException e = assertThrows(MirrorException.class,
                    () -> mirror.read(new MirrorRange(KEY, 0, BLOCK, BLOCK), new byte[BLOCK], 0));
            assertEquals(MirrorException.Kind.TIMEOUT, e.kind(), e.toString());
            assertTrue(e.getMessage().contains("ceiling"), e.getMessage());
        } finally {
            end.countDown();
        }
    }

    /**
     * A mirror that drips its answer, never silent for a timeout, fails once it is slower than
     * the slowest rate waited for, long before the ceiling: the reader then still has the time
     * to get the range from the next mirror or the store.
     */
    @Test
    void aMirrorSlowerThanTheSlowestRateFailsLongBeforeTheCeiling() throws Exception {
        CountDownLatch end = new CountDownLatch(1);
        int length = 256 * BLOCK; // 256 KiB: 250 ms at 1 MiB/s, after 300 ms of grace
        byte[] big = new byte[length];
        try (RawServer dripping = new RawServer(out -> {
            head(out, length, 0, length);
            for (int i = 0; i < length && end.getCount() > 0; i++) {
                out.write(big[i]);
                out.flush();
                Thread.sleep(20);
            }
        }); HttpMirror mirror = new HttpMirror(dripping.base(), Duration.ofMillis(800), Duration.ofSeconds(60),
                Duration.ofMillis(300))) {
            long start = System.nanoTime();
            MirrorException e = assertThrows(MirrorException.class,
                    () -> mirror.read(new MirrorRange(KEY, 0, length, BLOCK), new byte[length], 0));
            long took = System.nanoTime() - start;
            assertEquals(MirrorException.Kind.TIMEOUT, e.kind(), e.toString());
            assertTrue(e.getMessage().contains("slower than 1 MiB/s"), e.getMessage());
            assertTrue(took < Duration.ofSeconds(5).toNanos(), "failed after " + took / 1_000_000 + " ms");
        } finally {
            end.countDown();
        }
    }

    @Test
    void anAbandonedBodyWritesNothingMore() {
        AnswerBody body = new AnswerBody(System::nanoTime);
        byte[] dst = new byte[8];
        body.into(dst, 0, dst.length);
        body.onSubscribe(new java.util.concurrent.Flow.Subscription() {
            @Override
            public void request(long n) {
            }

            @Override
            public void cancel() {
            }
        });
        body.onNext(List.of(java.nio.ByteBuffer.wrap(new byte[] {1, 2, 3, 4})));
        body.abandon();
        body.onNext(List.of(java.nio.ByteBuffer.wrap(new byte[] {5, 6, 7, 8})));
        assertArrayEquals(new byte[] {1, 2, 3, 4, 0, 0, 0, 0}, dst);
        assertEquals(4, body.written());
    }

    @Test
    void aBodyLargerThanAskedIsCutAndWritesNothingMore() {
        AnswerBody body = new AnswerBody(System::nanoTime);
        byte[] dst = new byte[6];
        body.into(dst, 0, 4);
        AtomicInteger cancels = new AtomicInteger();
        body.onSubscribe(new java.util.concurrent.Flow.Subscription() {
            @Override
            public void request(long n) {
            }

            @Override
            public void cancel() {
                cancels.incrementAndGet();
            }
        });
        body.onNext(List.of(java.nio.ByteBuffer.wrap(new byte[] {1, 2, 3}), java.nio.ByteBuffer.wrap(new byte[] {4, 5})));
        body.onNext(List.of(java.nio.ByteBuffer.wrap(new byte[] {9})));
        assertTrue(body.overflowed());
        assertEquals(1, cancels.get());
        assertArrayEquals(new byte[] {1, 2, 3, 0, 0, 0}, dst);
    }
}
