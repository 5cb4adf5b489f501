package io.warpdata.daemon.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.warpdata.daemon.control.protocol.MirrorStatus;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What doctor says of each mirror, from warpd's counters (it does not probe them itself). */
class DoctorMirrorsTest {
    private static MirrorStatus mirror(String state, long hits, long misses) {
        return new MirrorStatus("http://cache:8080/warp", state, hits * 1024, hits + misses == 0 ? 0 : (double) hits / (hits + misses),
                hits, misses, 0, 0, 0, 0, 0, 0, 0);
    }

    @Test
    void aMirrorThatHeldNothingOfManyRequestsIsAWarningAndOneNeverAskedSaysSo() {
        List<Doctor.Check> checks = Doctor.mirrors(List.of(mirror("up", 0, 500), mirror("up", 0, 0), mirror("up", 40, 500),
                mirror("down", 0, 3)));
        assertThat(checks.get(0).status()).isEqualTo(Doctor.Status.WARN);
        assertThat(checks.get(0).toString()).contains("held nothing", "wrong BASE");
        assertThat(checks.get(1).status()).isEqualTo(Doctor.Status.PASS);
        assertThat(checks.get(1).toString()).contains("not asked yet", "does not probe");
        assertThat(checks.get(2).status()).isEqualTo(Doctor.Status.PASS);
        assertThat(checks.get(3).status()).isEqualTo(Doctor.Status.WARN);
        assertThat(checks.get(3).toString()).contains("curl -r 0-0", "206").doesNotContain("curl -I");
    }
}
