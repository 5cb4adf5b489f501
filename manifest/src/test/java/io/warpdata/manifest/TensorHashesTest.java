package io.warpdata.manifest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The tensor hash blob: what a builder writes is what a reader finds, and a damaged one is refused by name. */
class TensorHashesTest {
    private static BlobId id(String s) {
        return BlobId.of(s.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void entriesAreSortedByMemberAndPointAtTheirHashes() {
        List<BlobId> a = List.of(id("a0"), id("a1"), id("a2"));
        List<BlobId> b = List.of(id("b0"));
        BlobId memberA = id("member a");
        BlobId memberB = id("member b");
        byte[] blob = new TensorHashes.Builder().add(memberA, 120, id("header a"), a).add(memberB, 64, id("header b"), b)
                .add(memberA, 999, id("same bytes again"), List.of()).build();

        int count = TensorHashes.count(Arrays.copyOf(blob, TensorHashes.HEAD_BYTES), blob.length, "t");
        assertThat(count).as("a member added twice is kept once").isEqualTo(2);
        assertThat(blob.length).isEqualTo(TensorHashes.HEAD_BYTES + 2 * TensorHashes.ENTRY_BYTES + 4 * 32);
        TensorHashes.Entry first = entry(blob, 0, count);
        TensorHashes.Entry second = entry(blob, 1, count);
        assertThat(first.member().hex()).isLessThan(second.member().hex());
        TensorHashes.Entry ea = first.member().equals(memberA) ? first : second;
        assertThat(ea.headerLength()).isEqualTo(120);
        assertThat(ea.header()).isEqualTo(id("header a"));
        assertThat(ea.tensors()).isEqualTo(3);
        byte[] array = Arrays.copyOfRange(blob, (int) ea.hashesAt(), (int) (ea.hashesAt() + ea.hashesLength()));
        assertThat(BlobId.of(array)).as("the array's own hash").isEqualTo(ea.hashes());
        assertThat(TensorHashes.hashes(array)).isEqualTo(a);
    }

    private static TensorHashes.Entry entry(byte[] blob, int i, int count) {
        int at = (int) TensorHashes.entryAt(i);
        return TensorHashes.entry(Arrays.copyOfRange(blob, at, at + TensorHashes.ENTRY_BYTES), count, blob.length, "t");
    }

    @Test
    void aBlobThatIsNotOneOrWhoseNumbersDoNotFitIsRefused() {
        byte[] blob = new TensorHashes.Builder().add(id("m"), 10, id("h"), List.of(id("t"))).build();
        assertThatThrownBy(() -> TensorHashes.count("WMI1\0\0\0\1".getBytes(StandardCharsets.ISO_8859_1), 100, "src"))
                .isInstanceOf(ManifestCorruptedException.class).hasMessageContaining("src").hasMessageContaining("WTH1");
        byte[] many = Arrays.copyOf(blob, TensorHashes.HEAD_BYTES);
        ByteBuffer.wrap(many).putInt(4, 1000);
        assertThatThrownBy(() -> TensorHashes.count(many, blob.length, "src"))
                .isInstanceOf(ManifestCorruptedException.class).hasMessageContaining("1000 entries do not fit");
        byte[] e = Arrays.copyOfRange(blob, TensorHashes.HEAD_BYTES, TensorHashes.HEAD_BYTES + TensorHashes.ENTRY_BYTES);
        ByteBuffer.wrap(e).putInt(32 + 8 + 32 + 8, 2); // two tensors where the blob holds one hash
        assertThatThrownBy(() -> TensorHashes.entry(e, 1, blob.length, "src"))
                .isInstanceOf(ManifestCorruptedException.class).hasMessageContaining("does not fit");
        byte[] before = Arrays.copyOfRange(blob, TensorHashes.HEAD_BYTES, TensorHashes.HEAD_BYTES + TensorHashes.ENTRY_BYTES);
        ByteBuffer.wrap(before).putLong(32 + 8 + 32, 4); // an array inside the entries
        assertThatThrownBy(() -> TensorHashes.entry(before, 1, blob.length, "src"))
                .isInstanceOf(ManifestCorruptedException.class);
    }
}
