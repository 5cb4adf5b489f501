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

    @Test
    void countsAndRatiosAreJudgedAgainstTheirMaxAndMin() throws IOException {
        JsonNode summary = json("{'totals': {'total': 200, 'non_empty': 150, 'empty': 40, 'missing': 4, 'invalid': 6}}");
        assertThat(TensorWarehouse.violations("m", summary, json("{'max_invalid_ratio': 0.05, 'max_missing': 4,"
                + " 'min_non_empty_ratio': 0.7, 'max_empty_ratio': null, 'skip_empty': true}"))).isEmpty();
        assertThat(TensorWarehouse.violations("m", summary, json("{'max_invalid_ratio': 0.02, 'max_missing': 3,"
                + " 'min_non_empty': 151}"))).containsExactly(
                "invalid 6 of 200 (0.03000) > max_invalid_ratio 0.02", "missing 4 > max_missing 3",
                "non_empty 150 < min_non_empty 151");
    }

    @Test
    void countsAreReadFromTheSummaryItselfWithoutTotals() throws IOException {
        assertThat(TensorWarehouse.violations("m", json("{'total': 0, 'invalid': 0}"), json("{'max_invalid_ratio': 0}")))
                .as("an empty summary has a ratio of 0").isEmpty();
        assertThat(TensorWarehouse.violations("m", json("{'total': 10, 'invalid': 1}"), json("{'max_invalid_ratio': 0}")))
                .hasSize(1);
    }

    @Test
    void aThresholdTheSummaryCannotAnswerIsACorruptedManifest() throws IOException {
        assertThatThrownBy(() -> TensorWarehouse.violations("m.json", json("{'totals': {'total': 3}}"),
                json("{'max_invalid_ratio': 0.1}"))).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("summary.totals.invalid is missing").hasMessageContaining("ManifestCorrupted");
        assertThatThrownBy(() -> TensorWarehouse.violations("m.json", json("{'invalid': 1}"), json("{'max_invalid_ratio': 0.1}")))
                .hasMessageContaining("summary.total is missing");
        assertThatThrownBy(() -> TensorWarehouse.violations("m.json", json("{'invalid': 1}"), json("{'max_invalid': 'x'}")))
                .hasMessageContaining("thresholds.max_invalid \"x\", not a number");
        assertThatThrownBy(() -> TensorWarehouse.violations("m.json", json("{'invalid': 1}"), json("{'max_invalid': -1}")))
                .hasMessageContaining("not a number of 0 or more");
    }
}
