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

    /** A user in the warp group, with no warpd of their own, talks to the installed service. */
    @Test
    void aClientWithoutItsOwnSocketTalksToTheServiceWhenThereIsOne(@org.junit.jupiter.api.io.TempDir Path tmp)
            throws java.io.IOException {
        Path service = tmp.resolve("service.sock");
        Map<String, String> env = Map.of("XDG_RUNTIME_DIR", tmp.resolve("run").toString());
        Path own = tmp.resolve("run").resolve("warp").resolve("warpd.sock");
        assertThat(SocketPaths.clientSocket(env, 1000, service)).as("no service either: its own, for the error").isEqualTo(own);
        java.nio.file.Files.createFile(service);
        assertThat(SocketPaths.clientSocket(env, 1000, service)).isEqualTo(service);
        java.nio.file.Files.createDirectories(own.getParent());
        java.nio.file.Files.createFile(own);
        assertThat(SocketPaths.clientSocket(env, 1000, service)).as("its own warpd wins").isEqualTo(own);
        assertThat(SocketPaths.clientSocket(Map.of("WARP_SOCKET", "/x/y.sock"), 1000, service)).isEqualTo(Path.of("/x/y.sock"));
        assertThat(SocketPaths.defaultSocket(env, 1000)).as("a daemon's own default is unchanged").isEqualTo(own);
    }

    /** Another user made /tmp/warp-<uid> first and serves a fake warpd there: the client will not talk to it. */
    @Test
    void aTmpSocketFolderOfAnotherUserOrOpenToOthersIsRefused() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(ProcessIdentity.uid() == 0, "needs root to make another user's folder");
        int uid = 4242;
        Path dir = Path.of("/tmp", "warp-" + uid);
        java.nio.file.Files.createDirectories(dir);
        try {
            Path sock = java.nio.file.Files.createFile(dir.resolve("warpd.sock")); // exists: as a socket would
            java.nio.file.Files.setAttribute(dir, "unix:uid", 1002);
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> SocketPaths.clientSocket(Map.of(), uid, Path.of("/nonexistent")))
                    .isInstanceOf(ControlException.class).hasMessageContaining("belongs to uid 1002");
            java.nio.file.Files.setAttribute(dir, "unix:uid", uid);
            java.nio.file.Files.setAttribute(dir, "unix:mode", 0777);
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> SocketPaths.clientSocket(Map.of(), uid, Path.of("/nonexistent")))
                    .isInstanceOf(ControlException.class).hasMessageContaining("can be written by others");
            java.nio.file.Files.setAttribute(dir, "unix:mode", 0700);
            assertThat(SocketPaths.clientSocket(Map.of(), uid, Path.of("/nonexistent"))).isEqualTo(sock);
        } finally {
            java.nio.file.Files.deleteIfExists(dir.resolve("warpd.sock"));
            java.nio.file.Files.deleteIfExists(dir);
        }
    }
}
