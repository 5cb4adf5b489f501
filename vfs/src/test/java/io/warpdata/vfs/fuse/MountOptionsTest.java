package io.warpdata.vfs.fuse;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MountOptionsTest {
    @Test
    void onlyKernelAndFusermountOptionsAreMountOptions() {
        List<String> o = List.of(MountOptions.defaults(false).optionString().split(","));
        assertThat(o).containsExactly("ro", "fsname=warp", "subtype=warp", "default_permissions", "max_read=1048576");
        // libfuse's own options (timeouts, kernel_cache) are negotiated per reply now, never mount options
        assertThat(o).noneMatch(s -> s.contains("timeout") || s.equals("kernel_cache"));
        assertThat(MountOptions.defaults(true).optionString()).endsWith(",allow_other");
    }

    @Test
    void aNegativeTimeoutIsRefused() {
        assertThatThrownBy(() -> new MountOptions(false, -1)).isInstanceOf(IllegalArgumentException.class);
    }
}
