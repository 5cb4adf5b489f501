package io.warpdata.vfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The files order plans want read by their tensor hashes: the most recently named kept, every one of them. */
class RecentKeysTest {
    @Test
    void pastItsBoundItForgetsTheKeyAddedLeastRecently() {
        RecentKeys<String> keys = new RecentKeys<>(3);
        assertThat(keys.add("a")).isTrue();
        assertThat(keys.add("b")).isTrue();
        assertThat(keys.add("c")).isTrue();
        assertThat(keys.add("a")).as("named again: now the most recent").isFalse();
        assertThat(keys.add("d")).isTrue();
        assertThat(keys.contains("b")).as("the least recent").isFalse();
        assertThat(keys.contains("a")).isTrue();
        assertThat(keys.contains("c")).isTrue();
        assertThat(keys.contains("d")).isTrue();
        assertThat(keys.size()).isEqualTo(3);
    }

    @Test
    void aNewBurstOfKeysIsKeptWholeOverKeysNamedOftenBefore() {
        // A size-bounded Caffeine cache turned most of such a burst away (its admission favours
        // keys seen often): a new plan's files then read through their blocks.
        RecentKeys<String> keys = new RecentKeys<>(1000);
        for (int epoch = 0; epoch < 5; epoch++) {
            for (int i = 0; i < 1000; i++) {
                keys.add("old" + i);
            }
        }
        List<String> burst = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            burst.add("new" + i);
            keys.add("new" + i);
        }
        assertThat(burst).allMatch(keys::contains);
        assertThat(keys.contains("old999")).isFalse();
        assertThat(keys.size()).isEqualTo(1000);
    }

    @Test
    void aBoundBelowOneIsRefused() {
        assertThatThrownBy(() -> new RecentKeys<>(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
