package io.warpdata.manifest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class BlockHashListTest {
    private static final int BS = BlockHashList.MIN_BLOCK_SIZE;

    @Test
    void maxSerializedSizeBoundsEveryListOfABlobAndNoMore() {
        Random r = new Random(5);
        for (long size : new long[] {0, 1, 4095, 4096, 4097, 1 << 20, 10_000_000}) {
            byte[] data = new byte[(int) size];
            r.nextBytes(data);
            int max = BlockHashList.maxSerializedSize(size);
            for (int bs = BlockHashList.MIN_BLOCK_SIZE; bs <= BlockHashList.MAX_BLOCK_SIZE; bs <<= 2) {
                assertThat(BlockHashList.of(data, bs).serialize().length).as(size + " in blocks of " + bs)
                        .isLessThanOrEqualTo(max);
            }
            assertThat(BlockHashList.of(data, BlockHashList.MIN_BLOCK_SIZE).serialize()).hasSize(max);
        }
        assertThat(BlockHashList.maxSerializedSize(Long.MAX_VALUE)).isEqualTo(Integer.MAX_VALUE - 16);
    }

    @Test
    void aOneBlockBlobsListIsItsOwnIdAndNothingElseIsOneBlock() {
        Random r = new Random(7);
        int bs = BlockHashList.DEFAULT_BLOCK_SIZE;
        for (int size : new int[] {1, 700_000, bs}) {
            byte[] blob = new byte[size];
            r.nextBytes(blob);
            BlockHashList derived = BlockHashList.ofOneBlock(BlobId.of(blob), size, bs);
            assertThat(derived.serialize()).as("size %d", size).isEqualTo(BlockHashList.of(blob, bs).serialize());
            assertThat(derived.verify(0, blob, 0, size)).isTrue();
        }
        BlobId id = BlobId.of(new byte[] {1});
        assertThatThrownBy(() -> BlockHashList.ofOneBlock(id, 0, bs)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> BlockHashList.ofOneBlock(id, bs + 1L, bs)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> BlockHashList.ofOneBlock(id, 10, 1000)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void emptyBlobHasNoBlocks() throws IOException {
        BlockHashList l = BlockHashList.of(new byte[0], BS);
        assertThat(l.blockCount()).isZero();
        assertThat(l.blobSize()).isZero();
        assertThat(l.serialize()).hasSize(20);
        assertThat(BlockHashList.parse(l.serialize(), "x")).isEqualTo(l);
        assertThat(BlockHashList.compute(InputStream.nullInputStream(), BS)).isEqualTo(l);
    }

    @Test
    void blocksCoverTheBlobAndTheLastMayBeShort() {
        Random r = new Random(1);
        for (int size : new int[] {1, BS - 1, BS, BS + 1, 3 * BS, 3 * BS + 17}) {
            byte[] blob = new byte[size];
            r.nextBytes(blob);
            BlockHashList l = BlockHashList.of(blob, BS);
            assertThat(l.blockCount()).isEqualTo((size + BS - 1) / BS);
            long total = 0;
            for (int i = 0; i < l.blockCount(); i++) {
                assertThat(l.blockOffset(i)).isEqualTo(total);
                int len = l.blockLength(i);
                assertThat(len).isBetween(1, BS);
                assertThat(l.hashOf(i)).isEqualTo(BlobId.of(Arrays.copyOfRange(blob, (int) total, (int) total + len)));
                assertThat(l.blockOf(total)).isEqualTo(i);
                total += len;
            }
            assertThat(total).isEqualTo(size);
        }
    }

    @Test
    void computeFromStreamMatchesInMemoryAndRoundTrips() throws IOException {
        Random r = new Random(2);
        for (int i = 0; i < 40; i++) {
            int bs = BS << r.nextInt(3);
            byte[] blob = new byte[r.nextInt(6 * bs)];
            r.nextBytes(blob);
            // a stream that returns short reads, as network streams do
            InputStream trickle = new ByteArrayInputStream(blob) {
                @Override
                public synchronized int read(byte[] b, int off, int len) {
                    return super.read(b, off, Math.min(len, 1 + r.nextInt(5000)));
                }
            };
            BlockHashList streamed = BlockHashList.compute(trickle, bs);
            BlockHashList direct = BlockHashList.of(blob, bs);
            assertThat(streamed).isEqualTo(direct);
            assertThat(streamed.blobSize()).isEqualTo(blob.length);
            byte[] bytes = direct.serialize();
            assertThat(bytes).hasSize(20 + 32 * direct.blockCount());
            assertThat(BlockHashList.parse(bytes, "x")).isEqualTo(direct);
            assertThat(direct.id()).isEqualTo(BlobId.of(bytes));
        }
    }

    @Test
    void serializedHeaderIsBigEndianAsDocumented() {
        byte[] bytes = BlockHashList.of(new byte[BS + 1], BS).serialize();
        ByteBuffer b = ByteBuffer.wrap(bytes);
        assertThat(new String(bytes, 0, 4, java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("WBHL");
        b.position(4);
        assertThat(b.getInt()).isEqualTo(1);
        assertThat(b.getInt()).isEqualTo(BS);
        assertThat(b.getLong()).isEqualTo(BS + 1);
        assertThat(bytes).hasSize(20 + 64);
    }

    @Test
    void verifyAcceptsExactBlocksAndRejectsAnythingElse() {
        Random r = new Random(3);
        byte[] blob = new byte[2 * BS + 100];
        r.nextBytes(blob);
        BlockHashList l = BlockHashList.of(blob, BS);
        byte[] padded = new byte[blob.length + 10];
        System.arraycopy(blob, 0, padded, 5, blob.length);
        for (int i = 0; i < l.blockCount(); i++) {
            int off = (int) l.blockOffset(i);
            int len = l.blockLength(i);
            assertThat(l.verify(i, blob, off, len)).isTrue();
            assertThat(l.verify(i, padded, off + 5, len)).isTrue();
            assertThat(l.verify(i, blob, off, len - 1)).as("short").isFalse();
            byte[] flipped = Arrays.copyOfRange(blob, off, off + len);
            flipped[r.nextInt(len)] ^= (byte) (1 << r.nextInt(8));
            assertThat(l.verify(i, flipped, 0, len)).as("one bit flipped").isFalse();
            int other = (i + 1) % l.blockCount();
            if (l.blockLength(other) == len) {
                assertThat(l.verify(other, blob, off, len)).as("wrong block").isFalse();
            }
        }
        assertThat(l.verify(2, new byte[BS], 0, BS)).as("longer than the last block").isFalse();
        assertThatThrownBy(() -> l.verify(3, blob, 0, 1)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> l.verify(0, blob, blob.length - 1, BS)).isInstanceOf(IndexOutOfBoundsException.class);
    }

    @Test
    void verifyIsSafeAcrossThreads() throws InterruptedException {
        Random r = new Random(4);
        byte[] blob = new byte[8 * BS];
        r.nextBytes(blob);
        BlockHashList l = BlockHashList.of(blob, BS);
        boolean[] ok = new boolean[4];
        Thread[] threads = new Thread[4];
        for (int t = 0; t < threads.length; t++) {
            int id = t;
            threads[t] = new Thread(() -> {
                boolean all = true;
                for (int n = 0; n < 200; n++) {
                    int i = (n + id) % l.blockCount();
                    all &= l.verify(i, blob, i * BS, BS);
                    all &= !l.verify(i, blob, ((i + 1) % 8) * BS, BS);
                }
                ok[id] = all;
            });
            threads[t].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        assertThat(ok).containsOnly(true);
    }

    @Test
    void badBlockSizesAreRejected() {
        for (int bs : new int[] {0, -1, 1024, BS - 1, BS + 1, 3 * BS, 128 << 20}) {
            assertThatThrownBy(() -> BlockHashList.of(new byte[1], bs)).isInstanceOf(IllegalArgumentException.class);
            assertCorrupted(withHeader(1, bs, 1, 1), "block_size");
        }
        assertThat(BlockHashList.parse(withHeader(1, 64 << 20, 1, 1), "x").blockSize()).isEqualTo(64 << 20);
    }

    @Test
    void corruptListsAreRejectedNamingTheField() {
        byte[] good = BlockHashList.of(new byte[3 * BS], BS).serialize();
        byte[] magic = good.clone();
        magic[0] = 'X';
        assertCorrupted(magic, "magic");
        assertCorrupted(withHeader(2, BS, 3 * BS, 3), "version");
        assertCorrupted(withHeader(1, BS, -1, 0), "blob_size");
        assertCorrupted(withHeader(1, BS, 3 * BS, 2), "hashes");
        assertCorrupted(withHeader(1, BS, 3 * BS, 4), "hashes");
        assertCorrupted(withHeader(1, BS, 3 * BS + 1, 3), "hashes");
        assertCorrupted(withHeader(1, BS, 0, 1), "hashes");
        assertCorrupted(Arrays.copyOf(good, good.length - 1), "hashes");
        assertCorrupted(Arrays.copyOf(good, good.length + 1), "hashes");
        assertCorrupted(Arrays.copyOf(good, 19), "header");
        assertCorrupted(new byte[0], "header");
        assertCorrupted(withHeader(1, BS, Long.MAX_VALUE, 0), "hashes");
    }

    private static byte[] withHeader(int version, int blockSize, long blobSize, int hashes) {
        ByteBuffer b = ByteBuffer.allocate(20 + 32 * hashes);
        b.put("WBHL".getBytes(java.nio.charset.StandardCharsets.US_ASCII)).putInt(version).putInt(blockSize).putLong(blobSize);
        return b.array();
    }

    private static void assertCorrupted(byte[] bytes, String field) {
        ManifestCorruptedException e = catchThrowableOfType(ManifestCorruptedException.class,
                () -> BlockHashList.parse(bytes, "blobs/ab/cd"));
        assertThat(e).isNotNull();
        assertThat(e.field()).as(e.getMessage()).isEqualTo(field);
        assertThat(e.getMessage()).contains("blobs/ab/cd");
    }
}
