package io.warpdata.manifest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class DatasetIdTest {
    @Test
    void namesAreLimitedSoThatNameAtVersionHashFitsInOneFileName() {
        String longest = "n".repeat(DatasetId.MAX_NAME);
        assertThat((longest + "@" + "0".repeat(64)).length()).isEqualTo(255);
        assertThat(new DatasetId("ws", longest).name()).isEqualTo(longest);
        assertThat(DatasetId.isPart(longest)).isTrue();
        assertThatThrownBy(() -> new DatasetId("ws", longest + "n")).isInstanceOf(ManifestValidationException.class)
                .hasMessageContaining("191 characters; at most 190").hasMessageContaining("name@<version hash>");
        assertThatThrownBy(() -> new DatasetId(longest + "w", "a")).isInstanceOf(ManifestValidationException.class)
                .hasMessageContaining("workspace");
        assertThat(DatasetId.isPart(longest + "n")).as("a store folder the mount cannot show whole is not shown").isFalse();
        assertThatThrownBy(() -> DatasetId.parse("ws/Upper")).isInstanceOf(ManifestValidationException.class);
        // a leading '-' reads as an option on a command line (warpctl latest -w/x ...)
        assertThatThrownBy(() -> DatasetId.parse("-w/x")).isInstanceOf(ManifestValidationException.class)
                .hasMessageContaining("not starting with '-'");
        assertThatThrownBy(() -> DatasetId.parse("w/-x")).isInstanceOf(ManifestValidationException.class);
        assertThat(DatasetId.parse("_w/x-").toString()).isEqualTo("_w/x-");
    }
}
