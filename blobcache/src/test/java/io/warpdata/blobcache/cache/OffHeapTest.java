package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class OffHeapTest {

    @Test
    void isZeroedKeepsWhatIsWrittenAndRefusesEveryAccessOutsideItself() {
        OffHeap m = OffHeap.allocate(64);
        assertThat(m).isNotNull();
        try {
            assertThat(m.size()).isEqualTo(64);
            assertThat(m.getLong(56)).as("calloc: zeroed").isZero();
            m.putLong(0, -2L);
            m.putInt(60, 123_456);
            assertThat(m.getLong(0)).isEqualTo(-2L);
            assertThat(m.getInt(60)).isEqualTo(123_456);
            assertThatThrownBy(() -> m.getLong(57)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> m.putInt(61, 1)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> m.getInt(-4)).isInstanceOf(IndexOutOfBoundsException.class);
        } finally {
            m.free();
        }
        assertThatThrownBy(() -> m.getLong(0)).as("freed: an exception, never a read of memory not ours")
                .isInstanceOf(IllegalStateException.class);
        m.free(); // idempotent
        assertThatThrownBy(() -> OffHeap.allocate(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
