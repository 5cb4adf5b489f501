package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.warpdata.manifest.BlobId;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BlockFileTest {
    @TempDir
    Path dir;

    private Path write(BlockKey key, BlobId listId, byte[] data) throws IOException {
        Path p = dir.resolve(key.fileName());
        int[] crcs = BlockFile.chunkCrcs(data, 0, data.length);
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ch.write(new ByteBuffer[] {BlockFile.encodeHeader(key, listId, data.length, crcs), ByteBuffer.wrap(data)});
        }
        return p;
    }

    private static BlockFile.Header header(Path p) throws IOException {
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
            return BlockFile.readHeader(ch);
        }
    }

    @Test
    void headerEncodedIntoAReusedDirectBufferIsTheSameBytesPaddingZeroed() {
        for (int len : new int[] {1, 200_000, 1 << 20, 64 << 20}) {
            BlockKey key = new BlockKey(BlobId.of(new byte[] {(byte) len}), 64 << 20, 3);
            BlobId listId = BlobId.of(new byte[] {2});
            int[] crcs = new int[BlockFile.chunkCount(len)];
            java.util.Arrays.fill(crcs, 0x12345678);
            ByteBuffer fresh = BlockFile.encodeHeader(key, listId, len, crcs);
            ByteBuffer reused = ByteBuffer.allocateDirect(BlockFile.headerLength(len) + 16);
            while (reused.hasRemaining()) {
                reused.put((byte) 0xff); // a previous block's bytes
            }
            reused.clear();
            BlockFile.encodeHeader(reused, key, listId, len, crcs, new java.util.zip.CRC32C());
            assertThat(reused.position()).isEqualTo(BlockFile.headerLength(len));
            assertThat(reused.flip()).isEqualTo(fresh);
        }
    }

    @Test
    void headerRoundTripsWithDataAtAFixedAlignedOffset() throws IOException {
        byte[] data = TestBlobs.bytes(200_000, 1);
        BlockKey key = new BlockKey(BlobId.of(data), 1 << 20, 7);
        BlobId listId = BlobId.of(new byte[] {1});
        Path p = write(key, listId, data);
        BlockFile.Header h = header(p);
        assertThat(h).isNotNull();
        assertThat(h.key()).isEqualTo(key);
        assertThat(h.listId()).isEqualTo(listId);
        assertThat(h.headerLength()).isEqualTo(4096);
        assertThat(h.dataLength()).isEqualTo(200_000);
        assertThat(h.crcs()).containsExactly(BlockFile.chunkCrcs(data, 0, data.length));
        assertThat(p.toFile().length()).isEqualTo(4096 + 200_000);
        assertThat(BlockKey.parse(p.getFileName().toString())).isEqualTo(key);
    }

    @Test
    void damagedTruncatedOrForeignFilesAreNotBlocks() throws IOException {
        byte[] data = TestBlobs.bytes(100_000, 2);
        BlockKey key = new BlockKey(BlobId.of(data), 1 << 20, 0);
        Path p = write(key, BlobId.of(new byte[0]), data);
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE, StandardOpenOption.READ)) {
            ch.write(ByteBuffer.wrap(new byte[] {9}), 20); // data length field
        }
        assertThat(header(p)).as("header checksum").isNull();

        Path q = dir.resolve("other");
        q = write(new BlockKey(BlobId.of(data), 1 << 20, 1), BlobId.of(new byte[0]), data);
        try (FileChannel ch = FileChannel.open(q, StandardOpenOption.WRITE)) {
            ch.truncate(4096 + 50_000);
        }
        assertThat(header(q)).as("truncated").isNull();

        Path r = dir.resolve("garbage");
        java.nio.file.Files.write(r, TestBlobs.bytes(8192, 3));
        assertThat(header(r)).as("not a block file").isNull();
        assertThat(BlockKey.parse("garbage")).isNull();
    }

    @Test
    void largeBlocksGetALargerAlignedHeader() {
        int len = 64 << 20;
        assertThat(BlockFile.headerLength(len) % 4096).isZero();
        assertThat(BlockFile.headerLength(len)).isGreaterThanOrEqualTo(100 + 4 * 1024);
    }

    @Test
    void modesParseFromTheCommandLineSpelling() {
        assertThat(CacheMode.parse("Hybrid")).isEqualTo(CacheMode.HYBRID);
        assertThat(CacheMode.LOCAL.fetches()).isFalse();
        assertThat(CacheMode.REMOTE.usesDisk()).isFalse();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> CacheMode.parse("fast"))
                .hasMessageContaining("auto, remote, hybrid or local");
    }
}
