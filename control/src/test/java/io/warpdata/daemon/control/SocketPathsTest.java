package io.warpdata.daemon.control;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class SocketPathsTest {
    @Test
    void rootUsesRunWarp() {
        assertThat(SocketPaths.defaultSocket(Map.of("XDG_RUNTIME_DIR", "/run/user/0"), 0)).isEqualTo(Path.of("/run/warp/warpd.sock"));
    }

    @Test
    void userUsesXdgRuntimeDir() {
        assertThat(SocketPaths.defaultSocket(Map.of("XDG_RUNTIME_DIR", "/run/user/1000"), 1000))
                .isEqualTo(Path.of("/run/user/1000/warp/warpd.sock"));
    }

    @Test
    void userWithoutRuntimeDirFallsBackToPrivateTmpDirectory() {
        assertThat(SocketPaths.defaultSocket(Map.of(), 1000)).isEqualTo(Path.of("/tmp/warp-1000/warpd.sock"));
    }

    @Test
    void warpSocketEnvironmentWins() {
        assertThat(SocketPaths.defaultSocket(Map.of("WARP_SOCKET", "/srv/w.sock"), 0)).isEqualTo(Path.of("/srv/w.sock"));
    }
}
