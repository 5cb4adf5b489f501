package io.warpdata.vfs.fuse;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DevFuseLoadTest {
    @Test
    void aMissingLibfuse2IsATypedMountErrorThatSaysWhatToInstall() {
        // Before: an UnsatisfiedLinkError escaped the start with a stack trace, and warpd's stop waited 30 s.
        assertThatThrownBy(() -> DevFuse.libFuse("warp-test-absent", "libwarp-test-absent.so.2"))
                .isInstanceOfSatisfying(FuseMountException.class, e -> {
                    assertThat(e.getMessage())
                            .contains("libwarp-test-absent.so.2 is not installed");
                    assertThat(e.nextStep()).contains("apt-get install libfuse2");
                    assertThat(e.type()).isEqualTo("fuse_mount");
                });
    }
}
