package io.warpdata.manifest.formats;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The header of a safetensors file, checked against the format (Hugging Face's
 * {@code format.md}, as seed 001 quotes it): an 8-byte little-endian header length N, N bytes of
 * UTF-8 JSON (an object, possibly padded with trailing spaces), then the byte buffer. The object
 * maps tensor names to {@code {"dtype", "shape", "data_offsets": [begin, end]}} (offsets relative
 * to the byte buffer) and may hold {@code "__metadata__"}: a map of strings.
 *
 * <p>Checked: N within {@link #MAX_HEADER_BYTES} and the file; valid UTF-8; a JSON object with
 * no duplicate keys; every tensor with exactly those three fields; a known dtype; a shape of
 * non-negative integers; offsets with begin <= end; shape x dtype size equal to end - begin
 * (overflow refused); the tensors, ordered by offset, covering the buffer with no hole and no
 * overlap; the buffer length exact (the file ends where the last tensor does). Every refusal is a
 * {@link SafetensorsException} naming the file and, where there is one, the tensor.
 */
public record SafetensorsHeader(long headerLength, Map<String, String> metadata, List<Tensor> tensors) {
    /** Longest header accepted (the safetensors library's own limit is 100 MB). */
    public static final long MAX_HEADER_BYTES = 100_000_000L;
    /** Most dimensions a tensor may have (numpy's limit is 64). */
    public static final int MAX_DIMS = 64;

    private static final JsonFactory JSON = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(8).build())
            .build();

    public SafetensorsHeader {
        metadata = Collections.unmodifiableMap(new LinkedHashMap<>(metadata));
        tensors = List.copyOf(tensors);
    }

    /** Where the byte buffer starts in the file: {@code 8 + headerLength}. */
    public long dataStart() {
        return 8 + headerLength;
    }

    /** The element types the format defines, with their sizes in bytes. */
    public enum Dtype {
        F16(2), F32(4), F64(8),
        // BF16 is valid although the schema's dtype pattern ([UIF])(8|16|...) does not match it:
        // the safetensors library accepts it outside the schema (seed 001, "BF16 discrepancy").
        BF16(2),
        U8(1), I8(1), U16(2), I16(2), U32(4), I32(4), U64(8), I64(8),
        BOOL(1);

        private final int size;

        Dtype(int size) {
            this.size = size;
        }

        /** Bytes per element. */
        public int size() {
            return size;
        }
    }

    /**
     * One tensor.
     *
     * @param begin offset of its first byte in the byte buffer
     * @param end   offset after its last byte
     */
    public record Tensor(String name, Dtype dtype, List<Long> shape, long begin, long end) {
        public Tensor {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(dtype, "dtype");
            shape = List.copyOf(shape);
        }

        /** Bytes of data. */
        public long byteSize() {
            return end - begin;
        }
    }

    /**
     * Reads the header length from a file's first 8 bytes.
     *
     * @param fileSize the whole file's size
     * @throws SafetensorsException if the file is shorter than 8 bytes, or the length is beyond
     *         {@link #MAX_HEADER_BYTES} or the file
     */
    public static long headerLength(byte[] first8, long fileSize, String file) {
        if (fileSize < 8 || first8.length < 8) {
            throw new SafetensorsException(file, null, "has " + fileSize + " bytes; a safetensors file starts with an"
                    + " 8-byte header length");
        }
        long n = ByteBuffer.wrap(first8, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
        if (n < 2 || n > MAX_HEADER_BYTES) {
            throw new SafetensorsException(file, null, "declares a header of " + Long.toUnsignedString(n)
                    + " bytes; a header is a JSON object of at most " + MAX_HEADER_BYTES + " bytes");
        }
        if (n > fileSize - 8) {
            throw new SafetensorsException(file, null, "declares a header of " + n + " bytes but has only "
                    + (fileSize - 8) + " after the length");
        }
        return n;
    }

    /**
     * Parses and checks a header.
     *
     * @param header   the N header bytes (after the 8-byte length)
     * @param fileSize the whole file's size: the byte buffer must end exactly there
     * @param file     what to name in errors
     * @throws SafetensorsException naming the file and the tensor on any violation
     */
    public static SafetensorsHeader parse(byte[] header, long fileSize, String file) {
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(header)).toString();
        } catch (CharacterCodingException e) {
            throw new SafetensorsException(file, null, "has a header that is not valid UTF-8");
        }
        if (text.isEmpty() || text.charAt(0) != '{') {
            throw new SafetensorsException(file, null, "has a header that does not start with '{'");
        }
        Map<String, String> metadata = new LinkedHashMap<>();
        List<Tensor> tensors = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        try (JsonParser p = JSON.createParser(text)) {
            p.nextToken();
            JsonToken t;
            while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                if (!seen.add(name)) {
                    throw new SafetensorsException(file, name, "appears twice in the header");
                }
                JsonToken value = p.nextToken();
                if (name.equals("__metadata__") && value == JsonToken.VALUE_NULL) {
                    continue; // no metadata, as the safetensors library reads it (audit 36)
                }
                if (value != JsonToken.START_OBJECT) {
                    throw name.equals("__metadata__")
                            ? new SafetensorsException(file, null, "has __metadata__ that is not a JSON object of strings")
                            : new SafetensorsException(file, name, "is not a JSON object in the header");
                }
                if (name.equals("__metadata__")) {
                    readMetadata(p, file, metadata);
                } else {
                    tensors.add(readTensor(p, file, name));
                }
            }
            if (t != JsonToken.END_OBJECT) {
                throw new SafetensorsException(file, null, "has a header that is not a JSON object");
            }
            if (p.nextToken() != null) {
                throw new SafetensorsException(file, null, "has content after the header's JSON object");
            }
        } catch (JsonProcessingException e) {
            throw new SafetensorsException(file, null, "has a header that is not valid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new UncheckedIOException("reading from memory cannot fail", e);
        }
        long buffer = fileSize - 8 - header.length;
        List<Tensor> byOffset = new ArrayList<>(tensors);
        byOffset.sort(Comparator.comparingLong(Tensor::begin).thenComparingLong(Tensor::end));
        long at = 0;
        Tensor last = null;
        for (Tensor x : byOffset) {
            last = x;
            if (x.begin() > at) {
                throw new SafetensorsException(file, x.name(), "starts at byte " + x.begin() + " of the buffer, leaving a"
                        + " hole after byte " + at + " (the buffer must be fully indexed)");
            }
            if (x.begin() < at) {
                throw new SafetensorsException(file, x.name(), "starts at byte " + x.begin() + " of the buffer, overlapping"
                        + " the tensor before it (which ends at " + at + ")");
            }
            at = x.end();
        }
        if (at > buffer) {
            // The tensor named (audit 36): its header's offsets may be what is wrong, not the file's length.
            throw new SafetensorsException(file, last.name(), "ends at byte " + at + " of a byte buffer of " + buffer
                    + " bytes (the file is truncated), unless its data_offsets are wrong");
        }
        if (at != buffer) {
            throw new SafetensorsException(file, null, "has a byte buffer of " + buffer + " bytes, but its tensors end"
                    + " at byte " + at + " (trailing bytes)");
        }
        return new SafetensorsHeader(header.length, metadata, tensors);
    }

    private static void readMetadata(JsonParser p, String file, Map<String, String> out) throws IOException {
        JsonToken t;
        while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
            String key = p.currentName();
            if (p.nextToken() != JsonToken.VALUE_STRING) {
                throw new SafetensorsException(file, null, "has __metadata__." + key + " that is not a string");
            }
            if (out.put(key, p.getText()) != null) {
                throw new SafetensorsException(file, null, "has __metadata__." + key + " twice");
            }
        }
    }

    private static Tensor readTensor(JsonParser p, String file, String name) throws IOException {
        Dtype dtype = null;
        List<Long> shape = null;
        long[] offsets = null;
        JsonToken t;
        while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken v = p.nextToken();
            switch (field) {
                case "dtype" -> {
                    if (dtype != null || v != JsonToken.VALUE_STRING) {
                        throw new SafetensorsException(file, name, "has a dtype that is not one string");
                    }
                    dtype = dtype(p.getText(), file, name);
                }
                case "shape" -> {
                    if (shape != null || v != JsonToken.START_ARRAY) {
                        throw new SafetensorsException(file, name, "has a shape that is not one array");
                    }
                    shape = integers(p, file, name, "shape", MAX_DIMS);
                }
                case "data_offsets" -> {
                    if (offsets != null || v != JsonToken.START_ARRAY) {
                        throw new SafetensorsException(file, name, "has data_offsets that are not one array");
                    }
                    List<Long> o = integers(p, file, name, "data_offsets", 2);
                    if (o.size() != 2) {
                        throw new SafetensorsException(file, name, "has data_offsets of " + o.size() + " numbers, not"
                                + " [begin, end]");
                    }
                    offsets = new long[] {o.get(0), o.get(1)};
                }
                default -> throw new SafetensorsException(file, name, "has an unknown field '" + field + "'");
            }
        }
        if (dtype == null || shape == null || offsets == null) {
            throw new SafetensorsException(file, name, "lacks " + (dtype == null ? "dtype" : shape == null ? "shape"
                    : "data_offsets"));
        }
        if (offsets[0] > offsets[1]) {
            throw new SafetensorsException(file, name, "has data_offsets [" + offsets[0] + ", " + offsets[1]
                    + "] that end before they begin");
        }
        long bytes = dtype.size();
        for (long d : shape) {
            try {
                bytes = Math.multiplyExact(bytes, d);
            } catch (ArithmeticException e) {
                throw new SafetensorsException(file, name, "has a shape " + shape + " too large to address");
            }
        }
        if (bytes != offsets[1] - offsets[0]) {
            throw new SafetensorsException(file, name, "has shape " + shape + " of " + dtype + " (" + bytes
                    + " bytes) but data_offsets [" + offsets[0] + ", " + offsets[1] + "] span " + (offsets[1] - offsets[0])
                    + " bytes");
        }
        return new Tensor(name, dtype, shape, offsets[0], offsets[1]);
    }

    private static Dtype dtype(String text, String file, String name) {
        try {
            return Dtype.valueOf(text);
        } catch (IllegalArgumentException e) {
            // A writer would write the same dtype again (audit 36: F8_E4M3 was told to rewrite the file).
            throw new SafetensorsException(file, name, "has dtype '" + text + "', which Warp does not know (F16 F32 F64"
                    + " BF16 U8 I8 U16 I16 U32 I32 U64 I64 BOOL)", "Convert that tensor to one of those dtypes (an"
                    + " F8 one to F16 or BF16, e.g. tensor.to(torch.bfloat16)) and save the file again, or leave the file"
                    + " out of the artifact.");
        }
    }

    private static List<Long> integers(JsonParser p, String file, String name, String what, int max) throws IOException {
        List<Long> out = new ArrayList<>();
        JsonToken t;
        while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
            if (t != JsonToken.VALUE_NUMBER_INT || p.getNumberType() == JsonParser.NumberType.BIG_INTEGER
                    || p.getLongValue() < 0) {
                throw new SafetensorsException(file, name, "has a " + what + " entry that is not a non-negative integer");
            }
            if (out.size() == max) {
                throw new SafetensorsException(file, name, "has more than " + max + " " + what + " entries");
            }
            out.add(p.getLongValue());
        }
        return out;
    }
}
