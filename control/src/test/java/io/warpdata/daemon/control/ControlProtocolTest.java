package io.warpdata.daemon.control;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ControlProtocolTest {
    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void parsesRequestWithArgs() {
        ControlProtocol.Request r = ControlProtocol.parseRequest(b("{\"id\":7,\"op\":\"warm\",\"args\":{\"dataset\":\"ws/a\"}}"));
        assertThat(r.id().asLong()).isEqualTo(7);
        assertThat(r.op()).isEqualTo("warm");
        assertThat(r.args().get("dataset").asText()).isEqualTo("ws/a");
    }

    @Test
    void anErrorsDetailsTravelBesideItsMessage() throws Exception {
        ControlException lost = new ControlException("PointerMoved", "latest moved", "point it yourself", null,
                java.util.Map.of("version", "ab".repeat(32)));
        com.fasterxml.jackson.databind.JsonNode wire = ControlProtocol.json().readTree(
                ControlProtocol.json().writeValueAsString(ControlProtocol.error(
                        com.fasterxml.jackson.databind.node.IntNode.valueOf(3), lost)));
        assertThat(wire.path("error").path("version").asText()).isEqualTo("ab".repeat(32));
        assertThat(wire.path("error").path("type").asText()).isEqualTo("PointerMoved");
        ControlProtocol.ErrorBody back = ControlProtocol.incoming(wire).error();
        assertThat(back.details()).containsEntry("version", "ab".repeat(32)).hasSize(1);
        assertThat(back.nextStep()).isEqualTo("point it yourself");
    }

    @Test
    void malformedJsonIsBadRequestWithoutId() {
        assertThatThrownBy(() -> ControlProtocol.parseRequest(b("{\"id\":1,")))
                .isInstanceOfSatisfying(ControlProtocol.BadRequest.class, e -> {
                    assertThat(e.id().isNull()).isTrue();
                    assertThat(e.asControlException().type()).isEqualTo("BadRequest");
                });
    }

    @Test
    void missingOpKeepsTheId() {
        assertThatThrownBy(() -> ControlProtocol.parseRequest(b("{\"id\":\"x\"}")))
                .isInstanceOfSatisfying(ControlProtocol.BadRequest.class, e -> assertThat(e.id().asText()).isEqualTo("x"));
    }

    @Test
    void outputIsOneLineEvenWithNewlinesInStrings() throws Exception {
        byte[] line = ControlProtocol.line(ControlProtocol.error(ControlProtocol.object().numberNode(1), "T", "a\nb", "c"));
        String s = new String(line, StandardCharsets.UTF_8);
        assertThat(s.indexOf('\n')).isEqualTo(s.length() - 1);
        JsonNode n = ControlProtocol.json().readTree(s);
        assertThat(n.get("error").get("message").asText()).isEqualTo("a\nb");
        assertThat(n.get("ok").asBoolean()).isFalse();
    }
}
