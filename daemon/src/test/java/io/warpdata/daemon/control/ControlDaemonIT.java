package io.warpdata.daemon.control;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warpdata.daemon.warpd.ControlSocket;
import io.warpdata.daemon.warpd.DaemonConfig;
import io.warpdata.blobcache.cache.CacheMode;
import io.warpdata.daemon.warpd.WarpDaemon;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Clock;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The control socket wired to a real {@link WarpDaemon} by {@link ControlSocket} (as warpd does):
 * status reports the daemon, publish through the daemon shows up in its mount on return, and the
 * socket goes away with the daemon.
 */
class ControlDaemonIT {
    private Path dir;
    private WarpDaemon daemon;
    private ControlServer server;

    @BeforeEach
    void start() throws IOException {
        dir = Files.createTempDirectory("warp-control-daemon-it");
        Path store = Files.createDirectories(dir.resolve("store"));
        DaemonConfig config = new DaemonConfig(Files.createDirectories(dir.resolve("mnt")), store.toUri().toString(),
                Optional.empty(), dir.resolve("cache"), 1L << 30, dir.resolve("run/warpd.sock"), CacheMode.AUTO, false);
        daemon = WarpDaemon.start(config);
        server = ControlSocket.start(daemon, Optional.empty(), Optional.empty(), Clock.systemUTC());
        daemon.addService(server);
    }

    @AfterEach
    void stop() throws IOException {
        if (daemon != null) {
            daemon.close();
        }
        TestDirs.deleteAfterUnmount(dir, dir.resolve("mnt"));
    }

    private JsonNode call(String op, ObjectNode args) {
        try (ControlClient c = ControlClient.connect(server.socketPath())) {
            return c.call(op, args);
        }
    }

    @Test
    void statusReportsTheRealDaemon() {
        JsonNode s = call("status", ControlProtocol.object());
        assertThat(s.get("mount").asText()).isEqualTo(dir.resolve("mnt").toString());
        assertThat(s.get("remote").asText()).startsWith("file:");
        assertThat(s.get("mode").asText()).isEqualTo("auto");
        assertThat(s.get("open_files").asLong()).isZero();
        assertThat(s.get("peer").get("privileged").asBoolean()).isTrue();
    }

    @Test
    void publishThroughTheDaemonAppearsInItsMountAndSocketGoesAwayWithIt() throws Exception {
        Path src = Files.createDirectories(dir.resolve("src"));
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement()) {
            st.execute("COPY (SELECT i AS id, 'row ' || i AS note FROM range(100) t(i)) TO '"
                    + src.resolve("part-0.parquet") + "' (FORMAT PARQUET)");
        }
        ObjectNode args = ControlProtocol.object().put("dataset", "ws/fresh").put("set_latest", true);
        args.putObject("tables").putArray("main").add(src.resolve("part-0.parquet").toString());
        JsonNode r = call("publish", args);
        String version = r.get("version").asText();
        assertThat(r.get("summary").asText()).contains("published ws/fresh@" + version);

        Path mnt = dir.resolve("mnt");
        assertThat(Files.readSymbolicLink(mnt.resolve("ws/fresh")).toString()).isEqualTo("fresh@" + version);
        assertThat(Files.readAllBytes(mnt.resolve("ws/fresh/main/part-0.parquet")))
                .isEqualTo(Files.readAllBytes(src.resolve("part-0.parquet")));
        // status counts the files open in the mount (the kernel opens them without asking warpd),
        // and directories apart.
        try (java.nio.channels.FileChannel open = java.nio.channels.FileChannel.open(mnt.resolve("ws/fresh/main/part-0.parquet"));
             java.nio.file.DirectoryStream<Path> listing = Files.newDirectoryStream(mnt.resolve("ws/fresh/main"))) {
            JsonNode s = call("status", ControlProtocol.object());
            assertThat(s.get("open_files").asLong()).as(s.toString()).isEqualTo(1);
            assertThat(s.get("open_directories").asLong()).as(s.toString()).isPositive();
            assertThat(open.size()).isPositive();
            assertThat(listing.iterator().hasNext()).isTrue();
        }
        assertThat(call("status", ControlProtocol.object()).get("open_files").asLong()).isZero();
        JsonNode info = call("info", ControlProtocol.object().put("dataset", "ws/fresh"));
        assertThat(info.get("tables").get("main").get("rows").asLong()).isEqualTo(100);

        if (daemon.reader() instanceof io.warpdata.blobcache.cache.BlockCache) {
            assertThat(call("warm", ControlProtocol.object().put("dataset", "ws/fresh")).get("bytes_done").asLong()).isPositive();
        } else {
            // A reader without a disk cache: warm says so instead of pretending.
            assertThatThrownBy(() -> call("warm", ControlProtocol.object().put("dataset", "ws/fresh")))
                    .isInstanceOfSatisfying(ControlException.class, e -> assertThat(e.type()).isEqualTo("Unsupported"));
        }

        Path socket = server.socketPath();
        daemon.close();
        daemon = null;
        assertThat(Files.exists(socket)).isFalse();
    }
}
