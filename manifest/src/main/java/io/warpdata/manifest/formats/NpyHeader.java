package io.warpdata.manifest.formats;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

/**
 * The header of an NPY v1.0 file (NumPy's {@code .npy} format): the magic {@code \x93NUMPY},
 * version 1.0, a 2-byte little-endian header length, then an ASCII Python dict literal
 * {@code {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }} padded with spaces and
 * ended by a newline so that the data starts at a multiple of 64 bytes (what NumPy itself
 * writes). Followed by the data, C order: exactly a safetensors tensor's bytes, so a tensor
 * becomes an {@code .npy} file by putting this header in front of a slice of its blob.
 */
public final class NpyHeader {
    /** NumPy aligns the data to 64 bytes (so that memory-mapped arrays are aligned); so do we. */
    private static final int ALIGN = 64;
    /** Header length field is 2 bytes in v1.0. */
    private static final int MAX_V1 = 65535;

    private NpyHeader() {
    }

    /**
     * NumPy's type string for a safetensors dtype ({@code <f4}, {@code |u1}, ...), or empty for a
     * dtype NumPy has no type for (BF16).
     */
    public static Optional<String> descr(SafetensorsHeader.Dtype dtype) {
        return Optional.ofNullable(switch (dtype) {
            case F16 -> "<f2";
            case F32 -> "<f4";
            case F64 -> "<f8";
            case BF16 -> null;
            case U8 -> "|u1";
            case I8 -> "|i1";
            case U16 -> "<u2";
            case I16 -> "<i2";
            case U32 -> "<u4";
            case I32 -> "<i4";
            case U64 -> "<u8";
            case I64 -> "<i8";
            case BOOL -> "|b1";
        });
    }

    /**
     * The header bytes for data of {@code descr} and {@code shape} in C order.
     *
     * @throws IllegalArgumentException if the header would not fit NPY v1.0 (a shape of
     *         thousands of dimensions; safetensors headers allow at most 64)
     */
    public static byte[] of(String descr, List<Long> shape) {
        // A Python tuple: () for a scalar, (n,) for one dimension, (a, b, ...) for more.
        String dims = shape.size() == 1 ? shape.get(0) + ","
                : String.join(", ", shape.stream().map(String::valueOf).toList());
        String dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
        int unpadded = 10 + dict.length() + 1;
        int total = (unpadded + ALIGN - 1) / ALIGN * ALIGN;
        int headerLen = total - 10;
        if (headerLen > MAX_V1) {
            throw new IllegalArgumentException("an NPY v1.0 header holds at most " + MAX_V1 + " bytes");
        }
        byte[] out = new byte[total];
        out[0] = (byte) 0x93;
        System.arraycopy("NUMPY".getBytes(StandardCharsets.US_ASCII), 0, out, 1, 5);
        out[6] = 1;
        out[7] = 0;
        out[8] = (byte) headerLen;
        out[9] = (byte) (headerLen >>> 8);
        byte[] d = dict.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(d, 0, out, 10, d.length);
        for (int i = 10 + d.length; i < total - 1; i++) {
            out[i] = ' ';
        }
        out[total - 1] = '\n';
        return out;
    }
}
