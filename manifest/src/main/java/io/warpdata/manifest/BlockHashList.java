package io.warpdata.manifest;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.security.DigestException;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Objects;

/**
 * Per-blob integrity: the blob is cut into fixed blocks of {@link #blockSize()} bytes (the last
 * may be short) and the SHA-256 of each block is recorded. Stored as a side blob whose own id
 * is {@link BlobRef#blocks()}, so that the manifest of a 1 TB dataset stays small and any block
 * can be verified without reading its neighbours.
 *
 * <p>Binary form: magic {@code "WBHL"}, u32 format version (1), u32 block size, u64 blob size,
 * then 32 bytes per block. Big-endian. The block size is a power of two between
 * {@link #MIN_BLOCK_SIZE} and {@link #MAX_BLOCK_SIZE}; an empty blob has no blocks.
 *
 * <p>Instances are immutable and safe to share between threads.
 */
public final class BlockHashList {
    /** Default block size: the unit of ranged GETs, verification and the disk cache. */
    public static final int DEFAULT_BLOCK_SIZE = 1 << 20;
    /** Smaller blocks would make the list (32 bytes per block) a noticeable share of the blob. */
    public static final int MIN_BLOCK_SIZE = 4 << 10;
    /** Larger blocks would make a single verified read too coarse for random access. */
    public static final int MAX_BLOCK_SIZE = 64 << 20;
    public static final int FORMAT_VERSION = 1;

    private static final int MAGIC = 0x5742484C; // "WBHL"
    private static final int HEADER = 4 + 4 + 4 + 8;
    private static final int HASH = 32;

    /*
     * verify() runs on the FUSE read path whenever a block is fetched: one digest and one
     * output buffer per thread avoid an allocation per call. They hold no state between calls.
     */
    private static final ThreadLocal<MessageDigest> DIGEST = ThreadLocal.withInitial(BlobId::sha256);
    private static final ThreadLocal<byte[]> DIGEST_OUT = ThreadLocal.withInitial(() -> new byte[HASH]);

    private final int blockSize;
    private final long blobSize;
    private final int blockCount;
    /** 32 bytes per block, concatenated. */
    private final byte[] hashes;

    private BlockHashList(int blockSize, long blobSize, byte[] hashes) {
        this.blockSize = blockSize;
        this.blobSize = blobSize;
        this.hashes = hashes;
        this.blockCount = hashes.length / HASH;
    }

    public int blockSize() {
        return blockSize;
    }

    public long blobSize() {
        return blobSize;
    }

    public int blockCount() {
        return blockCount;
    }

    /**
     * The most bytes the serialized list of a blob of {@code blobSize} bytes can take (at the
     * smallest block size), capped at what a byte array holds: a reader fetching a list asks the
     * store for no more than this, so a store that holds something huge at the list's key cannot
     * make it allocate more than the blob's own size implies.
     */
    public static int maxSerializedSize(long blobSize) {
        if (blobSize < 0) {
            throw new IllegalArgumentException("negative blob size " + blobSize);
        }
        long count = blobSize / MIN_BLOCK_SIZE + (blobSize % MIN_BLOCK_SIZE == 0 ? 0 : 1); // no overflow near 2^63
        return (int) Math.min(Integer.MAX_VALUE - 16L, HEADER + count * HASH);
    }

    /** Offset of block {@code index} within the blob. */
    public long blockOffset(int index) {
        Objects.checkIndex(index, blockCount);
        return (long) index * blockSize;
    }

    /** Length of block {@code index} (the last block may be short). */
    public int blockLength(int index) {
        Objects.checkIndex(index, blockCount);
        return (int) Math.min(blockSize, blobSize - (long) index * blockSize);
    }

    /** The block holding blob offset {@code offset}. */
    public int blockOf(long offset) {
        Objects.checkIndex(offset, blobSize);
        return (int) (offset / blockSize);
    }

    /** The recorded SHA-256 of block {@code index}. */
    public BlobId hashOf(int index) {
        Objects.checkIndex(index, blockCount);
        return BlobId.fromDigest(Arrays.copyOfRange(hashes, index * HASH, index * HASH + HASH));
    }

    /**
     * Whether {@code data[off, off+len)} is block {@code index}'s exact content: false if
     * {@code len} is not the block's length or the bytes hash differently. Allocates nothing.
     *
     * @throws IndexOutOfBoundsException if {@code index} is not a block of this blob or the
     *         range is outside {@code data}
     */
    public boolean verify(int index, byte[] data, int off, int len) {
        Objects.checkIndex(index, blockCount);
        Objects.checkFromIndexSize(off, len, data.length);
        if (len != blockLength(index)) {
            return false;
        }
        MessageDigest md = DIGEST.get();
        byte[] out = DIGEST_OUT.get();
        md.reset();
        md.update(data, off, len);
        try {
            md.digest(out, 0, HASH);
        } catch (DigestException e) {
            throw new IllegalStateException("SHA-256 output buffer is 32 bytes", e);
        }
        int at = index * HASH;
        return Arrays.equals(out, 0, HASH, hashes, at, at + HASH);
    }

    /** Computes the list for {@code blob}. */
    public static BlockHashList of(byte[] blob, int blockSize) {
        requireBlockSize(blockSize);
        int count = blockCount(blob.length, blockSize);
        byte[] hashes = new byte[count * HASH];
        MessageDigest md = BlobId.sha256();
        for (int i = 0; i < count; i++) {
            int off = i * blockSize;
            md.update(blob, off, Math.min(blockSize, blob.length - off));
            digestInto(md, hashes, i * HASH);
        }
        return new BlockHashList(blockSize, blob.length, hashes);
    }

    /**
     * The list a blob of at most one block must have: its only hash is the SHA-256 of all of the
     * blob, which is the blob's own id. A reader that knows the id, the size and the list's id
     * can check this list against the list's id and skip fetching it (no trust is added: the list
     * is accepted only if it hashes to the id the verified manifest names).
     *
     * @throws IllegalArgumentException if the blob is empty or larger than one block
     */
    public static BlockHashList ofOneBlock(BlobId blob, long blobSize, int blockSize) {
        requireBlockSize(blockSize);
        if (blobSize < 1 || blobSize > blockSize) {
            throw new IllegalArgumentException("a blob of " + blobSize + " bytes is not one block of " + blockSize);
        }
        return new BlockHashList(blockSize, blobSize, blob.digest());
    }

    /** Computes the list for a blob read from {@code in} to its end. */
    public static BlockHashList compute(InputStream in, int blockSize) throws IOException {
        requireBlockSize(blockSize);
        MessageDigest md = BlobId.sha256();
        byte[] buf = new byte[blockSize];
        byte[] hashes = new byte[HASH * 16];
        int count = 0;
        long size = 0;
        boolean eof = false;
        while (!eof) {
            // fill a whole block: streams (and some readNBytes overrides) may return short reads
            int n = 0;
            while (n < blockSize) {
                int got = in.read(buf, n, blockSize - n);
                if (got < 0) {
                    eof = true;
                    break;
                }
                n += got;
            }
            if (n == 0) {
                break;
            }
            if ((count + 1) * (long) HASH > Integer.MAX_VALUE - 64) {
                throw new IOException("blob too large for a block hash list with blocks of " + blockSize + " bytes");
            }
            if ((count + 1) * HASH > hashes.length) {
                hashes = Arrays.copyOf(hashes, (int) Math.min(Integer.MAX_VALUE - 64L, hashes.length * 2L));
            }
            md.update(buf, 0, n);
            digestInto(md, hashes, count * HASH);
            count++;
            size += n;
        }
        return new BlockHashList(blockSize, size, Arrays.copyOf(hashes, count * HASH));
    }

    public byte[] serialize() {
        ByteBuffer b = ByteBuffer.allocate(HEADER + hashes.length);
        b.putInt(MAGIC).putInt(FORMAT_VERSION).putInt(blockSize).putLong(blobSize).put(hashes);
        return b.array();
    }

    /** The id of {@link #serialize()}: what {@link BlobRef#blocks()} holds. */
    public BlobId id() {
        return BlobId.of(serialize());
    }

    /**
     * @throws ManifestCorruptedException if the bytes are not a valid block hash list
     */
    public static BlockHashList parse(byte[] bytes, String source) {
        if (bytes.length < HEADER) {
            throw new ManifestCorruptedException(source, "header", "truncated: " + bytes.length
                    + " bytes, a block hash list has at least " + HEADER);
        }
        ByteBuffer b = ByteBuffer.wrap(bytes);
        int magic = b.getInt();
        if (magic != MAGIC) {
            throw new ManifestCorruptedException(source, "magic", String.format("not a block hash list (magic 0x%08x)", magic));
        }
        int version = b.getInt();
        if (version != FORMAT_VERSION) {
            throw new ManifestCorruptedException(source, "version", "unknown block hash list version "
                    + Integer.toUnsignedString(version) + " (this Warp reads version " + FORMAT_VERSION + ")");
        }
        int blockSize = b.getInt();
        if (!validBlockSize(blockSize)) {
            throw new ManifestCorruptedException(source, "block_size", "block size " + Integer.toUnsignedString(blockSize)
                    + " is not a power of two between " + MIN_BLOCK_SIZE + " and " + MAX_BLOCK_SIZE);
        }
        long blobSize = b.getLong();
        if (blobSize < 0) {
            throw new ManifestCorruptedException(source, "blob_size", "negative blob size " + blobSize);
        }
        long count = (blobSize + blockSize - 1) / blockSize;
        long expected = HEADER + count * HASH;
        if (expected != bytes.length) {
            throw new ManifestCorruptedException(source, "hashes", "a blob of " + blobSize + " bytes in blocks of "
                    + blockSize + " needs " + count + " hashes (" + expected + " bytes in all), found "
                    + bytes.length + " bytes");
        }
        return new BlockHashList(blockSize, blobSize, Arrays.copyOfRange(bytes, HEADER, bytes.length));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof BlockHashList other && blockSize == other.blockSize && blobSize == other.blobSize
                && Arrays.equals(hashes, other.hashes);
    }

    @Override
    public int hashCode() {
        return Objects.hash(blockSize, blobSize, Arrays.hashCode(hashes));
    }

    @Override
    public String toString() {
        return "BlockHashList[" + blockCount + " blocks of " + blockSize + ", blob " + blobSize + " bytes]";
    }

    private static boolean validBlockSize(int blockSize) {
        return blockSize >= MIN_BLOCK_SIZE && blockSize <= MAX_BLOCK_SIZE && Integer.bitCount(blockSize) == 1;
    }

    private static void requireBlockSize(int blockSize) {
        if (!validBlockSize(blockSize)) {
            throw new IllegalArgumentException("block size " + blockSize + " is not a power of two between "
                    + MIN_BLOCK_SIZE + " and " + MAX_BLOCK_SIZE);
        }
    }

    private static int blockCount(long blobSize, int blockSize) {
        long count = (blobSize + blockSize - 1) / blockSize;
        if (count * HASH > Integer.MAX_VALUE - 64) {
            throw new IllegalArgumentException("blob of " + blobSize + " bytes has too many blocks of " + blockSize);
        }
        return (int) count;
    }

    private static void digestInto(MessageDigest md, byte[] out, int at) {
        try {
            md.digest(out, at, HASH);
        } catch (DigestException e) {
            throw new IllegalStateException("SHA-256 output buffer is 32 bytes", e);
        }
    }
}
