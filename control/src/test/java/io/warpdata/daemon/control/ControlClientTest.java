package io.warpdata.daemon.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ControlClientTest {
    @TempDir
    Path dir;

    /**
     * A warpd that is stopped (SIGSTOP), swapped out or wedged: the kernel takes the connection,
     * nothing answers. A client with an answer bound fails, saying so, instead of waiting for good.
     */
    @Test
    void aWarpdThatTakesTheConnectionAndNeverAnswersFailsACallWithAnAnswerBound() throws Exception {
        Path socket = dir.resolve("warpd.sock");
        List<SocketChannel> held = new ArrayList<>();
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(socket));
            Thread acceptor = Thread.ofVirtual().start(() -> {
                try {
                    held.add(server.accept()); // and never answer
                } catch (Exception closed) {
                    // the test ended
                }
            });
            try (ControlClient c = ControlClient.connect(socket).answering(Duration.ofMillis(300))) {
                long t0 = System.nanoTime();
                assertThatThrownBy(() -> c.call("status", ControlProtocol.object()))
                        .isInstanceOf(ControlException.class)
                        .hasMessageContaining("did not answer 'status'")
                        .satisfies(e -> assertThat(((ControlException) e).type()).isEqualTo(ControlException.DAEMON_UNAVAILABLE));
                assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
            }
            acceptor.join();
        } finally {
            for (SocketChannel ch : held) {
                ch.close();
            }
        }
    }

    /** warpd stopped mid-publish: the client says the publish may be run again, and how to see what was made. */
    @Test
    void aConnectionClosedDuringAPublishSaysItCanBeRunAgain() throws Exception {
        Path socket = dir.resolve("warpd.sock");
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(socket));
            Thread acceptor = Thread.ofVirtual().start(() -> {
                try (SocketChannel ch = server.accept()) {
                    ch.read(java.nio.ByteBuffer.allocate(4096)); // the request, then warpd is gone
                } catch (Exception closed) {
                    // the test ended
                }
            });
            try (ControlClient c = ControlClient.connect(socket)) {
                assertThatThrownBy(() -> c.call("publish", ControlProtocol.object()))
                        .isInstanceOf(ControlException.class)
                        .hasMessageContaining("closed the control connection during 'publish'")
                        .satisfies(e -> assertThat(((ControlException) e).nextStep())
                                .contains("run the same command again", "list-remote"));
            }
            acceptor.join();
        }
    }

    /**
     * Audit 37: a user the socket refuses was told to run {@code ls -l} on a socket they may not
     * look at, and for a warpd started without --socket-group the advice amounted to joining root.
     */
    @Test
    void aRefusedUserIsToldWhichGroupToJoinAndNeverGroupRoot() {
        java.nio.file.Path sock = java.nio.file.Path.of("/run/warp/warpd.sock");
        org.assertj.core.api.Assertions.assertThat(ControlClient.joinAdvice(sock, "warp", "alice"))
                .contains("join its group warp (sudo usermod -aG warp alice");
        org.assertj.core.api.Assertions.assertThat(ControlClient.joinAdvice(sock, "root", "alice"))
                .contains("--socket-group GROUP").contains("socket-group = GROUP").doesNotContain("-aG root");
        org.assertj.core.api.Assertions.assertThat(ControlClient.joinAdvice(sock, null, "alice"))
                .contains("ls -ld /run/warp");
    }
}
