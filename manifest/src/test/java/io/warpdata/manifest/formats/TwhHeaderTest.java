package io.warpdata.manifest.formats;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The TWH1 header checks, on headers written here by hand from seed 003's shard format (the IT
 * reads shards numpy writes). Every refusal names the file and the field.
 */
class TwhHeaderTest {
    private static final String FILE = "shard_00000.bin";
    private static final long UNSET = Long.MIN_VALUE;

    /** A header as the seed's writer lays it out; tests then break one field. */
    private static final class Shard {
        int magic = 0x31485754; // "TWH1" read little-endian
        long version = 1;
        long dtype = 0;
        long endianness = 0;
        long width = 4;
        long height = 2;
        long channels = 3;
        long maxBoxes = 2;
        long samples = 5;
        long imageOffset = UNSET;
        long boxesOffset = UNSET;
        long maskOffset = UNSET;
        long metaOffset = 0;
        long checksumOffset = 0;
        long fileSize = UNSET;

        int elem() {
            return dtype == 1 ? 2 : 4;
        }

        long image() {
            return samples * channels * height * width * elem();
        }

        long boxes() {
            return samples * maxBoxes * 4 * elem();
        }

        long mask() {
            return samples * maxBoxes * elem();
        }

        /** Fills the offsets and size the writer would have written, unless a test set them. */
        Shard laidOut() {
            if (imageOffset == UNSET) {
                imageOffset = 80;
            }
            if (boxesOffset == UNSET) {
                boxesOffset = imageOffset + image();
            }
            if (maskOffset == UNSET) {
                maskOffset = boxesOffset + boxes();
            }
            if (fileSize == UNSET) {
                fileSize = maskOffset + mask();
            }
            return this;
        }

        byte[] bytes() {
            laidOut();
            ByteBuffer b = ByteBuffer.allocate(80).order(ByteOrder.LITTLE_ENDIAN);
            b.putInt(magic).putInt((int) version).putInt((int) dtype).putInt((int) endianness).putInt((int) width)
                    .putInt((int) height).putInt((int) channels).putInt((int) maxBoxes).putLong(samples)
                    .putLong(imageOffset).putLong(boxesOffset).putLong(maskOffset).putLong(metaOffset).putLong(checksumOffset);
            return b.array();
        }

        TwhHeader parse() {
            byte[] h = bytes();
            return TwhHeader.parse(h, fileSize, FILE);
        }
    }

    private static void refused(Shard s, String... expected) {
        assertThatThrownBy(s::parse).isInstanceOf(TwhException.class).hasMessageContaining(FILE)
                .satisfies(e -> {
                    for (String x : expected) {
                        assertThat(e.getMessage()).contains(x);
                    }
                });
    }

    @Test
    void aHeaderAsTheSeedsWriterLaysItOutGivesEveryFieldAndSectionSize() {
        TwhHeader h = new Shard().parse();
        assertThat(h.shardVersion()).isEqualTo(1);
        assertThat(h.dtype()).isEqualTo(TwhHeader.Dtype.F32);
        assertThat(h.endianness()).isEqualTo(TwhHeader.Endianness.LITTLE);
        assertThat(h.width()).isEqualTo(4);
        assertThat(h.height()).isEqualTo(2);
        assertThat(h.channels()).isEqualTo(3);
        assertThat(h.maxBoxes()).isEqualTo(2);
        assertThat(h.samples()).isEqualTo(5);
        assertThat(h.imageOffset()).isEqualTo(80);
        assertThat(h.imageBytes()).isEqualTo(5 * 3 * 2 * 4 * 4);
        assertThat(h.boxesOffset()).isEqualTo(80 + 480);
        assertThat(h.boxesBytes()).isEqualTo(5 * 2 * 4 * 4);
        assertThat(h.maskBytes()).isEqualTo(5 * 2 * 4);
        assertThat(h.maskEnd()).isEqualTo(80 + 480 + 160 + 40);
    }

    @Test
    void f16BigEndianShardsHaveTwoByteElements() {
        Shard s = new Shard();
        s.dtype = 1;
        s.endianness = 1;
        TwhHeader h = s.parse();
        assertThat(h.dtype()).isEqualTo(TwhHeader.Dtype.F16);
        assertThat(h.endianness()).isEqualTo(TwhHeader.Endianness.BIG);
        assertThat(h.endianness().manifestName()).isEqualTo("Big");
        assertThat(h.maskEnd()).isEqualTo(80 + 240 + 80 + 20);
    }

    @Test
    void aShardWithoutBoxesOrSamplesIsFine() {
        Shard noBoxes = new Shard();
        noBoxes.maxBoxes = 0;
        assertThat(noBoxes.parse().boxesBytes()).isZero();
        Shard empty = new Shard();
        empty.samples = 0;
        assertThat(empty.parse().maskEnd()).isEqualTo(80);
    }

    @Test
    void aFileShorterThanTheHeaderIsRefused() {
        assertThatThrownBy(() -> TwhHeader.parse(new byte[10], 10, FILE)).isInstanceOf(TwhException.class)
                .hasMessageContaining(FILE).hasMessageContaining("has 10 bytes").hasMessageContaining("80-byte header");
    }

    @Test
    void aWrongMagicIsRefused() {
        Shard s = new Shard();
        s.magic = 0x32485754; // "TWH2"
        refused(s, "magic", "'TWH2', not TWH1");
        Shard binary = new Shard();
        binary.magic = 0;
        refused(binary, "magic", "\\x00");
    }

    @Test
    void anUnknownVersionDtypeOrEndiannessIsRefused() {
        Shard v = new Shard();
        v.version = 2;
        refused(v, "shard_version is 2");
        Shard d = new Shard();
        d.dtype = 2;
        refused(d, "dtype is 2", "0 (f32) or 1 (f16)");
        Shard huge = new Shard();
        huge.dtype = 0xffffffffL;
        refused(huge, "dtype is 4294967295");
        Shard e = new Shard();
        e.endianness = 7;
        refused(e, "endianness is 7");
    }

    @Test
    void dimensionsOutOfBoundsAreRefusedBeforeAnyMultiplication() {
        Shard w = new Shard();
        w.width = 0;
        refused(w, "width is 0");
        Shard h = new Shard();
        h.height = 0xffffffffL;
        h.fileSize = 1L << 50;
        refused(h, "height is 4294967295", "between 1 and 65536");
        Shard c = new Shard();
        c.channels = 65;
        refused(c, "channels is 65");
        Shard b = new Shard();
        b.maxBoxes = 1 << 20;
        refused(b, "max_boxes is 1048576");
    }

    @Test
    void moreSamplesThanTheFileCanHoldAreRefusedWithoutOverflow() {
        Shard s = new Shard().laidOut();
        s.samples = Long.MAX_VALUE / 3;
        refused(s, "samples is " + Long.MAX_VALUE / 3, "hold at most 7 samples of 3x2x4 F32 with 2 boxes");
        Shard negative = new Shard().laidOut();
        negative.samples = -1;
        refused(negative, "samples is 18446744073709551615");
        Shard big = new Shard();
        big.width = 65536;
        big.height = 65536;
        big.channels = 64;
        big.samples = 1L << 30;
        big.imageOffset = 80;
        big.boxesOffset = 80;
        big.maskOffset = 80;
        big.fileSize = 1L << 40;
        refused(big, "samples is 1073741824", "hold at most 0 samples");
        Shard manyBoxes = new Shard().laidOut();
        manyBoxes.width = 1;
        manyBoxes.height = 1;
        manyBoxes.channels = 1;
        manyBoxes.dtype = 1;
        manyBoxes.maxBoxes = 65536;
        manyBoxes.samples = 1000;
        refused(manyBoxes, "samples is 1000", "with 65536 boxes");
    }

    @Test
    void offsetsBeyondTheFileAreRefused() {
        Shard s = new Shard().laidOut();
        s.maskOffset = s.fileSize + 1;
        refused(s, "mask_offset is " + (s.fileSize + 1), "beyond the file's " + s.fileSize + " bytes");
        Shard neg = new Shard().laidOut();
        neg.boxesOffset = -8;
        refused(neg, "boxes_offset is 18446744073709551608");
    }

    @Test
    void sectionsMustFollowEachOtherAsTheSizesSay() {
        Shard overlap = new Shard().laidOut();
        overlap.boxesOffset -= 4;
        refused(overlap, "boxes_offset is 556", "must start at 560", "image section", "(the sections overlap)");
        Shard gap = new Shard().laidOut();
        gap.maskOffset += 8;
        gap.fileSize += 8;
        refused(gap, "mask_offset", "(a gap the format does not have)");
        Shard intoHeader = new Shard();
        intoHeader.imageOffset = 64;
        refused(intoHeader, "image_offset is 64", "right after the 80-byte header");
    }

    @Test
    void theFileMustEndWhereTheMaskSectionEnds() {
        Shard truncated = new Shard().laidOut();
        truncated.fileSize -= 4;
        refused(truncated, "(the file is truncated)");
        Shard trailing = new Shard().laidOut();
        trailing.fileSize += 1;
        refused(trailing, "(trailing bytes)");
    }

    @Test
    void reservedSectionsMayFollowTheMaskInOrder() {
        Shard meta = new Shard().laidOut();
        long end = meta.fileSize;
        meta.metaOffset = end;
        meta.checksumOffset = end + 16;
        meta.fileSize = end + 48;
        assertThat(meta.parse().metaOffset()).isEqualTo(end);

        Shard inside = new Shard().laidOut();
        inside.metaOffset = inside.maskOffset;
        inside.fileSize += 16;
        refused(inside, "meta_offset is " + inside.maskOffset, "at or after byte " + (inside.fileSize - 16));
        Shard reversed = new Shard().laidOut();
        end = reversed.fileSize;
        reversed.metaOffset = end + 16;
        reversed.checksumOffset = end + 8;
        reversed.fileSize = end + 32;
        refused(reversed, "checksum_offset is " + (end + 8));
        Shard truncated = new Shard().laidOut();
        truncated.metaOffset = truncated.fileSize - 4;
        truncated.fileSize -= 2;
        refused(truncated, "(the file is truncated)");
    }
}
