package io.warpdata.daemon.control;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * warpctl, the real command line in this process, against a real control socket over the
 * daemon's real cache, catalog and store: the forms users type, including the root's options
 * before or after the command.
 */
class ControlCliIT {
    @TempDir
    Path tmp;

    private ControlWorld world;
    private ControlServer server;
    private Map<String, String> env;

    @BeforeEach
    void start() {
        world = new ControlWorld(tmp);
        AccessPolicy policy = new AccessPolicy(ProcessIdentity.uid(), "root", Optional.empty());
        server = ControlServer.start(new ControlServer.Config(tmp.resolve("run/warpd.sock"), Optional.empty()),
                world.operations(policy), policy, new PeerResolver(EtcUserDatabase.system()));
        env = Map.of("WARP_SOCKET", server.socketPath().toString(), "PATH", System.getenv("PATH"));
    }

    @AfterEach
    void stop() {
        server.close();
        world.close();
    }

    private ControlWorld.Result warpctl(String... args) {
        return ControlWorld.warpctl(env, tmp, args);
    }

    @Test
    void statusPrintsTheDaemonWithTheRecentErrorLinesAndJsonIsParseable() throws Exception {
        ControlWorld.Result text = warpctl("status");
        assertThat(text.exit()).as(text.err()).isZero();
        assertThat(text.out()).contains("warpd 0.1.0-test", "mount:      /warp", "s3://bucket/prefix",
                "2026-11-24T01:00:00Z read /ws/name@ab/images/x.jpg failed (EIO): StoreUnavailable: timeout");
        // The cache's use and its disk's free space, as doctor checks them (audit 35).
        assertThat(text.out()).containsPattern("\n  cache: +(WARN )?\\S+cache: [0-9.]+ \\S*B used of its ");

        ControlWorld.Result json = warpctl("status", "--json");
        assertThat(json.exit()).isZero();
        assertThat(ControlProtocol.json().readTree(json.out()).get("mode").asText()).isEqualTo("auto");
    }

    @Test
    void everyRootOptionWorksBeforeOrAfterTheCommand() throws Exception {
        String sock = server.socketPath().toString();
        Map<String, String> none = Map.of("PATH", System.getenv("PATH"));
        assertThat(ControlWorld.warpctl(none, tmp, "--socket", sock, "status").out()).contains("warpd 0.1.0-test");
        assertThat(ControlWorld.warpctl(none, tmp, "status", "--socket", sock).out()).contains("warpd 0.1.0-test");
        assertThat(ControlWorld.warpctl(none, tmp, "cache", "stats", "--socket", sock).exit()).isZero();
        assertThat(ControlWorld.warpctl(none, tmp, "--socket", sock, "cache", "stats").exit()).isZero();
        for (String[] args : List.of(new String[] {"--json", "status"}, new String[] {"status", "--json"})) {
            ControlWorld.Result r = warpctl(args);
            assertThat(ControlProtocol.json().readTree(r.out()).get("version").asText()).as(String.join(" ", args))
                    .isEqualTo("0.1.0-test");
        }
        // --debug on either side: a failure shows its stack trace.
        Map<String, String> dead = Map.of("WARP_SOCKET", tmp.resolve("none.sock").toString());
        assertThat(ControlWorld.warpctl(dead, tmp, "--debug", "status").err()).contains("at io.warpdata");
        assertThat(ControlWorld.warpctl(dead, tmp, "status", "--debug").err()).contains("at io.warpdata");
        // --remote / --endpoint on either side reach the store-facing commands.
        Path store = tmp.resolve("store");
        String remote = store.toUri().toString();
        for (String[] args : List.of(new String[] {"--remote", remote, "list-remote"},
                new String[] {"list-remote", "--remote", remote},
                new String[] {"--remote", "s3://b/p", "--endpoint", "http://127.0.0.1:1", "doctor", "--json"},
                new String[] {"doctor", "--json", "--remote", "s3://b/p", "--endpoint", "http://127.0.0.1:1"})) {
            ControlWorld.Result r = ControlWorld.warpctl(none, tmp, args);
            assertThat(r.err()).as(String.join(" ", args)).doesNotContain("Unknown option");
        }
        ControlWorld.Result doctor = ControlWorld.warpctl(none, tmp, "doctor", "--json", "--remote", "s3://b/p",
                "--endpoint", "http://127.0.0.1:1");
        assertThat(doctor.out()).contains("s3://b/p");
    }

    @Test
    void doctorBesideARunningWarpdChecksItsRemoteAndCacheInsteadOfTheClientDefaults() throws Exception {
        // No remote in this shell, and a HOME whose default cache directory is not warpd's.
        Map<String, String> shell = Map.of("WARP_SOCKET", server.socketPath().toString(), "PATH", System.getenv("PATH"),
                "HOME", tmp.resolve("home").toString());

        ControlWorld.Result r = ControlWorld.warpctl(shell, tmp, "doctor", "--json");

        JsonNode checks = ControlProtocol.json().readTree(r.out()).path("checks");
        Map<String, JsonNode> byName = new java.util.HashMap<>();
        checks.forEach(c -> byName.put(c.path("name").asText(), c));
        assertThat(byName).doesNotContainKeys("remote", "cache dir");
        assertThat(byName.get("warpd's remote").path("status").asText()).isEqualTo("PASS");
        assertThat(byName.get("warpd's remote").path("detail").asText())
                .contains("warpd at " + server.socketPath() + " serves s3://bucket/prefix");
        JsonNode cache = byName.get("warpd's cache");
        assertThat(cache.path("status").asText()).as(cache.toString()).isIn("PASS", "WARN");
        assertThat(cache.path("detail").asText()).contains(tmp.resolve("cache").toString(), "used of its", "free on its disk");
        assertThat(r.out()).doesNotContain(tmp.resolve("home").toString(), "no remote configured");
        assertThat(byName.get("control socket").path("status").asText()).isEqualTo("PASS");

        // A remote given to doctor that is not warpd's is checked too, and the difference said.
        ControlWorld.Result other = ControlWorld.warpctl(shell, tmp, "doctor", "--json", "--remote", tmp.resolve("store").toUri().toString());
        JsonNode otherChecks = ControlProtocol.json().readTree(other.out()).path("checks");
        assertThat(otherChecks.findValuesAsText("name")).contains("remote", "warpd's remote");
        assertThat(other.out()).contains("is another store");
    }

    @Test
    void warmShowsProgressAndSummary() {
        ControlWorld.Result r = warpctl("warm", "ws/name", "--tables", "main", "--shards", "0:2", "--progress");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out()).contains("warmed ws/name@" + world.version.shortHex(12), "200 B in cache");
        assertThat(r.err()).contains("warm ws/name");
        assertThat(world.cachedBlocks()).isEqualTo(2);
    }

    /** A dataset larger than the cache: "warmed ... in cache", exit 0, and half of it evicted again. */
    @Test
    void aWarmThatDoesNotFitInTheCacheSaysSoAndExitsFour() {
        server.close();
        world.close();
        // Room for main's three block files (100 B and a 4 KiB header each), not for the whole
        // dataset's six: a limit under one block file keeps nothing, which warm now says.
        world = new ControlWorld(tmp.resolve("small"), 13_000);
        AccessPolicy policy = new AccessPolicy(ProcessIdentity.uid(), "root", Optional.empty());
        server = ControlServer.start(new ControlServer.Config(tmp.resolve("run/warpd.sock"), Optional.empty()),
                world.operations(policy), policy, new PeerResolver(EtcUserDatabase.system()));
        ControlWorld.Result r = warpctl("warm", "ws/name");
        assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(4);
        assertThat(r.out()).contains("warmed ws/name@", "kept in the cache of the", "asked, the rest did not fit").doesNotContain(" in cache (");
        assertThat(r.err()).contains("does not all fit in warpd's cache", "--cache-size");

        // What fits, in a cache emptied of the blocks the first warm left (which could keep out new
        // ones: warm counts only what is on disk when it ends).
        assertThat(warpctl("cache", "gc", "--limit", "0").exit()).isZero();
        ControlWorld.Result fits = warpctl("warm", "ws/name", "--tables", "main");
        assertThat(fits.exit()).as("300 B fit: " + fits.err()).isZero();
    }

    @Test
    void cacheStatsGcAndVerify() throws Exception {
        warpctl("warm", "ws/name");
        ControlWorld.Result stats = warpctl("cache", "stats", "--json");
        assertThat(ControlProtocol.json().readTree(stats.out()).get("blocks").asLong()).isEqualTo(6);
        ControlWorld.Result verify = warpctl("cache", "verify");
        assertThat(verify.exit()).as(verify.err()).isZero();
        assertThat(verify.out()).contains("cache verify: 6 blocks (2.4 KB) checked, 0 bad removed");
        ControlWorld.Result gc = warpctl("cache", "gc", "--limit", "1kB");
        assertThat(gc.exit()).isZero();
        assertThat(gc.out()).contains("cache gc: ").contains(" -> 0 B");
        assertThat(world.cache.stats().sizeBytes()).isLessThanOrEqualTo(1000);
    }

    @Test
    void refreshNamesWhatItRefreshed() {
        assertThat(warpctl("refresh", "ws/name").out()).contains("refreshed ws/name");
        assertThat(warpctl("refresh").out()).contains("refreshed all");
        assertThat(world.refreshes.get()).isEqualTo(2);
        ControlWorld.Result nope = warpctl("refresh", "ws/nope");
        assertThat(nope.exit()).isEqualTo(1);
        assertThat(nope.err()).contains("error: ws/nope is not published", "Existing: ws/name", "what to do:");
        assertThat(nope.out()).doesNotContain("refreshed");
    }

    @Test
    void daemonErrorsPrintMessageAndNextStepWithExitOne() {
        ControlWorld.Result r = warpctl("warm", "ws/missing");
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err()).contains("error: A latest version of ws/missing is not published", "Existing: ws/name", "what to do:");

        ControlWorld.Result none = ControlWorld.warpctl(Map.of("WARP_SOCKET", tmp.resolve("none.sock").toString()), tmp,
                "status");
        assertThat(none.exit()).isEqualTo(1);
        assertThat(none.err()).contains("no warpd control socket", "what to do: start the daemon");
    }

    @Test
    void usageErrorsExitTwo() {
        assertThat(warpctl("warm").exit()).isEqualTo(2);
        assertThat(warpctl("cache", "gc", "--bogus").exit()).isEqualTo(2);
    }

    @Test
    void publishIsUnknownWhenTheDaemonHasNoPublisher() {
        AccessPolicy policy = new AccessPolicy(ProcessIdentity.uid(), "root", Optional.empty());
        try (ControlServer bare = ControlServer.start(new ControlServer.Config(tmp.resolve("bare/warpd.sock"),
                Optional.empty()), world.operations(policy, false), policy, new PeerResolver(EtcUserDatabase.system()));
             ControlClient c = ControlClient.connect(bare.socketPath())) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> c.call("publish", ControlProtocol.object()))
                    .isInstanceOfSatisfying(ControlException.class, e -> assertThat(e.type()).isEqualTo("UnknownOperation"));
            JsonNode r = c.call("status", ControlProtocol.object());
            assertThat(r.has("version")).isTrue();
        }
    }
}
