package io.warpdata.daemon.publish;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.warpdata.manifest.WarpException;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The JSON manifests writers leave beside their data, read by publish: a safetensors dataset's
 * {@code dataset_manifest.json} (seed 001), a committed Parquet dataset's {@code manifest.json}
 * (seed 002) and a tensor warehouse's {@code manifest.json} (seed 003). A result or a typed
 * {@link WarpException} is the only acceptable outcome (see the manifest module's
 * ParsersFuzzTest for the rules).
 *
 * <p>Each target writes the input as the manifest of a small folder that also holds a file of the
 * format the manifest may name (a valid safetensors file, a Parquet part, a TWH1 shard), so an
 * input that names it gets past the field checks into the file checks. Inputs live under
 * {@code src/test/resources/io/warpdata/daemon/publish/WriterManifestsFuzzTestInputs/<method>/};
 * the seeds are each writer's own manifest for that folder.
 */
class WriterManifestsFuzzTest {
    private static final Path SAFETENSORS;
    private static final Path COMMITTED;
    private static final Path WAREHOUSE;

    static {
        try {
            Path root = Files.createTempDirectory("warp-fuzz-writers");
            // The whole tree at exit (deleteOnExit of the root alone left it, not empty, in /tmp).
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try (java.util.stream.Stream<Path> all = Files.walk(root)) {
                    all.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                } catch (IOException | UncheckedIOException ignored) {
                    // Best effort: it is a temporary directory.
                }
            }));
            SAFETENSORS = Files.createDirectories(root.resolve("st"));
            Files.write(SAFETENSORS.resolve("part-00000.safetensors"), safetensorsFile());
            COMMITTED = Files.createDirectories(root.resolve("parquet"));
            Files.write(COMMITTED.resolve("_SUCCESS"), new byte[0]);
            Files.write(COMMITTED.resolve("part-00000.parquet"), "PAR1PAR1".getBytes(StandardCharsets.US_ASCII));
            WAREHOUSE = Files.createDirectories(root.resolve("twh"));
            Files.write(WAREHOUSE.resolve("shard_00000.bin"), twhShard());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @FuzzTest
    void safetensorsDatasetManifest(byte[] input) throws IOException {
        Files.write(SAFETENSORS.resolve(SafetensorsDataset.MANIFEST), input);
        try {
            SafetensorsDataset.check("fuzz", SAFETENSORS);
        } catch (WarpException expected) {
            // Refused, naming the file and the field: fine.
        }
    }

    @FuzzTest
    void committedDatasetManifest(byte[] input) throws IOException {
        Files.write(COMMITTED.resolve(CommittedDataset.MANIFEST), input);
        try {
            CommittedDataset.read("fuzz", COMMITTED);
        } catch (WarpException expected) {
            // Refused, naming the file and the field: fine.
        }
    }

    @FuzzTest
    void tensorWarehouseManifest(byte[] input) throws IOException {
        Files.write(WAREHOUSE.resolve(TensorWarehouse.MANIFEST), input);
        try {
            if (TensorWarehouse.isOne(WAREHOUSE)) {
                TensorWarehouse.check("fuzz", WAREHOUSE, false);
            }
        } catch (WarpException expected) {
            // Refused, naming the file and the field: fine.
        }
    }

    /** The seeds are each writer's valid manifest for its folder: they pass every check, so the fuzzer starts deep. */
    @Test
    void theSeedsAreAccepted() throws IOException {
        Files.write(SAFETENSORS.resolve(SafetensorsDataset.MANIFEST), seed("safetensorsDatasetManifest"));
        SafetensorsDataset.Summary st = SafetensorsDataset.check("seed", SAFETENSORS);
        assertThat(st.files()).isEqualTo(1);
        assertThat(st.dtypes()).containsEntry("F32", 1L);
        Files.write(COMMITTED.resolve(CommittedDataset.MANIFEST), seed("committedDatasetManifest"));
        assertThat(CommittedDataset.read("seed", COMMITTED).parts()).hasSize(1);
        Files.write(WAREHOUSE.resolve(TensorWarehouse.MANIFEST), seed("tensorWarehouseManifest"));
        assertThat(TensorWarehouse.isOne(WAREHOUSE)).isTrue();
        assertThat(TensorWarehouse.check("seed", WAREHOUSE, false).violations()).isEmpty();
    }

    /** audit 28: metadata is dict[str, str] in seed 002's spec; {"n": 1} was published. */
    @Test
    void aCommittedManifestWhoseMetadataValueIsNotAStringIsRefused() throws IOException {
        String good = new String(seed("committedDatasetManifest"), StandardCharsets.UTF_8);
        com.fasterxml.jackson.databind.node.ObjectNode m = (com.fasterxml.jackson.databind.node.ObjectNode)
                new com.fasterxml.jackson.databind.ObjectMapper().readTree(good);
        m.putObject("metadata").put("owner", "x").put("n", 1);
        Files.writeString(COMMITTED.resolve(CommittedDataset.MANIFEST), m.toString());
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> CommittedDataset.read("m", COMMITTED))
                .isInstanceOf(WarpException.class).hasMessageContaining("'n' is not a string");
        m.putObject("metadata").put("owner", "x");
        Files.writeString(COMMITTED.resolve(CommittedDataset.MANIFEST), m.toString());
        assertThat(CommittedDataset.read("m", COMMITTED).parts()).hasSize(1);
    }

    private static byte[] seed(String method) throws IOException {
        try (var in = WriterManifestsFuzzTest.class.getResourceAsStream("WriterManifestsFuzzTestInputs/" + method + "/seed-0")) {
            assertThat(in).as("seed of " + method).isNotNull();
            return in.readAllBytes();
        }
    }

    /** One F32 tensor "x" of shape [2], as the safetensors spec lays it out (header padded to 8). */
    static byte[] safetensorsFile() {
        String header = "{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
        while (header.length() % 8 != 0) {
            header += " ";
        }
        byte[] h = header.getBytes(StandardCharsets.US_ASCII);
        return ByteBuffer.allocate(8 + h.length + 8).order(ByteOrder.LITTLE_ENDIAN)
                .putLong(h.length).put(h).putFloat(1f).putFloat(2f).array();
    }

    /**
     * A TWH1 shard as seed 003's "Shard binary format" lays it out: 2 samples of 3x2x3 F32 images,
     * 2 boxes each, little-endian; images, boxes and mask contiguous after the 80-byte header.
     */
    static byte[] twhShard() {
        int samples = 2;
        int width = 3;
        int height = 2;
        int channels = 3;
        int boxes = 2;
        long images = 80;
        long boxesAt = images + 4L * samples * channels * height * width;
        long maskAt = boxesAt + 4L * samples * boxes * 4;
        long end = maskAt + 4L * samples * boxes;
        ByteBuffer b = ByteBuffer.allocate((int) end).order(ByteOrder.LITTLE_ENDIAN);
        b.put("TWH1".getBytes(StandardCharsets.US_ASCII)).putInt(1).putInt(0).putInt(0)
                .putInt(width).putInt(height).putInt(channels).putInt(boxes)
                .putLong(samples).putLong(images).putLong(boxesAt).putLong(maskAt).putLong(0).putLong(0);
        return b.array();
    }
}
