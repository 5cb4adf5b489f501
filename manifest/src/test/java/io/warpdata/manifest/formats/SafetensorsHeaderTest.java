package io.warpdata.manifest.formats;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The safetensors header checks, on headers written here by hand from format.md (the IT reads
 * files numpy writes). Every refusal names the file and, where there is one, the tensor.
 */
class SafetensorsHeaderTest {
    private static final String FILE = "part-0.safetensors";

    /** The header bytes, and the size of a file whose buffer has {@code buffer} bytes. */
    private static SafetensorsHeader parse(String json, long buffer) {
        byte[] h = json.getBytes(StandardCharsets.UTF_8);
        return SafetensorsHeader.parse(h, 8 + h.length + buffer, FILE);
    }

    @Test
    void aValidHeaderGivesEveryTensorWithItsOffsets() {
        SafetensorsHeader h = parse("{\"__metadata__\":{\"format\":\"pt\"},"
                + "\"emb/0\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
                + "\"w\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[24,32]},"
                + "\"s\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[32,40]}}   ", 40);
        assertThat(h.metadata()).containsEntry("format", "pt");
        assertThat(h.tensors()).extracting(SafetensorsHeader.Tensor::name).containsExactly("emb/0", "w", "s");
        SafetensorsHeader.Tensor emb = h.tensors().get(0);
        assertThat(emb.dtype()).isEqualTo(SafetensorsHeader.Dtype.F32);
        assertThat(emb.shape()).containsExactly(2L, 3L);
        assertThat(emb.byteSize()).isEqualTo(24);
        assertThat(h.tensors().get(2).shape()).as("a scalar").isEmpty();
    }

    @Test
    void tensorsInAnyOrderAndEmptyTensorsAreFine() {
        SafetensorsHeader h = parse("{\"b\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[2,5]},"
                + "\"e\":{\"dtype\":\"F64\",\"shape\":[0,7],\"data_offsets\":[2,2]},"
                + "\"a\":{\"dtype\":\"I16\",\"shape\":[1],\"data_offsets\":[0,2]}}", 5);
        assertThat(h.tensors()).hasSize(3);
    }

    @Test
    void theHeaderLengthIsCappedAndMustFitTheFile() {
        byte[] len = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(200_000_000L).array();
        assertThatThrownBy(() -> SafetensorsHeader.headerLength(len, 1L << 40, FILE))
                .isInstanceOf(SafetensorsException.class).hasMessageContaining(FILE).hasMessageContaining("at most 100000000");
        byte[] huge = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(-1L).array();
        assertThatThrownBy(() -> SafetensorsHeader.headerLength(huge, 100, FILE)).hasMessageContaining("18446744073709551615");
        byte[] past = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(100).array();
        assertThatThrownBy(() -> SafetensorsHeader.headerLength(past, 50, FILE)).hasMessageContaining("only 42");
        assertThatThrownBy(() -> SafetensorsHeader.headerLength(new byte[4], 4, FILE)).hasMessageContaining("has 4 bytes");
        assertThat(SafetensorsHeader.headerLength(past, 108, FILE)).isEqualTo(100);
    }

    @Test
    void everyViolationIsRefusedNamingTheTensor() {
        String ok = "\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]";
        List<String[]> cases = List.of(
                new String[] {"{\"t\":{" + ok + "},\"t\":{" + ok + "}}", "tensor 't' appears twice"},
                new String[] {"{\"t\":{\"dtype\":\"F8\",\"shape\":[2],\"data_offsets\":[0,8]}}", "tensor 't' has dtype 'F8'"},
                new String[] {"{\"t\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", "(12 bytes) but data_offsets [0, 8] span 8"},
                new String[] {"{\"t\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", "not a non-negative integer"},
                new String[] {"{\"t\":{\"dtype\":\"F32\",\"shape\":[2.5],\"data_offsets\":[0,8]}}", "not a non-negative integer"},
                new String[] {"{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", "end before they begin"},
                new String[] {"{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", "not [begin, end]"},
                new String[] {"{\"t\":{\"dtype\":\"F32\",\"shape\":[2]}}", "tensor 't' lacks data_offsets"},
                new String[] {"{\"t\":{" + ok + ",\"extra\":1}}", "unknown field 'extra'"},
                new String[] {"{\"t\":[1]}", "is not a JSON object"},
                new String[] {"{\"t\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904,4],\"data_offsets\":[0,8]}}", "too large"},
                new String[] {"{\"a\":{" + ok + "},\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[12,20]}}", "tensor 'b' starts at byte 12 of the buffer, leaving a hole after byte 8"},
                new String[] {"{\"a\":{" + ok + "},\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", "tensor 'b' starts at byte 4 of the buffer, overlapping"},
                new String[] {"{\"__metadata__\":{\"k\":1},\"t\":{" + ok + "}}", "__metadata__.k that is not a string"},
                new String[] {"{\"__metadata__\":[1],\"t\":{" + ok + "}}", "has __metadata__ that is not a JSON object of strings"},
                new String[] {"[1,2]", "does not start with '{'"},
                new String[] {"{\"t\":{" + ok + "}} x", "not valid JSON"},
                new String[] {"{\"t\":{" + ok + "}", "not valid JSON"},
                new String[] {"{\"t\":{\"dtype\":\"F32\",\"shape\":[[[[[[[[[[1]]]]]]]]]],\"data_offsets\":[0,8]}}", "not a non-negative integer"});
        for (String[] c : cases) {
            assertThatThrownBy(() -> parse(c[0], 8)).as(c[0]).isInstanceOf(SafetensorsException.class)
                    .hasMessageContaining(FILE).hasMessageContaining(c[1]);
        }
    }

    /** Audit 36: null metadata is no metadata, as the safetensors library reads it (serde's Option). */
    @Test
    void nullMetadataIsNoMetadata() {
        SafetensorsHeader h = parse("{\"__metadata__\":null,\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8);
        assertThat(h.metadata()).isEmpty();
        assertThat(h.tensors()).extracting(SafetensorsHeader.Tensor::name).containsExactly("t");
    }

    /** Audit 36: a dtype Warp does not know is not cured by writing the file again with the same dtype. */
    @Test
    void anUnknownDtypeSaysToConvertTheTensor() {
        assertThatThrownBy(() -> parse("{\"t\":{\"dtype\":\"F8_E4M3\",\"shape\":[8],\"data_offsets\":[0,8]}}", 8))
                .isInstanceOfSatisfying(SafetensorsException.class, e -> assertThat(e.nextStep())
                        .contains("Convert that tensor to one of those dtypes").doesNotContain("Rewrite the file"));
    }

    @Test
    void theBufferMustEndWhereTheLastTensorDoes() {
        String json = "{\"t\":{\"dtype\":\"U16\",\"shape\":[3],\"data_offsets\":[0,6]}}";
        assertThatThrownBy(() -> parse(json, 7)).hasMessageContaining("buffer of 7 bytes, but its tensors end at byte 6 (trailing bytes)");
        assertThatThrownBy(() -> parse(json, 5)).hasMessageContaining("(the file is truncated)");
        // The tensor that ends past the buffer is named: its offsets may be what is wrong (audit 36).
        assertThatThrownBy(() -> parse(json, 5)).hasMessageContaining("'t'")
                .hasMessageContaining("ends at byte 6 of a byte buffer of 5 bytes").hasMessageContaining("data_offsets");
        byte[] badUtf8 = {'{', '"', (byte) 0xC3, '"', ':', '1', '}'};
        assertThatThrownBy(() -> SafetensorsHeader.parse(badUtf8, 100, FILE)).hasMessageContaining("not valid UTF-8");
    }

    @Test
    void npyHeadersAreWhatNumpyWrites() {
        // numpy 1.24: np.lib.format.write_array_header_1_0 for '<f4', shape (2, 3)
        byte[] h = NpyHeader.of("<f4", List.of(2L, 3L));
        assertThat(h.length % 64).isZero();
        assertThat(new String(h, 10, h.length - 10, StandardCharsets.US_ASCII))
                .startsWith("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }").endsWith(" \n");
        assertThat(h[0]).isEqualTo((byte) 0x93);
        assertThat(new String(h, 1, 5, StandardCharsets.US_ASCII)).isEqualTo("NUMPY");
        assertThat((h[8] & 0xff) | (h[9] & 0xff) << 8).isEqualTo(h.length - 10);
        assertThat(new String(NpyHeader.of("|u1", List.of(7L)), StandardCharsets.US_ASCII)).contains("'shape': (7,), }");
        assertThat(new String(NpyHeader.of("<i8", List.of()), StandardCharsets.US_ASCII)).contains("'shape': (), }");
        assertThat(NpyHeader.descr(SafetensorsHeader.Dtype.BF16)).isEmpty();
        assertThat(NpyHeader.descr(SafetensorsHeader.Dtype.F16)).contains("<f2");
    }
}
