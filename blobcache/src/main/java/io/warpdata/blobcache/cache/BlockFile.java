package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlobId;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.util.zip.CRC32C;

/**
 * On-disk format (version 1) of one cached block: one file per block, a header, then the data
 * at a fixed 4 KiB-aligned offset (page aligned: the kernel can serve it straight from the page
 * cache, and O_DIRECT stays possible).
 *
 * <pre>
 * off  size  field (big-endian)
 *   0     4  magic "WBLK"
 *   4     4  format version (1)
 *   8     4  header length H (multiple of 4096; data starts at H)
 *  12     4  block size of the blob's hash list
 *  16     4  block index
 *  20     4  data length
 *  24     4  chunk size (65536)
 *  28     4  chunk count n
 *  32    32  blob id (SHA-256)
 *  64    32  block hash list id (to re-hash the block in verify)
 *  96   4n   CRC32C of each 64 KiB chunk of data
 * 96+4n   4  CRC32C of header bytes [0, 96+4n)
 *  ...       zero padding up to H
 *   H        data
 * </pre>
 *
 * The chunk CRCs let a read check only the 64 KiB chunks it touches (CRC32C is hardware
 * accelerated: a few GB/s per core); the SHA-256 was checked before the block was written.
 * A file whose size is not H + data length, or whose header checksum fails, is not a block.
 */
final class BlockFile {
    static final int MAGIC = 0x57424C4B; // "WBLK"
    static final int VERSION = 1;
    /** Checksum granule: a 128 KiB FUSE read touches 2-3 chunks, so little is checked twice. */
    static final int CHUNK = 64 * 1024;
    static final int ALIGN = 4096;
    private static final int FIXED = 96;
    private static final byte[] ZEROS = new byte[ALIGN];

    private BlockFile() {
    }

    /** A parsed, checked header. */
    record Header(BlockKey key, BlobId listId, int headerLength, int dataLength, int[] crcs) {
        long fileLength() {
            return (long) headerLength + dataLength;
        }
    }

    static int chunkCount(int dataLength) {
        return (dataLength + CHUNK - 1) / CHUNK;
    }

    static int headerLength(int dataLength) {
        int raw = FIXED + 4 * chunkCount(dataLength) + 4;
        return (raw + ALIGN - 1) / ALIGN * ALIGN;
    }

    /** CRC32C of each chunk of {@code data[off, off+len)}. */
    static int[] chunkCrcs(byte[] data, int off, int len) {
        return chunkCrcs(data, off, len, new CRC32C());
    }

    static int[] chunkCrcs(byte[] data, int off, int len, CRC32C crc) {
        int[] crcs = new int[chunkCount(len)];
        for (int c = 0; c < crcs.length; c++) {
            int from = off + c * CHUNK;
            crc.reset();
            crc.update(data, from, Math.min(CHUNK, off + len - from));
            crcs[c] = (int) crc.getValue();
        }
        return crcs;
    }

    /** The header bytes for a block with the given chunk CRCs, ready to write at offset 0. */
    static ByteBuffer encodeHeader(BlockKey key, BlobId listId, int dataLength, int[] crcs) {
        ByteBuffer b = ByteBuffer.allocate(headerLength(dataLength));
        encodeHeader(b, key, listId, dataLength, crcs, new CRC32C());
        return b.position(0);
    }

    /**
     * Writes the header (zero padding included) at {@code b}'s position (0), which ends up at
     * the header's end, where the data goes: one buffer holds a whole block file.
     */
    static void encodeHeader(ByteBuffer b, BlockKey key, BlobId listId, int dataLength, int[] crcs, CRC32C crc) {
        int h = headerLength(dataLength);
        b.order(ByteOrder.BIG_ENDIAN);
        b.putInt(MAGIC).putInt(VERSION).putInt(h).putInt(key.blockSize()).putInt(key.index()).putInt(dataLength)
                .putInt(CHUNK).putInt(crcs.length).put(key.blob().digest()).put(listId.digest());
        for (int c : crcs) {
            b.putInt(c);
        }
        crc.reset();
        crc.update(b.duplicate().flip());
        b.putInt((int) crc.getValue());
        while (b.position() < h) {
            b.put(ZEROS, 0, Math.min(ZEROS.length, h - b.position()));
        }
    }

    /**
     * Reads and checks the header of an open block file.
     *
     * @return the header, or null if the file is not a complete, valid version-1 block
     */
    static Header readHeader(FileChannel ch) throws IOException {
        long size = ch.size();
        if (size < ALIGN) {
            return null;
        }
        ByteBuffer first = ByteBuffer.allocate(ALIGN);
        if (!readFully(ch, first, 0)) {
            return null;
        }
        first.flip();
        if (first.getInt(0) != MAGIC || first.getInt(4) != VERSION) {
            return null;
        }
        int h = first.getInt(8);
        int blockSize = first.getInt(12);
        int index = first.getInt(16);
        int len = first.getInt(20);
        int chunk = first.getInt(24);
        int n = first.getInt(28);
        if (chunk != CHUNK || len < 0 || len > blockSize || blockSize <= 0 || index < 0 || n != chunkCount(len)
                || h != headerLength(len) || size != (long) h + len) {
            return null;
        }
        ByteBuffer hdr = first;
        if (h > ALIGN) {
            hdr = ByteBuffer.allocate(h);
            if (!readFully(ch, hdr, 0)) {
                return null;
            }
            hdr.flip();
        }
        int crcEnd = FIXED + 4 * n;
        CRC32C crc = new CRC32C();
        crc.update(hdr.array(), 0, crcEnd);
        if ((int) crc.getValue() != hdr.getInt(crcEnd)) {
            return null;
        }
        byte[] blob = new byte[32];
        byte[] list = new byte[32];
        hdr.get(32, blob).get(64, list);
        int[] crcs = new int[n];
        for (int c = 0; c < n; c++) {
            crcs[c] = hdr.getInt(FIXED + 4 * c);
        }
        return new Header(new BlockKey(BlobId.fromDigest(blob), blockSize, index), BlobId.fromDigest(list), h, len, crcs);
    }

    /** Fills {@code dst} from {@code pos}; false at end of file before it is full. */
    static boolean readFully(FileChannel ch, ByteBuffer dst, long pos) throws IOException {
        while (dst.hasRemaining()) {
            int n = ch.read(dst, pos);
            if (n < 0) {
                return false;
            }
            pos += n;
        }
        return true;
    }
}
