package io.warpdata.manifest;

/**
 * Per-blob integrity: the blob is cut into fixed blocks of {@link #blockSize()} bytes (the last
 * may be short) and the SHA-256 of each block is recorded. Stored as a side blob whose own id
 * is {@link BlobRef#blocks()}, so that the manifest of a 1 TB dataset stays small and any block
 * can be verified without reading its neighbours.
 *
 * <p>Binary form: magic {@code "WBHL"}, u32 format version (1), u32 block size, u64 blob size,
 * then 32 bytes per block. Big-endian.
 */
public final class BlockHashList {
    /** Default block size: the unit of ranged GETs, verification and the disk cache. */
    public static final int DEFAULT_BLOCK_SIZE = 1 << 20;

    private BlockHashList() {
        throw new UnsupportedOperationException("TODO");
    }

    public int blockSize() {
        throw new UnsupportedOperationException("TODO");
    }

    public long blobSize() {
        throw new UnsupportedOperationException("TODO");
    }

    public int blockCount() {
        throw new UnsupportedOperationException("TODO");
    }

    /** Length of block {@code index} (the last block may be short). */
    public int blockLength(int index) {
        throw new UnsupportedOperationException("TODO");
    }

    /** Whether {@code data[off, off+len)} is block {@code index}'s exact content. */
    public boolean verify(int index, byte[] data, int off, int len) {
        throw new UnsupportedOperationException("TODO");
    }

    /** Computes the list for a blob read from {@code in} to its end. */
    public static BlockHashList compute(java.io.InputStream in, int blockSize) throws java.io.IOException {
        throw new UnsupportedOperationException("TODO");
    }

    public byte[] serialize() {
        throw new UnsupportedOperationException("TODO");
    }

    /**
     * @throws ManifestCorruptedException if the bytes are not a valid block hash list
     */
    public static BlockHashList parse(byte[] bytes, String source) {
        throw new UnsupportedOperationException("TODO");
    }
}
