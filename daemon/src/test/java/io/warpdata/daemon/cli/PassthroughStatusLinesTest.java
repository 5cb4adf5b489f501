package io.warpdata.daemon.cli;

import io.warpdata.daemon.control.protocol.PassthroughStatus;
import io.warpdata.daemon.control.protocol.StatusCall;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** How {@code warpctl status} and {@code warpctl doctor} show FUSE passthrough. */
class PassthroughStatusLinesTest {

    private static Doctor.Daemon daemon(PassthroughStatus p) {
        StatusCall.Reply s = new StatusCall.Reply("0.1.0", "/warp", "s3://b/p", "auto", "2026-01-01T00:00:00Z", 5,
                0L, 0L, List.of(), null, List.of(), new StatusCall.Asker(0, "root", true), p, null);
        return new Doctor.Daemon(s, null, null);
    }

    @Test
    void onShowsWhatItServedAndPassesTheDoctor() {
        PassthroughStatus on = new PassthroughStatus("on", "", 12, 3, 3_000_000);
        assertThat(StatusCommand.passthroughLine(on)).isEqualTo("on: 12 open(s) served from local copies (3 copies, 3.0 MB)");
        assertThat(StatusCommand.passthroughLine(new PassthroughStatus("on", "", 1, 1, 0))).contains("(1 copy,");
        Doctor.Check c = Doctor.passthrough(daemon(on)).orElseThrow();
        assertThat(c.status()).isEqualTo(Doctor.Status.PASS);
        assertThat(c.detail()).startsWith("on: 12 open(s)");
    }

    @Test
    void offIsOneWordAndNoDoctorCheck() {
        PassthroughStatus off = new PassthroughStatus("off", null, 0, 0, 0);
        assertThat(StatusCommand.passthroughLine(off)).isEqualTo("off");
        assertThat(Doctor.passthrough(daemon(off))).isEmpty();
        assertThat(Doctor.passthrough(daemon(null))).as("a warpd that does not report it").isEmpty();
    }

    @Test
    void askedForButNotRunningIsAWarningWithItsFix() {
        PassthroughStatus noCap = new PassthroughStatus("unavailable", "warpd lacks CAP_SYS_ADMIN, which the kernel asks"
                + " for to serve a file from a copy: run warpd as root (or with that capability), or drop --passthrough",
                0, 0, 0);
        assertThat(StatusCommand.passthroughLine(noCap)).startsWith("unavailable: warpd lacks CAP_SYS_ADMIN");
        Doctor.Check c = Doctor.passthrough(daemon(noCap)).orElseThrow();
        assertThat(c.status()).isEqualTo(Doctor.Status.WARN);
        assertThat(c.detail()).isEqualTo("asked for, but unavailable: warpd lacks CAP_SYS_ADMIN, which the kernel asks for"
                + " to serve a file from a copy");
        assertThat(c.fix()).isEqualTo("run warpd as root (or with that capability), or drop --passthrough");

        PassthroughStatus remote = new PassthroughStatus("unavailable", "--mode remote keeps no disk cache to hold copies"
                + " in; use --mode auto or hybrid", 0, 0, 0);
        Doctor.Check r = Doctor.passthrough(daemon(remote)).orElseThrow();
        assertThat(r.status()).isEqualTo(Doctor.Status.WARN);
        assertThat(r.detail()).contains("--mode remote keeps no disk cache");
        assertThat(r.fix()).isEqualTo("drop --passthrough");
    }
}
