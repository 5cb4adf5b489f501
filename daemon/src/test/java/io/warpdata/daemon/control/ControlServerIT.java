package io.warpdata.daemon.control;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The control server over a real Unix domain socket, with the daemon's real cache, catalog and store. */
class ControlServerIT {
    @TempDir
    Path tmp;

    private ControlWorld world;
    private ControlServer server;
    private Path socket;

    private ControlServer start(Path path) {
        AccessPolicy policy = new AccessPolicy(ProcessIdentity.uid(), "root", Optional.empty());
        return ControlServer.start(new ControlServer.Config(path, Optional.empty()), world.operations(policy), policy,
                new PeerResolver(EtcUserDatabase.system()));
    }

    @BeforeEach
    void startServer() {
        world = new ControlWorld(tmp);
        socket = tmp.resolve("run/warpd.sock");
        server = start(socket);
    }

    @AfterEach
    void stopServer() {
        server.close();
        world.close();
    }

    /** A raw protocol client: writes lines, reads lines. */
    private static final class Raw implements AutoCloseable {
        final SocketChannel ch;
        final BufferedReader in;

        Raw(Path socket) throws IOException {
            ch = SocketChannel.open(StandardProtocolFamily.UNIX);
            ch.connect(UnixDomainSocketAddress.of(socket));
            in = new BufferedReader(new InputStreamReader(Channels.newInputStream(ch), StandardCharsets.UTF_8));
        }

        void send(String s) throws IOException {
            ByteBuffer b = ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
            while (b.hasRemaining()) {
                ch.write(b);
            }
        }

        JsonNode next() throws IOException {
            String line = in.readLine();
            assertThat(line).as("a reply line").isNotNull();
            return ControlProtocol.json().readTree(line);
        }

        @Override
        public void close() throws IOException {
            ch.close();
        }
    }

    private JsonNode status() {
        try (ControlClient c = ControlClient.connect(socket)) {
            return c.call("status", ControlProtocol.object());
        }
    }

    @Test
    void statusReportsDaemonAndPeer() {
        JsonNode s = status();
        assertThat(s.get("version").asText()).isEqualTo("0.1.0-test");
        assertThat(s.get("mount").asText()).isEqualTo("/warp");
        assertThat(s.get("open_files").asLong()).isEqualTo(3);
        assertThat(s.get("uptime_seconds").asLong()).isPositive();
        assertThat(s.get("recent_errors").get(0).asText()).contains("2026-11-24T01:00:00Z read /ws/name@ab/images/x.jpg failed");
        assertThat(s.get("peer").get("uid").asInt()).isEqualTo(ProcessIdentity.uid());
        assertThat(s.get("peer").get("privileged").asBoolean()).isTrue();
    }

    @Test
    void socketHasMode0660InAPrivateDirectory() throws IOException {
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(socket, LinkOption.NOFOLLOW_LINKS)))
                .isEqualTo("rw-rw----");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(socket.getParent()))).isEqualTo("rwx------");
    }

    /** A warpd restarted with --socket-group in the directory an earlier one made without a group: the group gets in. */
    @Test
    void aSocketGroupIsGivenTheDirectoryAnEarlierWarpdMadeWithoutOne() throws IOException {
        server.close();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(socket.getParent()))).isEqualTo("rwx------");
        AccessPolicy policy = new AccessPolicy(ProcessIdentity.uid(), "root", Optional.empty());
        int nogroup = EtcUserDatabase.system().gid("nogroup").orElseThrow();
        server = ControlServer.start(new ControlServer.Config(socket, Optional.of(nogroup)), world.operations(policy), policy,
                new PeerResolver(EtcUserDatabase.system()));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(socket.getParent()))).isEqualTo("rwxr-x---");
        assertThat(Files.getAttribute(socket.getParent(), "unix:gid")).isEqualTo(nogroup);
        // a directory that holds more than sockets is a user's: left as it is
        Path mine = Files.createDirectories(tmp.resolve("mine"));
        Files.setPosixFilePermissions(mine, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.writeString(mine.resolve("notes.txt"), "mine");
        server.close();
        server = ControlServer.start(new ControlServer.Config(mine.resolve("warpd.sock"), Optional.of(nogroup)),
                world.operations(policy), policy, new PeerResolver(EtcUserDatabase.system()));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(mine))).isEqualTo("rwxr-xr-x");
    }

    @Test
    void secondDaemonOnTheSameSocketIsRefused() {
        assertThatThrownBy(() -> start(socket))
                .isInstanceOfSatisfying(ControlException.class, e -> {
                    assertThat(e.type()).isEqualTo("SocketUnsafe");
                    assertThat(e.getMessage()).contains("another warpd", socket.toString());
                });
        assertThat(status().get("version").asText()).isEqualTo("0.1.0-test");
    }

    @Test
    void staleSocketFromACrashIsReplaced() throws IOException {
        Path stale = tmp.resolve("stale/warpd.sock");
        Files.createDirectories(stale.getParent());
        Files.setPosixFilePermissions(stale.getParent(), PosixFilePermissions.fromString("rwx------"));
        // A bound-then-closed socket leaves its file behind with nobody listening, as after kill -9.
        var ch = java.nio.channels.ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        ch.bind(UnixDomainSocketAddress.of(stale));
        ch.close();
        assertThat(Files.exists(stale, LinkOption.NOFOLLOW_LINKS)).isTrue();
        try (ControlServer second = start(stale); ControlClient c = ControlClient.connect(stale)) {
            assertThat(c.call("status", ControlProtocol.object()).get("mode").asText()).isEqualTo("auto");
        }
        assertThat(Files.exists(stale, LinkOption.NOFOLLOW_LINKS)).as("socket removed on close").isFalse();
    }

    @Test
    void plantedSymlinkIsNeverFollowed() throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("planted"));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        Path target = Files.writeString(tmp.resolve("victim.txt"), "keep me");
        Path link = Files.createSymbolicLink(dir.resolve("warpd.sock"), target);
        assertThatThrownBy(() -> start(link)).hasMessageContaining("symbolic link");
        assertThat(Files.readString(target)).isEqualTo("keep me");
        assertThat(Files.isSymbolicLink(link)).isTrue();

        Path linkedDir = Files.createSymbolicLink(tmp.resolve("linkdir"), dir);
        assertThatThrownBy(() -> start(linkedDir.resolve("x.sock"))).hasMessageContaining("symbolic link");
    }

    @Test
    void worldWritableSocketDirectoryIsRefused() throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("open"));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        assertThatThrownBy(() -> start(dir.resolve("warpd.sock"))).hasMessageContaining("writable by other users");
        // Audit 37: refused before warpd mounts anything, by the check warpd runs first.
        assertThatThrownBy(() -> SocketFile.requireNotServed(dir.resolve("warpd.sock")))
                .hasMessageContaining("writable by other users");
    }

    /** Audit 37: a symlink planted at the socket path, to a live socket, was called "another warpd serving it". */
    @Test
    void aSymlinkToALiveSocketIsRefusedAsASymlinkBeforeMounting() throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("planted-live"));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        Path link = Files.createSymbolicLink(dir.resolve("warpd.sock"), socket);
        assertThatThrownBy(() -> SocketFile.requireNotServed(link)).hasMessageContaining("is a symbolic link, not a socket");
        assertThat(Files.isSymbolicLink(link)).isTrue();
    }

    @Test
    void malformedJsonGetsAnErrorAndTheConnectionKeepsServing() throws IOException {
        try (Raw r = new Raw(socket)) {
            r.send("this is not json\n");
            JsonNode err = r.next();
            assertThat(err.get("ok").asBoolean()).isFalse();
            assertThat(err.get("id").isNull()).isTrue();
            assertThat(err.get("error").get("type").asText()).isEqualTo("BadRequest");
            assertThat(err.get("error").get("next_step").asText()).isNotEmpty();

            r.send("{\"id\":2,\"op\":\"no.such.op\"}\n");
            JsonNode unknown = r.next();
            assertThat(unknown.get("id").asInt()).isEqualTo(2);
            assertThat(unknown.get("error").get("type").asText()).isEqualTo("UnknownOperation");
            assertThat(unknown.get("error").get("next_step").asText()).contains("status", "warm");

            r.send("{\"id\":3,\"op\":\"status\"}\n");
            assertThat(r.next().get("ok").asBoolean()).isTrue();
        }
    }

    @Test
    void twoMebibyteLineIsRefusedAndSkippedWhileOthersAreServed() throws Exception {
        try (Raw r = new Raw(socket)) {
            byte[] big = new byte[2 << 20];
            Arrays.fill(big, (byte) 'x');
            ExecutorService ex = Executors.newSingleThreadExecutor();
            try {
                Future<JsonNode> reply = ex.submit(r::next);
                r.send("{\"id\":1,\"op\":\"status\",\"args\":{\"pad\":\"");
                for (int off = 0; off < big.length; off += 64 * 1024) {
                    r.ch.write(ByteBuffer.wrap(big, off, 64 * 1024));
                }
                assertThat(status().get("ok")).as("another client is served meanwhile").isNull();
                r.send("\"}}\n{\"id\":9,\"op\":\"status\"}\n");
                JsonNode err = reply.get(10, TimeUnit.SECONDS);
                assertThat(err.get("error").get("type").asText()).isEqualTo("RequestTooLarge");
                JsonNode next = r.next();
                assertThat(next.get("id").asInt()).isEqualTo(9);
                assertThat(next.get("ok").asBoolean()).isTrue();
            } finally {
                ex.shutdownNow();
            }
        }
    }

    @Test
    void aHundredMegabytesWithoutANewlineAreSkippedAndTheDaemonKeepsServing() throws Exception {
        Runtime rt = Runtime.getRuntime();
        long usedBefore = rt.totalMemory() - rt.freeMemory();
        try (Raw r = new Raw(socket)) {
            ExecutorService ex = Executors.newSingleThreadExecutor();
            try {
                Future<JsonNode> reply = ex.submit(r::next);
                byte[] chunk = new byte[1 << 20];
                Arrays.fill(chunk, (byte) 'x');
                for (int i = 0; i < 100; i++) {
                    ByteBuffer b = ByteBuffer.wrap(chunk);
                    while (b.hasRemaining()) {
                        r.ch.write(b);
                    }
                    if (i == 50) {
                        assertThat(status().get("mode").asText()).as("others are served meanwhile").isEqualTo("auto");
                    }
                }
                r.send("\n{\"id\":2,\"op\":\"status\"}\n");
                assertThat(reply.get(30, TimeUnit.SECONDS).get("error").get("type").asText()).isEqualTo("RequestTooLarge");
                assertThat(r.next().get("ok").asBoolean()).as("the same connection serves the next line").isTrue();
            } finally {
                ex.shutdownNow();
            }
        }
        System.gc();
        long usedAfter = rt.totalMemory() - rt.freeMemory();
        assertThat(usedAfter - usedBefore).as("the 100 MB line was skipped, not held").isLessThan(64L << 20);
    }

    /** Clients that each send most of a 1 MiB line and never its newline: held within a budget, not until the heap is full. */
    @Test
    void unfinishedLinesOfManyClientsAreHeldWithinABudgetAndTheDaemonKeepsServing() throws Exception {
        List<Raw> open = new ArrayList<>();
        int busy = 0;
        String almostALine = "x".repeat(ControlProtocol.MAX_LINE_BYTES - 1000);
        try {
            for (int i = 0; i < 40; i++) { // 40 MiB of unfinished lines, against a budget of 16
                Raw r = new Raw(socket);
                open.add(r);
                try {
                    r.send(almostALine);
                } catch (IOException closedMidWrite) {
                    // refused while it wrote: counted below by its error line
                }
            }
            assertThat(status().get("mode").asText()).as("the daemon still answers").isEqualTo("auto");
            for (Raw r : open.subList(20, open.size())) {
                String line = r.in.readLine();
                if (line != null && line.contains("too many unfinished request lines")) {
                    busy++;
                }
            }
        } finally {
            for (Raw r : open) {
                r.close();
            }
        }
        assertThat(busy).as("clients past the budget were told and closed").isGreaterThanOrEqualTo(20 - 1);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (server.clientCount() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(server.clientCount()).isZero();
        // the budget is given back: a client may send a long line again
        try (Raw r = new Raw(socket)) {
            r.send("{\"id\":1,\"op\":\"status\",\"args\":{\"pad\":\"" + "y".repeat(900_000) + "\"}}\n");
            assertThat(r.next().path("ok").asBoolean()).isTrue();
        }
    }

    @Test
    void aThousandConnectionsAreBoundedAndTheDaemonKeepsServing() throws Exception {
        List<Raw> open = new ArrayList<>();
        int refused = 0;
        try {
            for (int i = 0; i < 1000; i++) {
                open.add(new Raw(socket));
            }
            // Past MAX_CLIENTS a connection gets one error line and is closed; those within wait.
            for (Raw r : open.subList(ControlServer.MAX_CLIENTS + 10, open.size())) {
                String line = r.in.readLine();
                if (line != null && line.contains("already serves " + ControlServer.MAX_CLIENTS + " control clients")) {
                    refused++;
                }
            }
            assertThat(server.clientCount()).isLessThanOrEqualTo(ControlServer.MAX_CLIENTS);
        } finally {
            for (Raw r : open) {
                r.close();
            }
        }
        assertThat(refused).as("every connection past the bound was told so").isEqualTo(1000 - ControlServer.MAX_CLIENTS - 10);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (server.clientCount() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(server.clientCount()).as("every connection released").isZero();
        assertThat(status().get("mode").asText()).isEqualTo("auto");
    }

    @Test
    void clientDisconnectingMidWarmCancelsItAndServerKeepsServing() throws Exception {
        CountDownLatch reading = world.holdReads();
        try (Raw r = new Raw(socket)) {
            r.send("{\"id\":1,\"op\":\"warm\",\"args\":{\"dataset\":\"ws/name\"}}\n");
            assertThat(reading.await(10, TimeUnit.SECONDS)).as("the warm's first GET is in flight").isTrue();
        }
        assertThat(status().get("mode").asText()).isEqualTo("auto");
        world.releaseReads();
        Thread.sleep(500);
        assertThat(world.store.calls(io.warpdata.store.FaultStore.Call.READ)).as("warm saw the cancellation: the blob in flight, none after")
                .isEqualTo(1);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (server.clientCount() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(server.clientCount()).as("the dropped client's connection is released").isZero();
    }

    @Test
    void anOperationThatRunsOutOfMemoryIsAnsweredAndTheServerKeepsServing() throws Exception {
        AccessPolicy policy = new AccessPolicy(ProcessIdentity.uid(), "root", Optional.empty());
        Operation starved = new Operation() {
            @Override
            public String name() {
                return "test.starved";
            }

            @Override
            public AccessPolicy.Access access() {
                return AccessPolicy.Access.OPEN;
            }

            @Override
            public JsonNode run(OperationContext ctx) {
                throw new OutOfMemoryError("Cannot reserve 1048576 bytes of direct buffer memory");
            }
        };
        List<Operation> ops = new ArrayList<>(List.of(starved));
        OperationRegistry standard = world.operations(policy);
        standard.names().forEach(n -> ops.add(standard.find(n).orElseThrow()));
        Path other = tmp.resolve("run2/warpd.sock");
        try (ControlServer s = ControlServer.start(new ControlServer.Config(other, Optional.empty()),
                new OperationRegistry(ops), policy, new PeerResolver(EtcUserDatabase.system()));
             Raw r = new Raw(other)) {
            r.send("{\"id\":1,\"op\":\"test.starved\",\"args\":{}}\n");
            JsonNode answer = r.next(); // before: no answer ever came, and the client waited its whole timeout
            assertThat(answer.get("error").get("type").asText()).isEqualTo("Busy");
            assertThat(answer.get("error").get("message").asText()).contains("ran out of memory");
            r.send("{\"id\":2,\"op\":\"status\",\"args\":{}}\n");
            assertThat(r.next().get("result").get("mode").asText()).isEqualTo("auto");
        }
    }

    /**
     * warpd restarted with --mode local showed only the datasets the mount had listed: one
     * published through warpd since was missing, its workspace listing kept from before.
     */
    @Test
    void aPublishThroughTheDaemonIsKeptForOfflineUse() throws Exception {
        Path src = Files.createDirectories(tmp.resolve("offline-src"));
        try (java.sql.Connection c = io.warpdata.daemon.inspect.DuckDb.connect(); java.sql.Statement st = c.createStatement()) {
            st.execute("COPY (SELECT i AS id FROM range(10) t(i)) TO '" + src.resolve("part-0.parquet") + "' (FORMAT PARQUET)");
        }
        world.catalog.datasets("ws"); // the workspace listed (and kept) before the publish
        ObjectNode args = ControlProtocol.object().put("dataset", "ws/offline").put("set_latest", true);
        args.putObject("tables").putArray("main").add(src.resolve("part-0.parquet").toString());
        String version;
        try (ControlClient c = ControlClient.connect(socket)) {
            version = c.call("publish", args).get("version").asText();
        }
        assertThat(world.catalog.known().listing(io.warpdata.store.StoreLayout.workspace("ws")).orElseThrow().children())
                .contains("offline/");
        assertThat(world.catalog.known().pointer(io.warpdata.store.StoreLayout.latest(
                io.warpdata.manifest.DatasetId.parse("ws/offline")))).get().extracting(p -> p.version()).isEqualTo(version);
    }

    @Test
    void oneClientCannotRunUnboundedOperations() throws Exception {
        CountDownLatch reading = world.holdReads();
        try (Raw r = new Raw(socket)) {
            StringBuilder reqs = new StringBuilder();
            for (int i = 1; i <= ControlServer.MAX_RUNNING_PER_CLIENT + 1; i++) {
                reqs.append("{\"id\":").append(i).append(",\"op\":\"warm\",\"args\":{\"dataset\":\"ws/name\"}}\n");
            }
            r.send(reqs.toString());
            JsonNode busy;
            do {
                busy = r.next();
            } while (busy.has("event"));
            assertThat(busy.get("id").asInt()).isEqualTo(ControlServer.MAX_RUNNING_PER_CLIENT + 1);
            assertThat(busy.get("error").get("type").asText()).isEqualTo("Busy");
            assertThat(reading.await(10, TimeUnit.SECONDS)).isTrue();
        }
        world.releaseReads();
        assertThat(status().get("mode").asText()).isEqualTo("auto");
    }

    @Test
    void warmStreamsProgressThenOneResult() {
        List<JsonNode> events = new ArrayList<>();
        JsonNode result;
        try (ControlClient c = ControlClient.connect(socket)) {
            ObjectNode args = ControlProtocol.object().put("dataset", "ws/name").put("tables", "main");
            result = c.call("warm", args, events::add);
        }
        assertThat(events).isNotEmpty().allSatisfy(e -> assertThat(e.get("event").asText()).isEqualTo("progress"));
        assertThat(result.get("bytes_done").asLong()).isEqualTo(300);
        assertThat(world.cachedBlocks()).as("the 3 shards of main").isEqualTo(3);
    }

    @Test
    void manyClientsAtOnceAreAllServed() throws Exception {
        ExecutorService ex = Executors.newFixedThreadPool(16);
        try {
            List<Callable<Integer>> tasks = new ArrayList<>();
            for (int i = 0; i < 48; i++) {
                tasks.add(() -> {
                    int ok = 0;
                    try (ControlClient c = ControlClient.connect(socket)) {
                        for (int k = 0; k < 5; k++) {
                            ok += c.call("cache.stats", ControlProtocol.object()).has("size_bytes") ? 1 : 0;
                        }
                    }
                    return ok;
                });
            }
            int total = 0;
            for (Future<Integer> f : ex.invokeAll(tasks, 60, TimeUnit.SECONDS)) {
                total += f.get();
            }
            assertThat(total).isEqualTo(48 * 5);
        } finally {
            ex.shutdownNow();
        }
    }

    @Test
    void gcToALimitEvictsDownToIt() {
        try (ControlClient c = ControlClient.connect(socket)) {
            assertThat(c.call("warm", ControlProtocol.object().put("dataset", "ws/name")).get("bytes_done").asLong())
                    .isEqualTo(2350);
            assertThat(world.cachedBlocks()).isEqualTo(6);
            JsonNode gc = c.call("cache.gc", ControlProtocol.object().put("limit", "1kB"));
            assertThat(gc.get("bytes_after").asLong()).isLessThanOrEqualTo(1000);
            assertThat(world.cache.stats().sizeBytes()).isLessThanOrEqualTo(1000);
            assertThat(gc.get("bytes_evicted").asLong()).isEqualTo(gc.get("bytes_before").asLong() - gc.get("bytes_after").asLong());
        }
    }

    @Test
    void publishRunsInTheDaemonAndRefreshesTheCatalog() throws IOException {
        Path src = Files.createDirectories(tmp.resolve("src/images/cat"));
        Files.writeString(src.resolve("a.txt"), "hello");
        String version;
        try (ControlClient c = ControlClient.connect(socket)) {
            ObjectNode args = ControlProtocol.object().put("dataset", "ws/new").put("set_latest", true);
            args.putObject("artifacts").putArray("images").add(src.getParent().toString());
            JsonNode r = c.call("publish", args);
            version = r.get("version").asText();
            assertThat(version).hasSize(64);
            assertThat(r.get("dataset").asText()).isEqualTo("ws/new");
            assertThat(r.get("latest_set").asBoolean()).isTrue();
        }
        assertThat(world.catalog.latest(io.warpdata.manifest.DatasetId.parse("ws/new")).orElseThrow().hex()).isEqualTo(version);
        assertThat(world.refreshes.get()).as("the mount re-checks its links").isEqualTo(1);
    }

    @Test
    void cacheVerifyStreamsProgressAndReportsTheBytesItChecked() throws Exception {
        List<JsonNode> events = new ArrayList<>();
        try (ControlClient c = ControlClient.connect(socket)) {
            c.call("warm", ControlProtocol.object().put("dataset", "ws/name"));
            JsonNode r = c.call("cache.verify", ControlProtocol.object(), events::add);
            assertThat(r.get("blocks_checked").asLong()).isEqualTo(6);
            assertThat(r.get("bytes_checked").asLong()).as("the data bytes, not the cache's size on disk").isEqualTo(2350);
            assertThat(r.get("blocks_removed").asLong()).isZero();
        }
        assertThat(events).isNotEmpty().allSatisfy(e -> assertThat(e.get("event").asText()).isEqualTo("progress"));
        assertThat(events.getLast().get("bytes_done").asLong()).isPositive();
    }

    @Test
    void cacheVerifyRemovesABlockDamagedOnDisk() throws Exception {
        try (ControlClient c = ControlClient.connect(socket)) {
            c.call("warm", ControlProtocol.object().put("dataset", "ws/name").put("tables", "main"));
            Path block;
            try (var files = Files.walk(tmp.resolve("cache"))) {
                block = files.filter(p -> p.toString().contains("/blocks/") && Files.isRegularFile(p)).findFirst().orElseThrow();
            }
            byte[] bytes = Files.readAllBytes(block);
            bytes[bytes.length - 1] ^= 0x55;
            Files.write(block, bytes);
            JsonNode r = c.call("cache.verify", ControlProtocol.object());
            assertThat(r.get("blocks_checked").asLong()).isEqualTo(3);
            assertThat(r.get("blocks_removed").asLong()).isEqualTo(1);
        }
        assertThat(world.cachedBlocks()).isEqualTo(2);
    }

    @Test
    void typedDaemonErrorsReachTheClient() {
        try (ControlClient c = ControlClient.connect(socket)) {
            assertThatThrownBy(() -> c.call("info", ControlProtocol.object().put("dataset", "ws/missing")))
                    .isInstanceOfSatisfying(ControlException.class, e -> {
                        assertThat(e.type()).isEqualTo("DatasetNotFoundError");
                        assertThat(e.nextStep()).contains("list-remote");
                    });
            assertThat(c.call("info", ControlProtocol.object().put("dataset", "ws/name")).get("tables").has("main")).isTrue();
        }
    }

    @Test
    void clientWithoutDaemonGetsATypedErrorSayingHowToStartOne() {
        assertThatThrownBy(() -> ControlClient.connect(tmp.resolve("none.sock")))
                .isInstanceOfSatisfying(ControlException.class, e -> {
                    assertThat(e.type()).isEqualTo("DaemonUnavailable");
                    assertThat(e.nextStep()).contains("warpd");
                });
    }
}
