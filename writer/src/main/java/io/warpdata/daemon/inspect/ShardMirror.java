package io.warpdata.daemon.inspect;

import io.warpdata.blobcache.cache.BlobReader;
import io.warpdata.daemon.inspect.ParquetHead.CorruptShardException;
import io.warpdata.manifest.BlockHashList;
import io.warpdata.manifest.Column;
import io.warpdata.manifest.TableShard;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A Parquet shard of the store mirrored into a <em>sparse</em> temp file of its full size that
 * holds only the byte ranges read through the {@link BlobReader} (verified bytes): on opening, the
 * footer (the last 8 bytes give its length) and the leading magic; then whatever ranges the caller
 * asks for, once DuckDB's {@code parquet_metadata} has said where the needed column chunks lie.
 * DuckDB reads the file as if it were whole; the caller makes sure it never touches the holes.
 * Closing deletes the file.
 */
final class ShardMirror implements AutoCloseable {
    private static final int MAGIC_LENGTH = 4;
    private static final int TRAILER = 8;
    /** Reads are cut at multiples of this, so that no verification block is fetched twice. */
    private static final int CHUNK = 4 * BlockHashList.DEFAULT_BLOCK_SIZE;
    /** Footers of shards with a few hundred columns and row groups fit in 64 KiB. */
    private static final int TAIL_GUESS = 64 * 1024;

    private final BlobReader reader;
    private final TableShard shard;
    /** The temp directory of this mirror: the file sits below it in the shard's partition folders. */
    private final Path root;
    private final Path file;
    /** {@code read_parquet} arguments that give a file in partition folders their columns, or "" ({@link HivePartitions}). */
    private final String hiveArgs;
    private long bytesRead;

    private ShardMirror(BlobReader reader, TableShard shard, Path root, Path file, String hiveArgs) {
        this.reader = reader;
        this.shard = shard;
        this.root = root;
        this.file = file;
        this.hiveArgs = hiveArgs;
    }

    /**
     * Creates the mirror of {@code shard} in {@code tempDir} with its footer and magic in place.
     *
     * @param what the shard as errors name it, e.g. {@code table 'main' shard part-0.parquet}
     * @throws CorruptShardException if the shard does not end like Parquet
     * @throws io.warpdata.store.StoreException if the bytes cannot be fetched or verified
     */
    static ShardMirror open(BlobReader reader, TableShard shard, List<Column> schema, String what, Path tempDir) {
        long size = shard.blob().size();
        if (size < MAGIC_LENGTH + TRAILER) {
            throw new CorruptShardException(what + " is too small to be Parquet (" + size + " bytes)");
        }
        Path root;
        Path tmp;
        try {
            Files.createDirectories(tempDir);
            root = Files.createTempDirectory(tempDir, "warp-shard-");
            // In its partition folders (year=2026/), so that DuckDB's hive_partitioning gives the
            // file the columns they hold, as it does reading the mount.
            Path dir = shard.dir().isEmpty() ? root : root.resolve(shard.dir());
            Files.createDirectories(dir);
            tmp = Files.createFile(dir.resolve("shard.parquet"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temp file for " + what + " in " + tempDir, e);
        }
        ShardMirror m = new ShardMirror(reader, shard, root, tmp, HivePartitions.readArgs(shard, schema));
        try {
            m.fetchFooter(what);
            return m;
        } catch (RuntimeException e) {
            m.close();
            throw e;
        }
    }

    private void fetchFooter(String what) {
        long size = shard.blob().size();
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(size);
            // One read for the tail: it holds the trailer and, almost always, the whole footer.
            int tailLength = (int) Math.min(size, TAIL_GUESS);
            byte[] tail = new byte[tailLength];
            readFully(size - tailLength, tail, tailLength);
            bytesRead += tailLength;
            if (!"PAR1".equals(new String(tail, tailLength - 4, 4, StandardCharsets.US_ASCII))) {
                throw new CorruptShardException(what + " does not end with the Parquet magic bytes");
            }
            long footerLength = ByteBuffer.wrap(tail, tailLength - TRAILER, 4).order(ByteOrder.LITTLE_ENDIAN)
                    .getInt() & 0xffffffffL;
            long footerStart = size - TRAILER - footerLength;
            if (footerStart < MAGIC_LENGTH) {
                throw new CorruptShardException(what + " has a footer length of " + footerLength
                        + " bytes, more than the file holds");
            }
            if (footerStart < size - tailLength) {
                bytesRead += copy(f, footerStart, size - tailLength - footerStart);
            }
            f.seek(size - tailLength);
            f.write(tail);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the temp file " + file, e);
        }
    }

    /**
     * The shard as a DuckDB table function: {@code read_parquet('<file>'<more>)} with its
     * partition columns ({@link HivePartitions#readArgs}).
     *
     * @param more further arguments, each after a comma (e.g. {@code ", file_row_number = true"}), or ""
     */
    String source(String more) {
        return "read_parquet(" + sqlLiteral() + hiveArgs + more + ")";
    }

    /** The file as a DuckDB string literal, e.g. {@code '/tmp/warp-shard-1.parquet'}. */
    String sqlLiteral() {
        return "'" + file.toAbsolutePath().toString().replace("'", "''") + "'";
    }

    /** Bytes read through the reader so far (footer and ranges). */
    long bytesRead() {
        return bytesRead;
    }

    /**
     * Reads byte ranges {@code [start, end)} of the shard into the mirror, and the leading magic
     * bytes, each verification block once (touching or overlapping ranges are merged).
     *
     * @throws io.warpdata.store.StoreException if the bytes cannot be fetched or verified
     */
    void fetch(List<long[]> ranges) {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            for (long[] r : coalesce(ranges)) {
                bytesRead += copy(f, r[0], r[1] - r[0]);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the temp file " + file, e);
        }
    }

    /**
     * The ranges plus the leading magic bytes, sorted, with touching or overlapping ranges merged:
     * the reader fetches whole verification blocks and keeps none, so each block should be asked
     * for once.
     */
    private static List<long[]> coalesce(List<long[]> ranges) {
        List<long[]> sorted = new ArrayList<>(ranges);
        sorted.add(new long[]{0, MAGIC_LENGTH});
        sorted.sort((a, b) -> Long.compare(a[0], b[0]));
        List<long[]> out = new ArrayList<>();
        for (long[] r : sorted) {
            long[] last = out.isEmpty() ? null : out.get(out.size() - 1);
            if (last != null && r[0] <= last[1]) {
                last[1] = Math.max(last[1], r[1]);
            } else {
                out.add(new long[]{r[0], r[1]});
            }
        }
        return out;
    }

    private long copy(RandomAccessFile f, long offset, long length) throws IOException {
        byte[] buf = new byte[(int) Math.min(CHUNK, Math.max(1, length))];
        long done = 0;
        while (done < length) {
            long toBoundary = CHUNK - (offset + done) % CHUNK;
            int len = (int) Math.min(Math.min(buf.length, toBoundary), length - done);
            readFully(offset + done, buf, len);
            f.seek(offset + done);
            f.write(buf, 0, len);
            done += len;
        }
        return length;
    }

    private void readFully(long offset, byte[] dst, int len) {
        int done = 0;
        while (done < len) {
            int n = reader.read(shard.blob(), offset + done, dst, done, len - done);
            if (n <= 0) {
                throw new CorruptShardException("shard " + shard.name() + " ended at " + (offset + done)
                        + " bytes, before its recorded size " + shard.blob().size());
            }
            done += n;
        }
    }

    @Override
    public void close() {
        try {
            Files.deleteIfExists(file);
            for (Path d = file.getParent(); d != null && d.startsWith(root); d = d.getParent()) {
                Files.deleteIfExists(d);
            }
        } catch (IOException e) {
            // A leftover temp file in the temp directory is harmless.
        }
    }
}
