package io.warpdata.daemon.publish;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ComponentOrderTest {
    @Test
    void slashSortsBeforeEveryOtherByte() {
        List<String> paths = new ArrayList<>(List.of("a.b", "a/z", "a-b/c", "a/b", "a", "b"));
        paths.sort(ComponentOrder.INSTANCE);
        // Plain string order would put "a-b/c" and "a.b" between "a" and "a/b".
        assertThat(paths).containsExactly("a", "a/b", "a/z", "a-b/c", "a.b", "b");
    }
}
