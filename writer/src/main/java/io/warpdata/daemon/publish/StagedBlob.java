package io.warpdata.daemon.publish;

import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.util.Objects;
import java.util.Optional;

/**
 * A blob ready to upload: its bytes (a file on disk or a small array), its content id, and its
 * block hash list, which is itself uploaded as a side blob.
 */
public record StagedBlob(BlobId id, long size, Optional<Path> file, Optional<byte[]> bytes, BlockHashList blocks,
                         Optional<FileStamp> stamp) {
    public StagedBlob {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(blocks, "blocks");
        Objects.requireNonNull(stamp, "stamp");
        if (file.isPresent() == bytes.isPresent()) {
            throw new IllegalArgumentException("exactly one of file and bytes");
        }
    }

    /**
     * Hashes a file publish wrote itself (a shard, an index part, a view's table) in one pass:
     * content id and block hash list together, with what the file was ({@link FileStamp}), so that
     * the upload can tell it is still those bytes. Stamped as it is: nobody else writes it, so
     * there is no writer's clock tick to wait out (review 56: a wait per shard).
     *
     * @throws InvalidInputException if the file cannot be read, or changes while it is read
     */
    public static StagedBlob ofStagedFile(Path file) {
        return ofFile(file, FileStamp.readNow(file));
    }

    /**
     * As {@link #ofFile(Path)}, checked against {@code since}, what the file was when the publish
     * first read it (a table's footer, a tar's index): the upload is then checked against it too.
     */
    static StagedBlob ofFile(Path file, FileStamp since) {
        MessageDigest sha = BlobId.sha256();
        try (InputStream in = new DigestInputStream(Files.newInputStream(file), sha)) {
            BlockHashList blocks = BlockHashList.compute(in, BlockHashList.DEFAULT_BLOCK_SIZE);
            since.requireSame(file, "while it was read");
            return new StagedBlob(BlobId.fromDigest(sha.digest()), blocks.blobSize(), Optional.of(file),
                    Optional.empty(), blocks, Optional.of(since));
        } catch (IOException e) {
            throw new InvalidInputException("Cannot read " + file + ": " + e.getMessage(),
                    "Check that the file exists and is readable by you, then publish again.", e);
        }
    }

    public static StagedBlob ofBytes(byte[] data) {
        return ofBytes(data, BlockHashList.DEFAULT_BLOCK_SIZE);
    }

    /** Bytes in memory, with blocks of {@code blockSize} for readers that want a few KiB of it. */
    public static StagedBlob ofBytes(byte[] data, int blockSize) {
        try {
            BlockHashList blocks = BlockHashList.compute(new java.io.ByteArrayInputStream(data), blockSize);
            return new StagedBlob(BlobId.of(data), data.length, Optional.empty(), Optional.of(data), blocks, Optional.empty());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The block hash list as a blob of its own. */
    public byte[] blocksBytes() {
        return blocks.serialize();
    }

    /** How the manifest refers to this blob. */
    public BlobRef ref() {
        return new BlobRef(id, size, BlobId.of(blocksBytes()));
    }
}
