package io.warpdata.daemon.warpd;

import io.warpdata.blobcache.cache.CacheMode;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DaemonConfigTest {
    private static final Path HOME = Path.of("/home/ada");

    @Test
    void defaultsComeFromTheEnvironmentThenBuiltIns() {
        DaemonConfig c = DaemonConfig.resolve(Map.of("mount", "/warp"), new Properties(),
                Map.of("WARP_REMOTE", "s3://bucket/p", "WARP_CACHE_SIZE_GB", "7", "XDG_RUNTIME_DIR", "/run/user/1000"), HOME, 1000);
        assertThat(c.remote()).isEqualTo("s3://bucket/p");
        assertThat(c.cacheSizeBytes()).isEqualTo(7_000_000_000L);
        assertThat(c.cacheDir()).isEqualTo(Path.of("/home/ada/.cache/warpdata"));
        assertThat(c.socket()).isEqualTo(Path.of("/run/user/1000/warp/warpd.sock"));
        assertThat(c.mode()).isEqualTo(CacheMode.AUTO);
        assertThat(c.endpoint()).isEmpty();
        assertThat(c.allowOther()).isFalse();
        assertThat(c.passthrough()).as("files open without a round trip unless asked").isFalse();
        assertThat(c.statsFile()).contains(Path.of("/home/ada/.cache/warpdata/stats.json"));
        // A size with its unit in the variable of GB is named as the variable (audit 31).
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> DaemonConfig.resolve(Map.of("mount", "/warp"),
                        new Properties(), Map.of("WARP_REMOTE", "s3://bucket/p", "WARP_CACHE_SIZE_GB", "20MB"), HOME, 1000))
                .isInstanceOf(ConfigException.class).hasMessageContaining("WARP_CACHE_SIZE_GB=20MB is not a number of GB")
                .satisfies(e -> assertThat(((ConfigException) e).nextStep()).contains("WARP_CACHE_SIZE_GB=20"));
        assertThat(DaemonConfig.resolve(Map.of("mount", "/warp"), new Properties(),
                Map.of("WARP_REMOTE", "s3://bucket/p", "WARP_CACHE_SIZE_GB", " 1.5 "), HOME, 1000).cacheSizeBytes())
                .isEqualTo(1_500_000_000L);
    }

    /** Audit 37: the config file refused socket-group and control-group, and the installed unit runs warpd --config alone. */
    @Test
    void theSocketsGroupsComeFromTheCommandLineTheConfigFileOrTheEnvironment() {
        Properties file = new Properties();
        file.setProperty("socket-group", "\"warp\"");
        file.setProperty("control-group", "warp-admin");
        DaemonConfig.resolve(Map.of("mount", "/warp", "remote", "s3://b"), file, Map.of(), HOME, 0); // known keys
        Map<String, String> env = Map.of("WARP_SOCKET_GROUP", "env-g", "WARP_CONTROL_GROUP", "env-c");
        assertThat(DaemonConfig.accessGroup(DaemonConfig.SOCKET_GROUP, null, file, env)).contains("warp");
        assertThat(DaemonConfig.accessGroup(DaemonConfig.CONTROL_GROUP, "cli-c", file, env)).contains("cli-c");
        assertThat(DaemonConfig.accessGroup(DaemonConfig.SOCKET_GROUP, null, new Properties(), env)).contains("env-g");
        assertThat(DaemonConfig.accessGroup(DaemonConfig.CONTROL_GROUP, null, new Properties(), Map.of())).isEmpty();
    }

    /**
     * Audit 37: a password in --endpoint was never used and was shown by warpctl status. It is
     * dropped (with a warning), not refused: a config that started before still starts.
     */
    @Test
    void anEndpointWithCredentialsInItLosesThemAndStillStarts() {
        assertThat(DaemonConfig.resolve(Map.of("mount", "/warp", "remote", "s3://b",
                "endpoint", "http://EPUSER:EPPASS@127.0.0.1:9000"), new Properties(), Map.of(), HOME, 0).endpoint())
                .contains("http://127.0.0.1:9000");
        assertThat(DaemonConfig.withoutCredentials("https://a_b:c@my_host.local/x")).isEqualTo("https://my_host.local/x");
        assertThat(DaemonConfig.withoutCredentials("http://127.0.0.1:9000")).isEqualTo("http://127.0.0.1:9000");
        assertThat(DaemonConfig.withoutCredentials("http://h:9000/p@q")).as("an @ in the path is no user")
                .isEqualTo("http://h:9000/p@q");
    }

    @Test
    void rootGetsTheSystemSocketWarpctlLooksFor() {
        DaemonConfig c = DaemonConfig.resolve(Map.of("mount", "/warp", "remote", "s3://b"), new Properties(), Map.of(), HOME, 0);
        assertThat(c.socket()).isEqualTo(Path.of("/run/warp/warpd.sock"));
    }

    @Test
    void commandLineBeatsConfigFileWhichBeatsEnvironment() {
        Properties file = new Properties();
        file.setProperty("remote", "s3://from-file/x");
        file.setProperty("mode", "hybrid");
        file.setProperty("cache-size", "1TiB");
        file.setProperty("allow-other", "true");
        DaemonConfig c = DaemonConfig.resolve(Map.of("mount", "/warp", "mode", "remote"), file,
                Map.of("WARP_REMOTE", "s3://from-env/x", "WARP_MODE", "local", "WARP_S3_ENDPOINT", "http://127.0.0.1:9000",
                        "WARP_SOCKET", "/run/warp.sock"), HOME, 1000);
        assertThat(c.remote()).isEqualTo("s3://from-file/x");
        assertThat(c.mode()).isEqualTo(CacheMode.REMOTE);
        // Remote mode writes nothing to disk: no stats.json over an auto warpd's on the same cache dir (audit 31).
        assertThat(c.statsFile()).isEmpty();
        assertThat(c.cacheSizeBytes()).isEqualTo(1L << 40);
        assertThat(c.endpoint()).isEqualTo(Optional.of("http://127.0.0.1:9000"));
        assertThat(c.socket()).isEqualTo(Path.of("/run/warp.sock"));
        assertThat(c.allowOther()).isTrue();
    }

    @Test
    void aConfigFileValueInQuotesIsReadWithoutThem() {
        Properties file = new Properties();
        file.setProperty("mount", "'/warp'");
        file.setProperty("remote", " \"s3://bucket1/warp\" ");
        file.setProperty("cache-size", "\"20GB\"");
        DaemonConfig c = DaemonConfig.resolve(Map.of(), file, Map.of(), HOME, 0);
        assertThat(c.remote()).isEqualTo("s3://bucket1/warp");
        assertThat(c.mountPoint()).isEqualTo(Path.of("/warp"));
        assertThat(c.cacheSizeBytes()).isEqualTo(20_000_000_000L);
        assertThat(DaemonConfig.unquoted("\"s3://b")).as("one quote is not a pair").isEqualTo("\"s3://b");
    }

    @Test
    void passthroughIsOnOrOffFromAnySourceAndAnythingElseSaysWhatItTakes() {
        Map<String, String> cli = Map.of("mount", "/warp", "remote", "s3://b");
        assertThat(DaemonConfig.resolve(Map.of("mount", "/warp", "remote", "s3://b", "passthrough", "on"), new Properties(),
                Map.of(), HOME, 0).passthrough()).isTrue();
        assertThat(DaemonConfig.resolve(cli, new Properties(), Map.of("WARP_PASSTHROUGH", "ON"), HOME, 0).passthrough())
                .isTrue();
        Properties file = new Properties();
        file.setProperty("passthrough", "off");
        assertThat(DaemonConfig.resolve(cli, file, Map.of("WARP_PASSTHROUGH", "on"), HOME, 0).passthrough()).isFalse();
        assertThatThrownBy(() -> DaemonConfig.resolve(Map.of("mount", "/warp", "remote", "s3://b", "passthrough", "maybe"),
                new Properties(), Map.of(), HOME, 0))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("maybe")
                .satisfies(e -> assertThat(((ConfigException) e).nextStep()).contains("--passthrough on"));
    }

    @Test
    void missingRemoteSaysHowToGiveIt() {
        assertThatThrownBy(() -> DaemonConfig.resolve(Map.of("mount", "/warp"), new Properties(), Map.of(), HOME, 1000))
                .isInstanceOf(ConfigException.class)
                .satisfies(e -> assertThat(((ConfigException) e).nextStep()).contains("--remote").contains("WARP_REMOTE"));
    }

    @Test
    void missingMountSaysHowToGiveIt() {
        assertThatThrownBy(() -> DaemonConfig.resolve(Map.of("remote", "s3://b"), new Properties(), Map.of(), HOME, 1000))
                .isInstanceOf(ConfigException.class)
                .satisfies(e -> assertThat(((ConfigException) e).nextStep()).contains("--mount"));
    }

    @Test
    void badModeAndSizeAndUnknownKeysAreRejected() {
        Map<String, String> base = Map.of("mount", "/warp", "remote", "s3://b");
        assertThatThrownBy(() -> DaemonConfig.resolve(Map.of("mount", "/w", "remote", "s3://b", "mode", "turbo"),
                new Properties(), Map.of(), HOME, 1000)).hasMessageContaining("turbo");
        assertThatThrownBy(() -> DaemonConfig.resolve(Map.of("mount", "/w", "remote", "s3://b", "cache-size", "big"),
                new Properties(), Map.of(), HOME, 1000)).hasMessageContaining("big");
        Properties typo = new Properties();
        typo.setProperty("cache_size", "1GB");
        assertThatThrownBy(() -> DaemonConfig.resolve(base, typo, Map.of(), HOME, 1000)).hasMessageContaining("cache_size");
    }

    @Test
    void metricsAreOffByDefaultAndABarePortMeansLoopback() {
        Map<String, String> base = Map.of("mount", "/warp", "remote", "s3://b");
        assertThat(DaemonConfig.resolve(base, new Properties(), Map.of(), HOME, 0).metricsListen()).isEmpty();

        var bare = DaemonConfig.resolve(Map.of("mount", "/warp", "remote", "s3://b", "metrics-listen", "9567"),
                new Properties(), Map.of(), HOME, 0).metricsListen().orElseThrow();
        assertThat(bare.getAddress().isLoopbackAddress()).isTrue();
        assertThat(bare.getPort()).isEqualTo(9567);

        var any = DaemonConfig.resolve(base, new Properties(), Map.of("WARP_METRICS_LISTEN", "0.0.0.0:9100"), HOME, 0)
                .metricsListen().orElseThrow();
        assertThat(any.getAddress().isAnyLocalAddress()).isTrue();
        assertThat(any.getPort()).isEqualTo(9100);
        assertThat(DaemonConfig.listenAddress("[::1]:9567").getAddress().isLoopbackAddress()).isTrue();
    }

    @Test
    void badMetricsAddressSaysWhatToPass() {
        for (String bad : new String[] {"nine", "127.0.0.1:", "127.0.0.1:70000", ":9567"}) {
            assertThatThrownBy(() -> DaemonConfig.listenAddress(bad)).as(bad).isInstanceOf(ConfigException.class)
                    .hasMessageContaining("bad metrics address")
                    .satisfies(e -> assertThat(((ConfigException) e).nextStep()).contains("--metrics-listen"));
        }
    }
}
