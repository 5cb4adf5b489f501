package io.warpdata.daemon.warpd;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PointerTtlTest {
    private static DaemonConfig resolve(Map<String, String> cli, Map<String, String> env) {
        Map<String, String> base = new java.util.HashMap<>(Map.of("mount", "/warp", "remote", "s3://b/p"));
        base.putAll(cli);
        return DaemonConfig.resolve(base, new Properties(), env, Path.of("/home/u"), 1000);
    }

    @Test
    void thePointerTtlDefaultsToThirtySecondsAndComesFromOptionsOrEnvironment() {
        assertThat(resolve(Map.of(), Map.of()).pointerTtl()).isEqualTo(Duration.ofSeconds(30));
        assertThat(resolve(Map.of("pointer-ttl", "2s"), Map.of()).pointerTtl()).isEqualTo(Duration.ofSeconds(2));
        assertThat(resolve(Map.of(), Map.of("WARP_POINTER_TTL", "2m")).pointerTtl()).isEqualTo(Duration.ofMinutes(2));
        assertThat(resolve(Map.of("pointer-ttl", "750ms"), Map.of()).pointerTtl()).isEqualTo(Duration.ofMillis(750));
        assertThat(resolve(Map.of("pointer-ttl", "45"), Map.of()).pointerTtl()).isEqualTo(Duration.ofSeconds(45));
    }

    @Test
    void aBadOrZeroTtlIsAConfigErrorSayingHowToWriteOne() {
        assertThatThrownBy(() -> resolve(Map.of("pointer-ttl", "soon"), Map.of()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("bad duration 'soon'");
        assertThatThrownBy(() -> resolve(Map.of("pointer-ttl", "0s"), Map.of()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("must be positive");
    }
}
