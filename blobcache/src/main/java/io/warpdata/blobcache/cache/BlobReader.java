package io.warpdata.blobcache.cache;

import io.warpdata.store.ObjectTooLargeException;
import io.warpdata.store.StoreException;

import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.ManifestCorruptedException;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * The read path: verified bytes of a blob at any offset. Implementations fetch blocks from the
 * store by ranged reads, verify each against the blob's {@link io.warpdata.manifest.BlockHashList}
 * before anyone sees it, and may cache and prefetch. Thread-safe; called from FUSE threads, so
 * implementations never hold a lock across a network call and do not allocate per read.
 */
public interface BlobReader extends AutoCloseable {

    /**
     * Reads up to {@code len} bytes of {@code blob} at {@code offset} into {@code dst}.
     *
     * @return bytes read: {@code min(len, blob.size() - offset)}, or 0 at or past the end; never
     *         short otherwise
     * @throws BlockVerificationException if a block failed verification twice
     * @throws StoreException if the bytes could not be fetched within the retry bound
     */
    int read(BlobRef blob, long offset, byte[] dst, int dstOff, int len);

    /**
     * Reads up to {@code dst.remaining()} bytes of {@code blob} at {@code offset} into {@code dst}
     * at its position, and advances the position by the bytes read. The FUSE read path passes a
     * direct buffer over libfuse's reply buffer, so an implementation that can read straight into
     * it saves copies; this default goes through a heap array.
     *
     * @return bytes read: {@code min(dst.remaining(), blob.size() - offset)}, or 0 at or past the end
     * @throws BlockVerificationException if a block failed verification twice
     * @throws StoreException if the bytes could not be fetched within the retry bound
     */
    default int read(BlobRef blob, long offset, ByteBuffer dst) {
        if (dst.hasArray()) {
            int n = read(blob, offset, dst.array(), dst.arrayOffset() + dst.position(), dst.remaining());
            dst.position(dst.position() + n);
            return n;
        }
        byte[] tmp = new byte[dst.remaining()];
        int n = read(blob, offset, tmp, 0, tmp.length);
        dst.put(tmp, 0, n);
        return n;
    }

    /**
     * Reads up to {@code dst.remaining()} bytes of an archive member at {@code offset} (from the
     * member's start) into {@code dst} at its position, and advances the position by the bytes
     * read. The bytes are those of {@code read(member.blob(), member.offset() + offset, dst)}; an
     * implementation may serve them by the member's SHA-256 instead (from a copy cached under it,
     * or from another blob holding the same bytes) and may fetch a small member on its own, as
     * long as every byte it serves was checked against a recorded hash. This default reads the
     * member's blob.
     *
     * @return bytes read: {@code min(dst.remaining(), member.length() - offset)}, or 0 at or past the end
     * @throws MemberVerificationException if a member fetched on its own failed verification twice
     * @throws BlockVerificationException if a block failed verification twice
     * @throws StoreException if the bytes could not be fetched within the retry bound
     */
    default int readMember(BlobMember member, long offset, ByteBuffer dst) {
        if (offset < 0) {
            throw new IllegalArgumentException("negative offset " + offset + " in member " + member.hash());
        }
        if (offset >= member.length()) {
            return 0;
        }
        int n = (int) Math.min(dst.remaining(), member.length() - offset);
        int got = read(member.blob(), member.offset() + offset, dst.slice(dst.position(), n));
        dst.position(dst.position() + got);
        return got;
    }

    /**
     * Reads a whole (small) blob, verified: member indexes, block hash lists. This default reads
     * it with one {@link #read} (an empty blob with none, its id checked).
     *
     * @throws ObjectTooLargeException if the blob is larger than a byte array holds
     * @throws StoreException as {@link #read}
     */
    default byte[] readAll(BlobRef blob) {
        if (blob.size() > Integer.MAX_VALUE - 16) {
            throw new ObjectTooLargeException("blob " + blob.id(), blob.size(), Integer.MAX_VALUE - 16);
        }
        if (blob.size() == 0) {
            // An empty blob needs no fetch, but its id must still be the SHA-256 of nothing.
            if (!blob.id().equals(BlobId.of(new byte[0]))) {
                throw new ManifestCorruptedException("blob " + blob.id(), "byte_size",
                        "size 0 but the id is not the SHA-256 of empty content");
            }
            return new byte[0];
        }
        byte[] out = new byte[(int) blob.size()];
        int n = read(blob, 0, out, 0, out.length);
        if (n != out.length) {
            throw new IllegalStateException("short read of blob " + blob.id() + ": " + n + " of " + out.length);
        }
        return out;
    }

    /**
     * Reads a whole index blob (a member index: small, and only ever read whole), verified, as
     * {@link #readAll} does. Its id is the SHA-256 of all of it, so an implementation may fetch
     * it in one request and verify it against that id, rather than first fetch its block hash
     * list and then its blocks: one round trip instead of two when nothing of it is cached. The
     * default is {@link #readAll}.
     *
     * @throws ObjectTooLargeException if the blob is larger than a byte array holds
     * @throws BlockVerificationException if its bytes failed verification twice
     * @throws StoreException as {@link #read}
     */
    default byte[] readIndex(BlobRef blob) {
        return readAll(blob);
    }

    /**
     * A local file holding exactly {@code blob}'s verified bytes at the same offsets, which the
     * kernel may read in warpd's place (a FUSE passthrough open), or null when there is none.
     * Called on every open of a file that is a whole blob: an implementation may count the call
     * as an open and start making a copy, to return it on a later call. This default has none.
     */
    default java.nio.file.Path localCopy(BlobRef blob) {
        return null;
    }

    /**
     * A file that is all of {@code blob}, read through this reader, was closed: an
     * implementation may start a local copy now (the file may have been read whole). This default
     * does nothing.
     */
    default void closed(BlobRef blob) {
    }

    /** Whether a cache keeps the blocks of an index blob it reads whole. */
    enum IndexBlocks {
        /** Kept as if the blob had been read block by block. */
        CACHE,
        /**
         * Not kept: the caller keeps the verified blob itself (warpd's catalog keeps each member
         * index as a file: a second copy as blocks took the data's room in the cache, all of a
         * small one, and a disk write per part, audit 35).
         */
        CALLER_KEEPS
    }

    /** Where {@link #readIndex(BlobRef, IndexBlocks, IndexSink)} hands the verified bytes of an index blob. */
    @FunctionalInterface
    interface IndexSink {
        /**
         * @param bytes the verified blob in {@code bytes[0, len)}; valid only during this call
         *              (the array may be a pooled buffer, reused once this returns)
         */
        void accept(byte[] bytes, int len);
    }

    /**
     * Reads a whole index blob as {@link #readIndex(BlobRef)} does and hands it to {@code sink}
     * before returning, so that an implementation may read it into a reused buffer rather than a
     * new array of its size (index parts of up to 1 MiB would each be a "humongous" array for
     * G1 in warpd's heap, which makes it grow). The default reads it into a new array.
     *
     * @param blocks whether an implementation with a cache keeps the blob's blocks there too
     */
    default void readIndex(BlobRef blob, IndexBlocks blocks, IndexSink sink) {
        byte[] b = readIndex(blob);
        sink.accept(b, b.length);
    }

    /**
     * A hint that {@code blobs} are about to be read (the folder of their artifact or table was
     * just entered): an implementation may start loading, in the background, what the first read
     * of each would otherwise wait for before it can fetch a block (its block hash list), so that
     * it is in by the time the reader knows which bytes it wants. Returns at once, never fails,
     * and bounds what it does (it may load some of the lists, or none). The default does nothing.
     */
    default void prefetchHashLists(List<BlobRef> blobs) {
    }

    /** Counters for observability and tests. */
    ReadMetrics metrics();

    @Override
    void close();
}
