package io.warpdata.blobcache.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The column-chunk layout of the Parquet blobs being read, learned once per blob from its footer
 * ({@link ParquetFooter}) for {@link ReadAhead}. Nothing is fetched for it: a blob is looked at
 * only once a read has reached its end (a Parquet reader starts with the footer, so its tail and
 * footer blocks are then in the local tiers or on their way), and the footer is read from the
 * tiers, verified bytes like any read's, at a later read of the blob once those blocks are held.
 * After {@link #MAX_TRIES} reads without them, or with a tail that is not {@code PAR1}, the blob
 * is {@link ColumnChunks#UNKNOWN}: read-ahead goes on as for any blob.
 *
 * <p>Bounded: layouts weigh 16 bytes per chunk plus {@link #ENTRY_BYTES} each, up to
 * {@link #MAX_BYTES} in all, least recently used forgotten first (a forgotten blob is learned
 * again at its next read of its end). A read of a blob not being learned costs one map lookup.
 */
final class ParquetLayouts {
    /** Reads of a blob, after the one that reached its end, that may find its footer's blocks held. */
    static final int MAX_TRIES = 16;
    /** What one remembered blob costs besides its chunks (key, entry, object headers). */
    static final int ENTRY_BYTES = 96;
    /** Memory for all layouts: 8 MiB, half a million chunks or 87,000 blobs that are not Parquet. */
    static final long MAX_BYTES = 8L << 20;
    /** The smallest Parquet file: magic, an empty footer of one byte, its length, magic. */
    private static final long MIN_PARQUET_BYTES = 4 + 1 + ParquetFooter.TAIL_BYTES;

    /** A blob whose end has been read and whose footer blocks were not all held yet. */
    private static final class Pending {
        final AtomicInteger tries = new AtomicInteger();
    }

    /** Where footers are read from: the local tiers (null: nothing is ever learned, for tests). */
    private final Tier tiers;
    /** Blob -> {@link ColumnChunks} (learned, or UNKNOWN) or {@link Pending}. */
    private final Cache<BlobId, Object> blobs = Caffeine.newBuilder()
            .maximumWeight(MAX_BYTES)
            .weigher((BlobId k, Object v) -> v instanceof ColumnChunks c ? ENTRY_BYTES + c.weight() : ENTRY_BYTES)
            .executor(Runnable::run)
            .build();

    ParquetLayouts(Tier tiers) {
        this.tiers = tiers;
    }

    /**
     * The layout of {@code blob} as far as known at a read of {@code [offset, offset+len)}: a
     * read reaching the blob's end starts learning it, and each read after tries to read the
     * footer from the tiers until it is held or {@link #MAX_TRIES} is reached.
     */
    ColumnChunks onRead(BlobRef blob, BlockHashList list, long offset, int len) {
        Object v = blobs.getIfPresent(blob.id());
        if (v == null) {
            if (offset + len < blob.size() || blob.size() < MIN_PARQUET_BYTES || tiers == null) {
                return ColumnChunks.UNKNOWN;
            }
            v = blobs.get(blob.id(), k -> new Pending());
        }
        if (v instanceof ColumnChunks c) {
            return c;
        }
        if (((Pending) v).tries.incrementAndGet() > MAX_TRIES) {
            blobs.put(blob.id(), ColumnChunks.UNKNOWN);
            return ColumnChunks.UNKNOWN;
        }
        ColumnChunks c = readFooter(blob, list);
        if (c == null) {
            return ColumnChunks.UNKNOWN; // not all held yet: a later read tries again
        }
        blobs.put(blob.id(), c);
        return c;
    }

    /** Records {@code chunks} for {@code blob} as a footer read would (tests). */
    void learned(BlobId blob, ColumnChunks chunks) {
        blobs.put(blob, chunks);
    }

    /** The blob's layout from its footer in the tiers, or null if a block of it is not held. */
    private ColumnChunks readFooter(BlobRef blob, BlockHashList list) {
        long size = blob.size();
        byte[] tail = new byte[ParquetFooter.TAIL_BYTES];
        if (!copy(blob, list, size - tail.length, tail)) {
            return null;
        }
        int len = ParquetFooter.footerLength(tail, size);
        if (len < 0) {
            return ColumnChunks.UNKNOWN;
        }
        long footerStart = size - tail.length - len;
        byte[] footer = new byte[len];
        return copy(blob, list, footerStart, footer) ? ParquetFooter.chunks(footer, footerStart) : null;
    }

    /** Copies {@code dst.length} bytes of the blob at {@code offset} from the tiers; false if a block is not held. */
    private boolean copy(BlobRef blob, BlockHashList list, long offset, byte[] dst) {
        int bs = list.blockSize();
        ByteBuffer out = ByteBuffer.wrap(dst);
        long end = offset + dst.length;
        for (int b = (int) (offset / bs); b <= (int) ((end - 1) / bs); b++) {
            long blockStart = (long) b * bs;
            long from = Math.max(offset, blockStart);
            int take = (int) (Math.min(end, blockStart + list.blockLength(b)) - from);
            if (!tiers.get(new BlockKey(blob.id(), bs, b), (int) (from - blockStart), out, (int) (from - offset), take)) {
                return false;
            }
        }
        return true;
    }
}
