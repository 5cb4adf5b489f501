package io.warpdata.vfs.fuse;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class KernelVersionTest {
    @Test
    void parsesMajorAndMinorOfDistributionVersionStrings() {
        assertThat(KernelVersion.parse("6.18.44-fc-v669")).isEqualTo(new KernelVersion(6, 18));
        assertThat(KernelVersion.parse("4.19.0-27-amd64")).isEqualTo(new KernelVersion(4, 19));
        assertThat(KernelVersion.parse("5.4")).isEqualTo(new KernelVersion(5, 4));
    }

    @Test
    void unreadableVersionsAreZeroSoThatFeatureChecksFailSafe() {
        for (String bad : new String[] {"", "linux", "6", "6.", ".5", "x6.1"}) {
            assertThat(KernelVersion.parse(bad)).as(bad).isEqualTo(new KernelVersion(0, 0));
            assertThat(KernelVersion.parse(bad).atLeast(4, 19)).as(bad).isFalse();
        }
    }

    @Test
    void atLeastComparesMajorThenMinor() {
        assertThat(new KernelVersion(4, 19).atLeast(4, 19)).isTrue();
        assertThat(new KernelVersion(4, 18).atLeast(4, 19)).isFalse();
        assertThat(new KernelVersion(5, 0).atLeast(4, 19)).isTrue();
        assertThat(new KernelVersion(3, 20).atLeast(4, 19)).isFalse();
    }
}
