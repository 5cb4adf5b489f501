package io.warpdata.daemon;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ByteSizeTest {

    @Test
    void siUnitsArePowersOfThousand() {
        assertThat(ByteSize.parse("500MB")).isEqualTo(500_000_000L);
        assertThat(ByteSize.parse("200GB")).isEqualTo(200_000_000_000L);
        assertThat(ByteSize.parse("3kb")).isEqualTo(3_000L);
        assertThat(ByteSize.parse("2TB")).isEqualTo(2_000_000_000_000L);
    }

    @Test
    void iecUnitsAndBareLettersArePowersOfTwo() {
        assertThat(ByteSize.parse("1TiB")).isEqualTo(1L << 40);
        assertThat(ByteSize.parse("4GiB")).isEqualTo(4L << 30);
        assertThat(ByteSize.parse("64M")).isEqualTo(64L << 20);
        assertThat(ByteSize.parse("1.5G")).isEqualTo(3L << 29);
    }

    @Test
    void plainNumberIsBytes() {
        assertThat(ByteSize.parse("4096")).isEqualTo(4096);
        assertThat(ByteSize.parse(" 12 B ")).isEqualTo(12);
    }

    @Test
    void rejectsGarbageNamingTheText() {
        assertThatThrownBy(() -> ByteSize.parse("lots")).hasMessageContaining("'lots'").hasMessageContaining("200GB");
        assertThatThrownBy(() -> ByteSize.parse("10XB")).hasMessageContaining("'10XB'");
        assertThatThrownBy(() -> ByteSize.parse("-5GB")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ByteSize.parse("99999999999TiB")).hasMessageContaining("too large");
    }
}
