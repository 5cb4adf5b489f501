package io.warpdata.daemon.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Seed 003 names a warehouse's summary counts but not how its thresholds are spelled. Each
 * spelling of a share of the total, on a warehouse written by numpy (Debian's python3-numpy, not
 * Warp's writer): within bounds it publishes, beyond them it is refused unless allowed; a
 * threshold that cannot be read is published and said to be not checked. (End to end, with the
 * publish output and inspect: TensorWarehouseIT.)
 */
class ThresholdSpellingsIT {
    /** One TWH1 shard of 2 samples and a manifest.json with the given thresholds and summary. */
    private static final String WRITER = """
            import hashlib, json, os, struct, sys
            import numpy as np
            root, thresholds, summary = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
            os.makedirs(root, exist_ok=True)
            n, w, h, c, mb = 2, 4, 3, 3, 2
            images = np.random.default_rng(7).random((n, c, h, w)).astype("<f4")
            boxes = np.zeros((n, mb, 4), dtype="<f4")
            mask = np.zeros((n, mb), dtype="<f4")
            io = 80
            header = b"TWH1" + struct.pack("<7I", 1, 0, 0, w, h, c, mb) + struct.pack(
                "<6Q", n, io, io + images.nbytes, io + images.nbytes + boxes.nbytes, 0, 0)
            data = header + images.tobytes() + boxes.tobytes() + mask.tobytes()
            with open(os.path.join(root, "shard_00000.bin"), "wb") as f:
                f.write(data)
            transform = {"target_size": [4, 3], "resize_mode": "Letterbox", "max_boxes": mb, "skip_empty": False}
            manifest = {"dataset_root": "/data/captures", "transform": transform,
                        "version": hashlib.sha256(b"/data/captures etl-0.3").hexdigest(),
                        "shards": [{"id": "00000", "relative_path": "shard_00000.bin", "shard_version": 1, "samples": n,
                                    "width": w, "height": h, "channels": c, "max_boxes": mb, "dtype": "F32",
                                    "endianness": "Little", "checksum_sha256": hashlib.sha256(data).hexdigest()}],
                        "summary": summary, "thresholds": thresholds}
            with open(os.path.join(root, "manifest.json"), "w") as m:
                json.dump(manifest, m, indent=2)
            """;

    @TempDir
    Path dir;

    private Path warehouse(String name, String thresholds, String summary) throws Exception {
        Path script = dir.resolve("writer.py");
        Files.writeString(script, WRITER);
        Path root = dir.resolve(name);
        Process p = new ProcessBuilder("/usr/bin/python3", script.toString(), root.toString(), thresholds, summary)
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        return root;
    }

    @Test
    void theIssuesManifestIsAccepted() throws Exception {
        // Exactly what issue 28 found refused: "summary.invalid_fraction is missing".
        Path wh = warehouse("issue", "{\"max_invalid_fraction\": 0.05}",
                "{\"total\": 21, \"non_empty\": 21, \"empty\": 0, \"missing\": 0, \"invalid\": 0}");

        TensorWarehouse.Summary s = TensorWarehouse.check("wh", wh, false);

        assertThat(s.violations()).isEmpty();
        assertThat(s.unchecked()).isEmpty();
        assertThat(s.facts()).doesNotContainKeys(TensorWarehouse.UNCHECKED_FACT, TensorWarehouse.VIOLATIONS_FACT);
    }

    @ParameterizedTest(name = "max_invalid_{0} {1} / {2}")
    @CsvSource({
        "ratio, 0.05, 0.02, 0.03000",
        "fraction, 0.05, 0.02, 0.03000",
        "frac, 0.05, 0.02, 0.03000",
        "rate, 0.05, 0.02, 0.03000",
        "pct, 5, 2.5, 3.000%",
        "percent, 5, 2.5, 3.000%",
    })
    void eachSpellingOfAShareIsCheckedAndOnlyAViolationIsRefused(String suffix, String within, String beyond, String said)
            throws Exception {
        String summary = "{\"totals\": {\"total\": 200, \"non_empty\": 190, \"empty\": 4, \"missing\": 0, \"invalid\": 6}}";
        String key = "max_invalid_" + suffix;
        Path ok = warehouse("ok-" + suffix, "{\"" + key + "\": " + within + "}", summary);
        Path bad = warehouse("bad-" + suffix, "{\"" + key + "\": " + beyond + "}", summary);

        TensorWarehouse.Summary published = TensorWarehouse.check("wh", ok, false);

        assertThat(published.violations()).isEmpty();
        assertThat(published.unchecked()).isEmpty();
        assertThatThrownBy(() -> TensorWarehouse.check("wh", bad, false)).isInstanceOf(ThresholdViolationException.class)
                .hasMessageContaining("invalid 6 of 200 (" + said + ") > " + key + " " + beyond);
        assertThat(TensorWarehouse.check("wh", bad, true).facts().get(TensorWarehouse.VIOLATIONS_FACT))
                .isEqualTo("invalid 6 of 200 (" + said + ") > " + key + " " + beyond);
    }

    @Test
    void aThresholdThatCannotBeReadIsPublishedAndSaidToBeNotChecked() throws Exception {
        Path wh = warehouse("foo", "{\"max_foo\": 3, \"max_invalid_ratio\": 0.5}",
                "{\"total\": 21, \"non_empty\": 21, \"empty\": 0, \"missing\": 0, \"invalid\": 0}");

        TensorWarehouse.Summary s = TensorWarehouse.check("wh", wh, false);

        assertThat(s.violations()).isEmpty();
        assertThat(s.unchecked()).isEqualTo(List.of("threshold max_foo not checked: no count foo in summary"));
        assertThat(s.facts()).containsEntry(TensorWarehouse.UNCHECKED_FACT, "threshold max_foo not checked: no count foo in summary");
    }
}
