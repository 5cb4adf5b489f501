package io.warpdata.daemon.control;

import org.junit.jupiter.api.Test;

import java.util.Optional;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AccessPolicyTest {
    private final AccessPolicy policy = new AccessPolicy(998, "warp", Optional.of(new AccessPolicy.Group("warp-admin", 990)));
    private final Peer stranger = new Peer(1000, 1000, "alice", Set.of(1000, 100));

    @Test
    void openOperationsAreAllowedToAnyPeer() {
        assertThatCode(() -> policy.check("status", AccessPolicy.Access.OPEN, stranger)).doesNotThrowAnyException();
    }

    @Test
    void privilegedOperationIsRefusedToStrangerSayingWhoMayAndHow() {
        assertThatThrownBy(() -> policy.check("cache.gc", AccessPolicy.Access.PRIVILEGED, stranger))
                .isInstanceOfSatisfying(ControlException.class, e -> {
                    assertThat(e.type()).isEqualTo("AccessDenied");
                    assertThat(e.getMessage()).contains("alice (uid 1000)", "cache.gc", "root", "warp", "warp-admin");
                    assertThat(e.nextStep()).contains("usermod -aG warp-admin alice");
                });
    }

    @Test
    void privilegedOperationIsAllowedToRootDaemonUserAndGroupMembers() {
        assertThat(policy.privileged(new Peer(0, 0, "root", Set.of(0)))).isTrue();
        assertThat(policy.privileged(new Peer(998, 998, "warp", Set.of(998)))).isTrue();
        assertThat(policy.privileged(new Peer(1001, 1001, "bob", Set.of(1001, 990)))).isTrue();
        assertThat(policy.privileged(stranger)).isFalse();
    }

    @Test
    void withoutControlGroupRefusalSuggestsConfiguringOne() {
        AccessPolicy noGroup = new AccessPolicy(998, "warp", Optional.empty());
        assertThatThrownBy(() -> noGroup.check("publish", AccessPolicy.Access.PRIVILEGED, stranger))
                .isInstanceOfSatisfying(ControlException.class,
                        e -> assertThat(e.nextStep()).contains("--control-group"));
    }
}
