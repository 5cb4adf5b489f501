package io.warpdata.daemon.control;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PeerResolverTest {
    @TempDir
    Path dir;

    private PeerResolver resolver() throws IOException {
        Path passwd = Files.writeString(dir.resolve("passwd"), """
                root:x:0:0:root:/root:/bin/bash
                # comment
                alice:x:1000:1000::/home/alice:/bin/bash
                nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
                """);
        Path group = Files.writeString(dir.resolve("group"), """
                root:x:0:
                alice:x:1000:
                warp-admin:x:990:bob,alice
                video:x:44:alice
                nogroup:x:65534:
                """);
        return new PeerResolver(new EtcUserDatabase(passwd, group));
    }

    @Test
    void resolvesNamesToNumbersWithSupplementaryGroups() throws IOException {
        Peer p = resolver().resolve("alice", "alice");
        assertThat(p.uid()).isEqualTo(1000);
        assertThat(p.gid()).isEqualTo(1000);
        assertThat(p.groups()).containsExactlyInAnyOrder(1000, 990, 44);
    }

    @Test
    void numericNamesFromUnknownUsersAreTakenAsIds() throws IOException {
        Peer p = resolver().resolve("4242", "4242");
        assertThat(p.uid()).isEqualTo(4242);
        assertThat(p.groups()).containsExactly(4242);
        assertThat(p.describe()).isEqualTo("uid 4242");
    }

    @Test
    void unknownNonNumericUserIsAnError() throws IOException {
        PeerResolver r = resolver();
        assertThatThrownBy(() -> r.resolve("mallory", "alice")).hasMessageContaining("mallory");
    }
}
