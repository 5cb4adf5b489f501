package io.warpdata.manifest.formats;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * The header of a TWH1 tensor-warehouse shard, checked against seed 003's "Shard binary format":
 * 80 little-endian bytes
 *
 * <pre>
 *  0 magic "TWH1"        4 shard_version u32   8 dtype u32 (0 f32, 1 f16)   12 endianness u32 (0 little, 1 big)
 * 16 width u32          20 height u32         24 channels u32              28 max_boxes u32
 * 32 samples u64        40 image_offset u64   48 boxes_offset u64          56 mask_offset u64
 * 64 meta_offset u64 (reserved)               72 checksum_offset u64 (reserved)
 * </pre>
 *
 * then three sections in this order: images in CHW ({@code samples x channels x height x width}
 * elements), boxes padded to max_boxes ({@code samples x max_boxes x 4}) and the box mask
 * ({@code samples x max_boxes}), each element of the shard's dtype in the shard's endianness.
 *
 * <p>Checked: the magic; a shard version Warp knows ({@link #VERSION}); dtype and endianness
 * codes; every dimension within its bound ({@link #MAX_SIDE}, {@link #MAX_CHANNELS},
 * {@link #MAX_BOXES}) and samples within what the file can hold, all before any multiplication,
 * so no product overflows; the sections contiguous, the first right after the header, as the
 * seed's writer lays them out (a writer that pads or reorders them is a new shard version); and
 * the file ending where the mask section ends, unless the reserved meta or checksum offsets point
 * past it (their sections' sizes are not defined, so only their order and bounds are checked).
 * Every refusal is a {@link TwhException} naming the file and the field.
 */
public record TwhHeader(int shardVersion, Dtype dtype, Endianness endianness, int width, int height, int channels,
                        int maxBoxes, long samples, long imageOffset, long boxesOffset, long maskOffset,
                        long metaOffset, long checksumOffset) {
    /** The header's size: magic, seven u32, samples and five u64 offsets. */
    public static final int HEADER_BYTES = 80;
    /** The only shard version the seed defines. */
    public static final int VERSION = 1;
    /**
     * Largest width or height: 65,536 pixels. Warehouse images are resized to a fixed training
     * size (hundreds of pixels); the bound keeps a sample's size below 2^41 bytes, so products of
     * header fields never overflow a long.
     */
    public static final int MAX_SIDE = 1 << 16;
    /** Most channels: 64, room for multispectral images beyond the seed's "typically 3". */
    public static final int MAX_CHANNELS = 64;
    /** Most boxes per sample: 65,536, far beyond any detection label set. */
    public static final int MAX_BOXES = 1 << 16;

    /** 2^56 bytes (64 PiB): beyond any file, and small enough that sums of offsets never overflow. */
    private static final long MAX_FILE_BYTES = 1L << 56;
    private static final byte[] MAGIC = {'T', 'W', 'H', '1'};

    public TwhHeader {
        Objects.requireNonNull(dtype, "dtype");
        Objects.requireNonNull(endianness, "endianness");
    }

    /** Element types: the header's code and the manifest's name. */
    public enum Dtype {
        F32(0, 4), F16(1, 2);

        private final int code;
        private final int size;

        Dtype(int code, int size) {
            this.code = code;
            this.size = size;
        }

        /** The header's code. */
        public int code() {
            return code;
        }

        /** Bytes per element. */
        public int size() {
            return size;
        }
    }

    /** Byte order of the sections (the header itself is always little-endian). */
    public enum Endianness {
        LITTLE(0, "Little"), BIG(1, "Big");

        private final int code;
        private final String manifestName;

        Endianness(int code, String manifestName) {
            this.code = code;
            this.manifestName = manifestName;
        }

        /** The header's code. */
        public int code() {
            return code;
        }

        /** How the warehouse manifest spells it: {@code Little} or {@code Big}. */
        public String manifestName() {
            return manifestName;
        }
    }

    /** Bytes of one sample's image: channels x height x width x dtype size. */
    public long sampleImageBytes() {
        return (long) channels * height * width * dtype.size;
    }

    /** Bytes of the image section. */
    public long imageBytes() {
        return samples * sampleImageBytes();
    }

    /** Bytes of the boxes section: samples x max_boxes x 4 x dtype size. */
    public long boxesBytes() {
        return samples * maxBoxes * 4L * dtype.size;
    }

    /** Bytes of the mask section: samples x max_boxes x dtype size. */
    public long maskBytes() {
        return samples * maxBoxes * (long) dtype.size;
    }

    /** Where the mask section, the last the seed defines, ends. */
    public long maskEnd() {
        return maskOffset + maskBytes();
    }

    /**
     * Parses and checks a shard's header.
     *
     * @param header   the file's first bytes (at least {@link #HEADER_BYTES}, or the whole file if shorter)
     * @param fileSize the whole file's size: the sections must fit it and end where it ends
     * @param file     what to name in errors
     * @throws TwhException naming the file and the field on any violation
     */
    public static TwhHeader parse(byte[] header, long fileSize, String file) {
        if (fileSize > MAX_FILE_BYTES) {
            throw new TwhException(file, null, "has " + fileSize + " bytes, more than any file system holds");
        }
        if (fileSize < HEADER_BYTES || header.length < HEADER_BYTES) {
            throw new TwhException(file, null, "has " + Math.min(fileSize, header.length) + " bytes; a TWH1 shard starts"
                    + " with an " + HEADER_BYTES + "-byte header");
        }
        for (int i = 0; i < MAGIC.length; i++) {
            if (header[i] != MAGIC[i]) {
                throw new TwhException(file, "magic", "is " + printable(header) + ", not TWH1 (this is not a tensor-warehouse"
                        + " shard)");
            }
        }
        ByteBuffer b = ByteBuffer.wrap(header, 0, HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        long version = u32(b, 4);
        if (version != VERSION) {
            throw new TwhException(file, "shard_version", "is " + version + "; Warp knows shard version " + VERSION);
        }
        long dtypeCode = u32(b, 8);
        Dtype dtype = switch ((int) Math.min(dtypeCode, Integer.MAX_VALUE)) {
            case 0 -> Dtype.F32;
            case 1 -> Dtype.F16;
            default -> throw new TwhException(file, "dtype", "is " + dtypeCode + "; it must be 0 (f32) or 1 (f16)");
        };
        long endianCode = u32(b, 12);
        Endianness endianness = switch ((int) Math.min(endianCode, Integer.MAX_VALUE)) {
            case 0 -> Endianness.LITTLE;
            case 1 -> Endianness.BIG;
            default -> throw new TwhException(file, "endianness", "is " + endianCode + "; it must be 0 (little) or 1 (big)");
        };
        int width = bounded(file, "width", u32(b, 16), 1, MAX_SIDE);
        int height = bounded(file, "height", u32(b, 20), 1, MAX_SIDE);
        int channels = bounded(file, "channels", u32(b, 24), 1, MAX_CHANNELS);
        int maxBoxes = bounded(file, "max_boxes", u32(b, 28), 0, MAX_BOXES);
        long samples = b.getLong(32);
        long imageOffset = offset(file, "image_offset", b.getLong(40), fileSize);
        long boxesOffset = offset(file, "boxes_offset", b.getLong(48), fileSize);
        long maskOffset = offset(file, "mask_offset", b.getLong(56), fileSize);
        long metaOffset = offset(file, "meta_offset", b.getLong(64), fileSize);
        long checksumOffset = offset(file, "checksum_offset", b.getLong(72), fileSize);

        // Each section must fit the file: the image section alone bounds samples (a sample's
        // image is at least 2 bytes), the boxes and mask sections bound them again. With those
        // bounds every section size is at most the file size, so no product or sum overflows.
        long room = fileSize - HEADER_BYTES;
        long perImage = (long) channels * height * width * dtype.size;
        long perBoxes = (long) maxBoxes * 5 * dtype.size;
        if (samples < 0 || samples > room / perImage || (perBoxes > 0 && samples > room / perBoxes)) {
            throw new TwhException(file, "samples", "is " + Long.toUnsignedString(samples) + ", but the file's " + room
                    + " bytes after the header hold at most " + Math.min(room / perImage, perBoxes > 0 ? room / perBoxes
                    : Long.MAX_VALUE) + " samples of " + channels + "x" + height + "x" + width + " " + dtype + " with "
                    + maxBoxes + " boxes (the header is wrong, or the file is truncated)");
        }
        TwhHeader h = new TwhHeader(VERSION, dtype, endianness, width, height, channels, maxBoxes, samples, imageOffset,
                boxesOffset, maskOffset, metaOffset, checksumOffset);
        section(file, "image_offset", imageOffset, HEADER_BYTES, "right after the " + HEADER_BYTES + "-byte header");
        section(file, "boxes_offset", boxesOffset, imageOffset + h.imageBytes(), "where the image section ("
                + samples + " x " + channels + "x" + height + "x" + width + " " + dtype + " = " + h.imageBytes()
                + " bytes) ends");
        section(file, "mask_offset", maskOffset, boxesOffset + h.boxesBytes(), "where the boxes section (" + samples
                + " x " + maxBoxes + " x 4 " + dtype + " = " + h.boxesBytes() + " bytes) ends");
        long end = h.maskEnd();
        if (metaOffset == 0 && checksumOffset == 0) {
            if (end != fileSize) {
                throw new TwhException(file, null, "has " + fileSize + " bytes, but its mask section (" + h.maskBytes()
                        + " bytes at " + maskOffset + ") ends at byte " + end
                        + (end > fileSize ? " (the file is truncated)" : " (trailing bytes)"));
            }
        } else {
            // The reserved sections follow the mask, in order; their sizes are not defined.
            if (end > fileSize) {
                throw new TwhException(file, null, "has " + fileSize + " bytes, but its mask section ends at byte " + end
                        + " (the file is truncated)");
            }
            long after = end;
            if (metaOffset != 0) {
                reserved(file, "meta_offset", metaOffset, after, fileSize);
                after = metaOffset;
            }
            if (checksumOffset != 0) {
                reserved(file, "checksum_offset", checksumOffset, after, fileSize);
            }
        }
        return h;
    }

    private static long u32(ByteBuffer b, int at) {
        return Integer.toUnsignedLong(b.getInt(at));
    }

    private static int bounded(String file, String field, long value, int min, int max) {
        if (value < min || value > max) {
            throw new TwhException(file, field, "is " + value + "; it must be between " + min + " and " + max);
        }
        return (int) value;
    }

    private static long offset(String file, String field, long value, long fileSize) {
        if (value < 0 || value > fileSize) {
            throw new TwhException(file, field, "is " + Long.toUnsignedString(value) + ", beyond the file's " + fileSize
                    + " bytes");
        }
        return value;
    }

    private static void section(String file, String field, long offset, long expected, String where) {
        if (offset != expected) {
            throw new TwhException(file, field, "is " + offset + "; the section must start at " + expected + ", " + where
                    + (offset < expected ? " (the sections overlap)" : " (a gap the format does not have)"));
        }
    }

    private static void reserved(String file, String field, long offset, long after, long fileSize) {
        if (offset < after || offset >= fileSize) {
            throw new TwhException(file, field, "is " + offset + "; a reserved section must start at or after byte " + after
                    + " and inside the file's " + fileSize + " bytes");
        }
    }

    private static String printable(byte[] header) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < 4; i++) {
            int c = header[i] & 0xff;
            s.append(c >= 0x20 && c < 0x7f ? String.valueOf((char) c) : String.format("\\x%02x", c));
        }
        return "'" + s + "'";
    }
}
