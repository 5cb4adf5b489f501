package io.warpdata.daemon.publish;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * How a warehouse folder is recognised and how its thresholds judge its summary (the shards
 * themselves are checked in TensorWarehouseIT, on shards numpy writes).
 */
class TensorWarehouseTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static JsonNode json(String text) throws IOException {
        return JSON.readTree(text.replace('\'', '"'));
    }

    @Test
    void aManifestWithDatasetRootAndShardsMakesAWarehouse(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("manifest.json"), "{\"dataset_root\": \"/data\", \"shards\": []}");
        assertThat(TensorWarehouse.isOne(dir)).isTrue();
    }

    @Test
    void aBrokenManifestBesideATwh1ShardStillMakesAWarehouseSoItIsRefused(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("manifest.json"), "{\"dataset_root\": ");
        Files.write(dir.resolve("shard_00000.bin"), "TWH1....".getBytes());
        assertThat(TensorWarehouse.isOne(dir)).isTrue();
    }

    @Test
    void otherFoldersWithAManifestJsonArePlainFolders(@TempDir Path dir) throws IOException {
        assertThat(TensorWarehouse.isOne(dir)).as("no manifest").isFalse();
        Files.writeString(dir.resolve("manifest.json"), "{\"images\": [\"a.jpg\"], \"shards\": 2}");
        Files.write(dir.resolve("a.jpg"), new byte[] {(byte) 0xff, (byte) 0xd8, (byte) 0xff});
        assertThat(TensorWarehouse.isOne(dir)).isFalse();
        Files.writeString(dir.resolve("manifest.json"), "not json at all");
        assertThat(TensorWarehouse.isOne(dir)).isFalse();
    }

    private static java.util.List<String> violations(JsonNode summary, JsonNode thresholds) {
        return Thresholds.judge(summary, thresholds).violations();
    }

    @Test
    void countsAndRatiosAreJudgedAgainstTheirMaxAndMin() throws IOException {
        JsonNode summary = json("{'totals': {'total': 200, 'non_empty': 150, 'empty': 40, 'missing': 4, 'invalid': 6}}");
        assertThat(violations(summary, json("{'max_invalid_ratio': 0.05, 'max_missing': 4,"
                + " 'min_non_empty_ratio': 0.7, 'max_empty_ratio': null, 'skip_empty': true}"))).isEmpty();
        assertThat(violations(summary, json("{'max_invalid_ratio': 0.02, 'max_missing': 3,"
                + " 'min_non_empty': 151}"))).containsExactly(
                "invalid 6 of 200 (0.03000) > max_invalid_ratio 0.02", "missing 4 > max_missing 3",
                "non_empty 150 < min_non_empty 151");
    }

    @Test
    void everySpellingOfAShareOfTheTotalIsJudged() throws IOException {
        JsonNode summary = json("{'total': 200, 'invalid': 6}");
        for (String suffix : java.util.List.of("ratio", "fraction", "frac", "rate")) {
            assertThat(violations(summary, json("{'max_invalid_" + suffix + "': 0.05}"))).as(suffix).isEmpty();
            assertThat(violations(summary, json("{'max_invalid_" + suffix + "': 0.02}"))).as(suffix)
                    .containsExactly("invalid 6 of 200 (0.03000) > max_invalid_" + suffix + " 0.02");
        }
        for (String suffix : java.util.List.of("pct", "percent")) {
            assertThat(violations(summary, json("{'max_invalid_" + suffix + "': 5}"))).as(suffix).isEmpty();
            assertThat(violations(summary, json("{'max_invalid_" + suffix + "': 2.5}"))).as(suffix)
                    .containsExactly("invalid 6 of 200 (3.000%) > max_invalid_" + suffix + " 2.5");
        }
    }

    @Test
    void aNumberTheSummaryStatesItselfIsJudgedAsItIs() throws IOException {
        assertThat(violations(json("{'total': 100, 'invalid': 9, 'invalid_fraction': 0.01}"),
                json("{'max_invalid_fraction': 0.05}"))).as("the summary's own fraction wins").isEmpty();
        assertThat(violations(json("{'invalid_fraction': 0.09}"), json("{'max_invalid_fraction': 0.05}")))
                .containsExactly("invalid_fraction 0.09 > max_invalid_fraction 0.05");
    }

    @Test
    void countsAreReadFromTheSummaryItselfWithoutTotals() throws IOException {
        assertThat(violations(json("{'total': 0, 'invalid': 0}"), json("{'max_invalid_ratio': 0}")))
                .as("an empty summary has a ratio of 0").isEmpty();
        assertThat(violations(json("{'total': 10, 'invalid': 1}"), json("{'max_invalid_ratio': 0}")))
                .hasSize(1);
    }

    @Test
    void aThresholdTheSummaryCannotAnswerIsNotCheckedAndSaysWhy() throws IOException {
        Thresholds.Judgement j = Thresholds.judge(json("{'totals': {'total': 3, 'invalid': 'many'}}"),
                json("{'max_invalid_ratio': 0.1, 'max_foo': 2, 'min_bar_pct': 1, 'max_x': 'x', 'max_y': -1}"));
        assertThat(j.violations()).isEmpty();
        assertThat(j.unchecked()).containsExactly(
                "threshold max_invalid_ratio not checked: summary.totals.invalid is \"many\", not a count",
                "threshold max_foo not checked: no count foo in summary.totals",
                "threshold min_bar_pct not checked: no count bar in summary.totals",
                "threshold max_x not checked: its value \"x\" is not a number of 0 or more",
                "threshold max_y not checked: its value -1 is not a number of 0 or more");
        assertThat(Thresholds.judge(json("{'invalid': 1}"), json("{'max_invalid_ratio': 0.1}")).unchecked())
                .containsExactly("threshold max_invalid_ratio not checked: no count total in summary");
    }

    @Test
    void anUncheckedThresholdBesideAViolatedOneStillRefusesOnlyTheViolation() throws IOException {
        Thresholds.Judgement j = Thresholds.judge(json("{'total': 10, 'invalid': 5}"),
                json("{'max_invalid_rate': 0.1, 'max_foo': 1}"));
        assertThat(j.violations()).containsExactly("invalid 5 of 10 (0.5000) > max_invalid_rate 0.1");
        assertThat(j.unchecked()).containsExactly("threshold max_foo not checked: no count foo in summary");
    }
}
