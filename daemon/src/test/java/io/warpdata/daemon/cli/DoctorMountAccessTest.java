package io.warpdata.daemon.cli;

import io.warpdata.daemon.control.protocol.StatusCall;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** Audit 37: doctor as a user reading another user's warpd (a shared box). */
class DoctorMountAccessTest {
    @TempDir
    Path tmp;

    private static Doctor.Daemon warpd(Path mount) {
        StatusCall.Reply status = new StatusCall.Reply("0.1", mount.toString(), "s3://b/warp", "auto", null, 1, null, null,
                null, null, null, null, null, null);
        return new Doctor.Daemon(status, null, null);
    }

    @Test
    void aMountThatDoesNotLetThisUserInSaysWhyAndHowToOpenIt() {
        Doctor.Check shut = Doctor.mountAccess(tmp, m -> false);
        assertThat(shut.status()).isEqualTo(Doctor.Status.FAIL);
        assertThat(shut.detail()).contains(tmp.toString(), "without --allow-other");
        assertThat(shut.fix()).contains("allow-other = true", "user_allow_other");
        assertThat(Doctor.mountAccess(tmp).status()).as("a folder this user may enter").isEqualTo(Doctor.Status.PASS);
    }

    @Test
    void withAWarpdMountedAlreadyWhatMountingNeedsIsNoFailureOfThisUser() {
        Doctor.Check devFuse = new Doctor.Check("/dev/fuse", Doctor.Status.FAIL, "cannot open /dev/fuse: Permission denied",
                "sudo chmod 0666 /dev/fuse");
        Doctor.Check c = Doctor.mountedAlready(devFuse, warpd(tmp));
        assertThat(c.status()).isEqualTo(Doctor.Status.WARN);
        assertThat(c.detail()).contains("cannot open /dev/fuse", "only to start a warpd as this user", tmp.toString());
        Doctor.Check fine = new Doctor.Check("fusermount", Doctor.Status.PASS, "/usr/bin/fusermount3", "");
        assertThat(Doctor.mountedAlready(fine, warpd(tmp))).isSameAs(fine);
    }
}
