package io.warpdata.manifest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The deflated header blob: entries in the tensor hashes' order, each header inflating to exactly
 * the bytes the tensor hashes vouch for, and anything else refused by name, never inflated past
 * the length those give.
 */
class TensorHeadersTest {
    private static final byte[] JSON_A = header(5000);
    private static final byte[] JSON_B = header(3);

    /** A safetensors header as numpy's writers make one: F32 vectors of 256, back to back. */
    private static byte[] header(int tensors) {
        StringBuilder b = new StringBuilder("{");
        for (int i = 0; i < tensors; i++) {
            b.append(i == 0 ? "" : ",").append("\"emb/").append(i).append("\":{\"dtype\":\"F32\",\"shape\":[256],")
                    .append("\"data_offsets\":[").append(1024L * i).append(',').append(1024L * (i + 1)).append("]}");
        }
        return b.append('}').toString().getBytes(StandardCharsets.UTF_8);
    }

    private static BlobId id(String s) {
        return BlobId.of(s.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void eachMembersHeaderIsFoundAtTheTensorHashEntrysPlaceAndInflatesToItsBytes() {
        BlobId a = id("member a");
        BlobId b = id("member b");
        TensorHashes.Builder builder = new TensorHashes.Builder()
                .add(a, JSON_A.length, BlobId.of(JSON_A), List.of(id("t0")), JSON_A)
                .add(b, JSON_B.length, BlobId.of(JSON_B), List.of(id("t1")), JSON_B)
                .add(a, 7, id("the same member again"), List.of(), "{}".getBytes(StandardCharsets.UTF_8));
        byte[] hashes = builder.build();
        byte[] headers = builder.buildHeaders();
        int count = TensorHashes.count(hashes, hashes.length, "h");
        assertThat(TensorHeaders.count(headers, headers.length, "z")).isEqualTo(count).isEqualTo(2);
        for (int i = 0; i < count; i++) {
            TensorHashes.Entry e = TensorHashes.entry(slice(hashes, TensorHashes.entryAt(i), TensorHashes.ENTRY_BYTES),
                    count, hashes.length, "h");
            TensorHeaders.Entry z = TensorHeaders.entry(slice(headers, TensorHeaders.entryAt(i), TensorHeaders.ENTRY_BYTES),
                    count, headers.length, "z");
            assertThat(z.member()).as("entry %d is the same member's", i).isEqualTo(e.member());
            byte[] deflated = slice(headers, z.at(), z.length());
            assertThat(BlobId.of(deflated)).isEqualTo(z.hash());
            byte[] json = TensorHeaders.inflate(deflated, e.headerLength(), e.header(), "z");
            assertThat(json).isEqualTo(e.member().equals(a) ? JSON_A : JSON_B);
        }
        TensorHeaders.Entry big = TensorHeaders.entry(slice(headers, TensorHeaders.entryAt(0), TensorHeaders.ENTRY_BYTES),
                count, headers.length, "z");
        big = big.member().equals(a) ? big : TensorHeaders.entry(slice(headers, TensorHeaders.entryAt(1),
                TensorHeaders.ENTRY_BYTES), count, headers.length, "z");
        assertThat(big.length()).as("5,000 tensors' header of %d bytes, deflated", JSON_A.length)
                .isLessThan(JSON_A.length / 6);
        assertThat(TensorHeaders.members(headers)).containsExactlyInAnyOrder(a, b);
    }

    @Test
    void aHeaderThatDoesNotInflateToExactlyTheVouchedBytesIsRefused() {
        byte[] deflated = TensorHeaders.deflate(JSON_A);
        BlobId hash = BlobId.of(JSON_A);
        assertThatThrownBy(() -> TensorHeaders.inflate(deflated, JSON_A.length - 1, hash, "z"))
                .isInstanceOf(ManifestCorruptedException.class).hasMessageContaining("and more");
        assertThatThrownBy(() -> TensorHeaders.inflate(deflated, JSON_A.length + 1, hash, "z"))
                .isInstanceOf(ManifestCorruptedException.class).hasMessageContaining("does not inflate to the");
        assertThatThrownBy(() -> TensorHeaders.inflate(deflated, JSON_A.length, id("another header"), "z"))
                .isInstanceOf(ManifestCorruptedException.class).hasMessageContaining("SHA-256");
        byte[] flipped = deflated.clone();
        flipped[flipped.length / 2] ^= 0x40;
        assertThatThrownBy(() -> TensorHeaders.inflate(flipped, JSON_A.length, hash, "z"))
                .isInstanceOf(ManifestCorruptedException.class);
        byte[] trailing = Arrays.copyOf(deflated, deflated.length + 3);
        assertThatThrownBy(() -> TensorHeaders.inflate(trailing, JSON_A.length, hash, "z"))
                .isInstanceOf(ManifestCorruptedException.class);
        // A bomb: 64 MiB of zeros deflate to 64 KiB; asked for 1 KiB, no more is inflated.
        byte[] bomb = TensorHeaders.deflate(new byte[64 << 20]);
        assertThatThrownBy(() -> TensorHeaders.inflate(bomb, 1024, hash, "z"))
                .isInstanceOf(ManifestCorruptedException.class).hasMessageContaining("and more");
        assertThat(TensorHeaders.inflate(deflated, JSON_A.length, hash, "z")).isEqualTo(JSON_A);
    }

    @Test
    void aBlobWhoseEntriesDoNotFitIsRefusedByName() {
        byte[] headers = new TensorHashes.Builder().add(id("m"), JSON_B.length, BlobId.of(JSON_B), List.of(), JSON_B)
                .buildHeaders();
        assertThatThrownBy(() -> TensorHeaders.count("WTH1\0\0\0\1".getBytes(StandardCharsets.US_ASCII), 100, "z"))
                .isInstanceOf(ManifestCorruptedException.class).hasMessageContaining("WTZ1");
        assertThatThrownBy(() -> TensorHeaders.count(headers, TensorHeaders.entryAt(1) - 1, "z"))
                .isInstanceOf(ManifestCorruptedException.class).hasMessageContaining("do not fit");
        byte[] entry = slice(headers, TensorHeaders.entryAt(0), TensorHeaders.ENTRY_BYTES);
        assertThatThrownBy(() -> TensorHeaders.entry(entry, 1, headers.length - 1, "z"))
                .isInstanceOf(ManifestCorruptedException.class).hasMessageContaining("does not fit");
        assertThat(new TensorHashes.Builder().add(id("m"), 2, id("h"), List.of()).buildHeaders())
                .as("a member added without its header: no blob").isNull();
    }

    private static byte[] slice(byte[] b, long at, int len) {
        return Arrays.copyOfRange(b, (int) at, (int) at + len);
    }
}
