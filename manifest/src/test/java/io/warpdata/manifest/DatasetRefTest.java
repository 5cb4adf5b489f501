package io.warpdata.manifest;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DatasetRefTest {
    private static final String HASH = "0123456789abcdef".repeat(4);

    @Test
    void aBareIdAndAtLatestNameTheDefaultBranch() {
        assertThat(DatasetRef.parse("vision/pets").ref()).isInstanceOf(DatasetRef.Latest.class);
        assertThat(DatasetRef.parse("vision/pets@latest").ref()).isInstanceOf(DatasetRef.Latest.class);
        assertThat(DatasetRef.parse("vision/pets@latest").toString()).isEqualTo("vision/pets");
    }

    @Test
    void eightOrMoreHexDigitsAreAVersionPrefixAndSixtyFourAreComplete() {
        DatasetRef short8 = DatasetRef.parse("vision/pets@0123abcd");
        assertThat(short8.ref()).isEqualTo(new DatasetRef.Version("0123abcd"));
        assertThat(((DatasetRef.Version) short8.ref()).complete()).isFalse();
        assertThat(((DatasetRef.Version) DatasetRef.parse("vision/pets@" + HASH).ref()).complete()).isTrue();
        assertThat(short8.toString()).isEqualTo("vision/pets@0123abcd");
    }

    @Test
    void otherNamesAreTagsOrBranches() {
        assertThat(DatasetRef.parse("vision/pets@v1.0").ref()).isEqualTo(new DatasetRef.Named("v1.0"));
        assertThat(DatasetRef.parse("vision/pets@exp_2-b").ref()).isEqualTo(new DatasetRef.Named("exp_2-b"));
        // Short all-hex text is a name: a tag "abc" may exist; if not, resolution says a
        // version prefix needs 8 digits.
        assertThat(DatasetRef.parse("vision/pets@abc").ref()).isEqualTo(new DatasetRef.Named("abc"));
        // Not all hex, so not a version prefix.
        assertThat(DatasetRef.parse("vision/pets@0123abcdz").ref()).isEqualTo(new DatasetRef.Named("0123abcdz"));
    }

    @Test
    void badRefsAreRefusedNamingTheRule() {
        assertThatThrownBy(() -> DatasetRef.parse("vision/pets@")).isInstanceOf(ManifestValidationException.class)
                .hasMessageContaining("empty ref");
        assertThatThrownBy(() -> DatasetRef.parse("vision/pets@V1")).isInstanceOf(ManifestValidationException.class)
                .hasMessageContaining("not a valid tag or branch name");
        assertThatThrownBy(() -> DatasetRef.parse("vision/pets@-x")).isInstanceOf(ManifestValidationException.class);
        assertThatThrownBy(() -> DatasetRef.parse("vision/pets@a/b")).isInstanceOf(ManifestValidationException.class);
        assertThatThrownBy(() -> DatasetRef.parse("vision/pets@" + "a".repeat(129)))
                .isInstanceOf(ManifestValidationException.class).hasMessageContaining("at most 128");
        assertThatThrownBy(() -> DatasetRef.parse("Vision/pets@v1")).isInstanceOf(ManifestValidationException.class);
        // A hash pasted in capitals (audit 19) is told apart from a bad tag name.
        assertThatThrownBy(() -> DatasetRef.parse("vision/pets@87D0FF96")).isInstanceOf(ManifestValidationException.class)
                .hasMessageContaining("versions are lowercase hex: @87d0ff96");
        assertThatThrownBy(() -> DatasetRef.parse("vision/pets@DEADLINE")).isInstanceOf(ManifestValidationException.class)
                .hasMessageContaining("not a valid tag or branch name");
    }

    @Test
    void aRefNameThatReadsAsAHashPrefixIsRefused() {
        assertThatThrownBy(() -> DatasetRef.requireRefName("tag", "deadbeef"))
                .isInstanceOf(ManifestValidationException.class).hasMessageContaining("version hash prefix");
        assertThat(DatasetRef.requireRefName("tag", "deadbee")).isEqualTo("deadbee");
        assertThat(DatasetRef.requireRefName("tag", "deadbeefs")).isEqualTo("deadbeefs");
        assertThatThrownBy(() -> new DatasetRef.Named("latest")).isInstanceOf(ManifestValidationException.class);
    }
}
