package io.warpdata.daemon.control;

import com.fasterxml.jackson.databind.JsonNode;
import io.warpdata.daemon.control.ops.ControlOperations;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/** The warpctl control commands against a real control socket with fake daemon parts. */
class ControlCliIT {
    @TempDir
    Path tmp;

    private final ControlFakes.Cache cache = new ControlFakes.Cache();
    private final ControlFakes.CatalogFake catalog = new ControlFakes.CatalogFake();
    private ControlServer server;
    private Map<String, String> env;

    @BeforeEach
    void start() {
        AccessPolicy policy = new AccessPolicy(ProcessIdentity.uid(), "root", Optional.empty());
        server = ControlServer.start(new ControlServer.Config(tmp.resolve("run/warpd.sock"), Optional.empty()),
                ControlOperations.standard(new ControlFakes.Daemon(), cache, catalog, Optional.empty(), policy, Clock.systemUTC()),
                policy, new PeerResolver(EtcUserDatabase.system()));
        env = Map.of("WARP_SOCKET", server.socketPath().toString(), "PATH", System.getenv("PATH"));
    }

    @AfterEach
    void stop() {
        server.close();
    }

    @Test
    void statusPrintsTheDaemonAndJsonIsParseable() throws Exception {
        TestWarpctl.Result text = TestWarpctl.run(env, tmp, "status");
        assertThat(text.exit()).isZero();
        assertThat(text.out()).contains("warpd 0.1.0-test", "mount:      /warp", "s3://bucket/prefix", "read of blob abc failed");

        TestWarpctl.Result json = TestWarpctl.run(env, tmp, "status", "--json");
        assertThat(json.exit()).isZero();
        assertThat(ControlProtocol.json().readTree(json.out()).get("mode").asText()).isEqualTo("auto");
    }

    @Test
    void socketMayBeGivenBeforeOrAfterTheCommand() {
        String sock = server.socketPath().toString();
        assertThat(TestWarpctl.run(Map.of(), tmp, "--socket", sock, "status").out()).contains("warpd 0.1.0-test");
        assertThat(TestWarpctl.run(Map.of(), tmp, "cache", "stats", "--socket", sock).exit()).isZero();
        assertThat(TestWarpctl.run(Map.of(), tmp, "--socket", sock, "cache", "stats").exit()).isZero();
    }

    @Test
    void warmShowsProgressAndSummary() {
        TestWarpctl.Result r = TestWarpctl.run(env, tmp, "warm", "ws/name", "--tables", "main", "--shards", "0:2", "--progress");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out()).contains("warmed ws/name@abababababab", "200 B in cache");
        assertThat(r.err()).contains("warm ws/name");
        assertThat(cache.size()).isEqualTo(200);
    }

    @Test
    void cacheStatsGcAndVerify() throws Exception {
        TestWarpctl.run(env, tmp, "warm", "ws/name");
        TestWarpctl.Result stats = TestWarpctl.run(env, tmp, "cache", "stats", "--json");
        assertThat(ControlProtocol.json().readTree(stats.out()).get("size_bytes").asLong()).isEqualTo(2350);
        TestWarpctl.Result gc = TestWarpctl.run(env, tmp, "cache", "gc", "--limit", "1kB");
        assertThat(gc.exit()).isZero();
        assertThat(gc.out()).contains("cache gc: 2.4 KB ->");
        assertThat(cache.size()).isLessThanOrEqualTo(1000);
        assertThat(TestWarpctl.run(env, tmp, "cache", "verify").out()).contains("blocks", "checked");
    }

    @Test
    void refreshNamesWhatItRefreshed() {
        assertThat(TestWarpctl.run(env, tmp, "refresh", "ws/name").out()).contains("refreshed ws/name");
        assertThat(TestWarpctl.run(env, tmp, "refresh").out()).contains("refreshed all");
        assertThat(catalog.refreshes).hasSize(2);
    }

    @Test
    void daemonErrorsPrintMessageAndNextStepWithExitOne() {
        TestWarpctl.Result r = TestWarpctl.run(env, tmp, "warm", "ws/missing");
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err()).contains("error: ws/missing is not published", "what to do:");

        TestWarpctl.Result none = TestWarpctl.run(Map.of("WARP_SOCKET", tmp.resolve("none.sock").toString()), tmp, "status");
        assertThat(none.exit()).isEqualTo(1);
        assertThat(none.err()).contains("no warpd control socket", "what to do: start the daemon");
    }

    @Test
    void usageErrorsExitTwo() {
        assertThat(TestWarpctl.run(env, tmp, "warm").exit()).isEqualTo(2);
        assertThat(TestWarpctl.run(env, tmp, "cache", "gc", "--bogus").exit()).isEqualTo(2);
    }

    @Test
    void publishIsUnknownWhenTheDaemonHasNoPublisher() {
        try (ControlClient c = ControlClient.connect(server.socketPath())) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> c.call("publish", ControlProtocol.object()))
                    .isInstanceOfSatisfying(ControlException.class, e -> assertThat(e.type()).isEqualTo("UnknownOperation"));
            JsonNode r = c.call("status", ControlProtocol.object());
            assertThat(r.has("version")).isTrue();
        }
    }
}
