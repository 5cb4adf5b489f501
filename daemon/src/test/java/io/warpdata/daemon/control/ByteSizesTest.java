package io.warpdata.daemon.control;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ByteSizesTest {
    @Test
    void parsesDecimalAndBinaryUnits() {
        assertThat(ByteSizes.parse("500MB")).isEqualTo(500_000_000L);
        assertThat(ByteSizes.parse("200GB")).isEqualTo(200_000_000_000L);
        assertThat(ByteSizes.parse("1TiB")).isEqualTo(1L << 40);
        assertThat(ByteSizes.parse("1048576")).isEqualTo(1_048_576L);
        assertThat(ByteSizes.parse("1.5k")).isEqualTo(1500L);
    }

    @Test
    void rejectsNonSizesNamingThem() {
        assertThatThrownBy(() -> ByteSizes.parse("lots")).hasMessageContaining("'lots'");
        assertThatThrownBy(() -> ByteSizes.parse("iB")).hasMessageContaining("'iB'");
    }
}
