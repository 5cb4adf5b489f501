package io.warpdata.vfs.fuse;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

class KernelReadAheadTest {
    @Test
    void decodesFuseAnonymousDevices() {
        assertThat(KernelReadAhead.knob(52)).isEqualTo(Path.of("/sys/class/bdi/0:52/read_ahead_kb"));
        // minor numbers above 255 are split around the major in st_dev
        assertThat(KernelReadAhead.knob(0x12000034L)).isEqualTo(Path.of("/sys/class/bdi/0:" + 0x12034 + "/read_ahead_kb"));
    }

    @Test
    void decodesBlockDevices() {
        assertThat(KernelReadAhead.knob((259L << 8) | 3)).isEqualTo(Path.of("/sys/class/bdi/259:3/read_ahead_kb"));
    }

    @Test
    void aMissingMountPointIsReportedNotThrown() {
        assertThat(KernelReadAhead.raise(Path.of("/nonexistent/warp-mount"), 4 << 20)).isFalse();
    }
}
