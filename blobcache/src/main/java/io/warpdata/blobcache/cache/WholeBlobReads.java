package io.warpdata.blobcache.cache;

import io.warpdata.store.StoreLayout;
import io.warpdata.store.StoreUnavailableException;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Small blobs read whole (member indexes) whose block hash list is not here yet: one GET of the
 * whole blob, verified against the blob's own id (the SHA-256 of its content, which the verified
 * manifest names), where reading block by block would wait for the list first and for the blocks
 * after it: one round trip instead of two. The list is loaded alongside; once it is in, each
 * block of the blob is verified against it and kept in the cache, as if the blob had been read
 * block by block (so {@code warm}, {@code verify} and local mode find it as before). No byte is
 * returned that did not hash to the blob's id; a mismatch is fetched once more, then the read
 * fails with {@link BlockVerificationException} and one log line naming the blob.
 *
 * <h2>First touch: what a first read waits for</h2>
 * A block can be fetched only once its blob's block hash list is in (the list gives the block
 * size and each block's SHA-256), so a cold blob costs the list's round trip and then the
 * block's. Two things take the list off the path of a version's first read (docs/cache.md
 * counts the round trips):
 * <ul>
 * <li>{@link io.warpdata.blobcache.cache.BlockCache#readIndex} (member indexes): an index whose
 *     list is neither in memory nor on disk comes whole in one GET, checked against its id, the
 *     SHA-256 of all of it; its list loads alongside and its blocks are cached once it is in.
 *     Up to {@code WholeBlobReads.MAX_BYTES} = 32 MiB, the longest GET the cache makes: beyond
 *     it the transfer, not a round trip, is what the reader waits for.</li>
 * <li>{@link io.warpdata.blobcache.cache.BlockCache#prefetchHashLists}: the vfs asks for the
 *     lists of an artifact's or a table's shards (at most 64, {@code WarpTree.HASH_LISTS_PREFETCHED})
 *     when its folder is entered, so that in an artifact they load while its member index does. {@code HashListPrefetcher}
 *     runs at most {@code IN_FLIGHT} = 16 loads at once (the lists of 16 shards in one round
 *     trip; a quarter of the S3 client's 64 connections), within {@code MAX_BYTES_IN_FLIGHT} =
 *     64 MiB of what their lists could take (the bound each is fetched with; a blob whose list
 *     could take more is never prefetched), keeps {@code QUEUED} = 1024 waiting (the oldest
 *     dropped), and stops for {@code PAUSE} = 5 s when a load finds the store not answering.
 *     Loads go through {@code HashLists}, so a read that needs a list being prefetched waits for
 *     that load, and one whose list is still queued loads it itself: a read never waits for the
 *     queue.</li>
 * </ul>
 *
 */
final class WholeBlobReads {
    private static final Logger LOG = LoggerFactory.getLogger(WholeBlobReads.class);
    /**
     * Largest blob read this way: 32 MiB, the longest GET the cache makes
     * ({@link FetchScheduler#MAX_RUN_BYTES}). A member index of 32 MiB holds some 300,000 members;
     * beyond that the transfer, not the list's round trip, is what the reader waits for, and the
     * blob is read block by block.
     */
    static final int MAX_BYTES = FetchScheduler.MAX_RUN_BYTES;
    /** Blobs up to one default block (every index part) are read into a pooled buffer ({@link #readInto}). */
    static final int POOLED_BYTES = BlockHashList.DEFAULT_BLOCK_SIZE;
    /** Idle pooled buffers kept: about as many as index parts are fetched at once. */
    static final int POOLED_KEPT = 10;

    private final BlockFetcher fetcher;
    private final HashLists lists;
    private final BlockStorage storage;
    private final ReadMetrics metrics;
    private final Executor executor;
    private final BooleanSupplier closed;
    private final ConcurrentLinkedDeque<byte[]> idle = new ConcurrentLinkedDeque<>();
    private final AtomicInteger idleCount = new AtomicInteger();

    /**
     * @param executor runs the GET (so that the reader waits at most until its deadline) and the
     *                 cache writes after the list arrives
     * @param closed   whether the cache is closing (then nothing is written)
     */
    WholeBlobReads(BlockFetcher fetcher, HashLists lists, BlockStorage storage, ReadMetrics metrics,
            Executor executor, BooleanSupplier closed) {
        this.fetcher = fetcher;
        this.lists = lists;
        this.storage = storage;
        this.metrics = metrics;
        this.executor = executor;
        this.closed = closed;
    }

    /**
     * A blob read whole: its verified bytes, and whether a mirror served them (else the store did).
     */
    record Whole(byte[] data, boolean mirrored) {
    }

    /**
     * Blob {@code blob} (of at most {@link #MAX_BYTES}, not empty), fetched with one GET and
     * verified against its id, its list loaded alongside to cache its blocks.
     *
     * @throws BlockVerificationException if the bytes fetched do not hash to the id, twice
     * @throws io.warpdata.store.ObjectTooLargeException if the store holds a larger object there
     * @throws io.warpdata.store.StoreException if it cannot be fetched by the deadline
     */
    Whole read(BlobRef blob, long deadlineNanos) {
        return read(blob, deadlineNanos, true);
    }

    /** As {@link #read(BlobRef, long)}; without {@code keepBlocks} its list is not loaded nor its blocks cached. */
    private Whole read(BlobRef blob, long deadlineNanos, boolean keepBlocks) {
        CompletableFuture<Whole> whole = onExecutor(() -> fetchVerified(blob, deadlineNanos));
        CompletableFuture<BlockHashList> list = keepBlocks ? lists.loading(blob, deadlineNanos) : null;
        Whole read = Deadlines.await(whole, deadlineNanos, () -> "reading blob " + blob.id() + " whole from "
                + fetcher.store().describe());
        if (list == null) {
            return read;
        }
        byte[] data = read.data();
        // The blocks are written from the caller's array: each is verified against the list
        // first, so even a caller that changed the array could not put a wrong block in the cache.
        list.whenCompleteAsync((l, failed) -> {
            if (l != null) {
                keep(blob, l, data);
            }
            // A list that failed to load only means the blocks are not cached: a later block
            // read loads it again and reports its error.
        }, executor);
        return read;
    }

    /**
     * Blob {@code blob} read whole as {@link #read} reads it, handed to {@code sink} before this
     * returns. One of at most one default block (every index part) comes into a pooled buffer,
     * not a new array of its size: parts of up to 1 MiB would each be a "humongous" object for
     * G1, which grows the heap for them (docs/bench.md, "Peak RSS at 10M"). Its blocks are cached
     * from the buffer before it is reused, once its list is in (derived at once for one block;
     * a list that does not come by the deadline only means they are not cached). A buffer a GET
     * may still write into (the reader's deadline passed first) is never reused. Without {@code
     * keepBlocks} its blocks are not cached, and its list is not loaded for them: the caller keeps
     * the blob.
     *
     * @return whether a mirror served the bytes (else the store did)
     */
    boolean readInto(BlobRef blob, long deadlineNanos, boolean keepBlocks, BlobReader.IndexSink sink) {
        if (blob.size() > POOLED_BYTES) {
            Whole whole = read(blob, deadlineNanos, keepBlocks);
            sink.accept(whole.data(), whole.data().length);
            return whole.mirrored();
        }
        byte[] buffer = pooled();
        CompletableFuture<Boolean> fetched = onExecutor(() -> fetchVerifiedInto(blob, buffer, deadlineNanos));
        CompletableFuture<BlockHashList> list = keepBlocks ? lists.loading(blob, deadlineNanos) : null;
        boolean mirrored;
        try {
            mirrored = Deadlines.await(fetched, deadlineNanos, () -> "reading blob " + blob.id() + " whole from "
                    + fetcher.store().describe());
        } catch (RuntimeException e) {
            if (fetched.isDone()) { // failed: nothing writes into the buffer any more
                give(buffer);
            } // else the deadline passed while a GET may still be writing into it: not reused
            throw e;
        }
        int len = (int) blob.size();
        try {
            BlockHashList l = list == null ? null : listBy(list, blob, deadlineNanos);
            if (l != null) {
                keep(blob, l, buffer, len, true);
            }
            sink.accept(buffer, len);
        } finally {
            give(buffer);
        }
        return mirrored;
    }

    /** Runs the GET on the executor, so that the reader waits for it at most until its deadline. */
    private <T> CompletableFuture<T> onExecutor(Supplier<T> fetch) {
        CompletableFuture<T> done = new CompletableFuture<>();
        try {
            executor.execute(() -> {
                try {
                    done.complete(fetch.get());
                } catch (RuntimeException | Error e) {
                    done.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException e) {
            throw new StoreUnavailableException("The fetch executor refused work (shutting down?)", e);
        }
        return done;
    }

    /** The list once loaded, or null if it failed or did not come by the deadline (the blocks are then not cached). */
    private static BlockHashList listBy(CompletableFuture<BlockHashList> list, BlobRef blob, long deadlineNanos) {
        try {
            return Deadlines.await(list, deadlineNanos, () -> "the block hash list of blob " + blob.id());
        } catch (RuntimeException notInTime) {
            return null;
        }
    }

    private byte[] pooled() {
        byte[] b = idle.pollFirst();
        if (b != null) {
            idleCount.decrementAndGet();
            return b;
        }
        return new byte[POOLED_BYTES];
    }

    private void give(byte[] b) {
        if (idleCount.incrementAndGet() <= POOLED_KEPT) {
            idle.offerFirst(b);
        } else {
            idleCount.decrementAndGet();
        }
    }

    /** {@link #fetchVerified} into {@code dst[0, size)}: from a mirror, else a ranged GET of the store. */
    private boolean fetchVerifiedInto(BlobRef blob, byte[] dst, long deadlineNanos) {
        String key = StoreLayout.blob(blob.id());
        int size = (int) blob.size();
        if (!fetcher.remotes().isEmpty()
                && fetcher.fromRemotes(key, 0, dst, 0, size, BlockHashList.DEFAULT_BLOCK_SIZE, size,
                        (d, o, l) -> matches(d, o, l, blob), deadlineNanos)) {
            return true;
        }
        for (int attempt = 0; attempt < 2; attempt++) {
            fetcher.readWithRetry(key, 0, dst, 0, size, deadlineNanos);
            if (matches(dst, 0, size, blob)) {
                fetcher.fillRemotes(key, 0, dst, 0, size, BlockHashList.DEFAULT_BLOCK_SIZE);
                return false;
            }
            metrics.verificationFailures.increment();
        }
        throw failedTwice(blob);
    }

    private static boolean matches(byte[] data, int off, int len, BlobRef blob) {
        if (len != blob.size()) {
            return false;
        }
        MessageDigest sha = BlobId.sha256();
        sha.update(data, off, len);
        return Arrays.equals(sha.digest(), blob.id().digest());
    }

    private Whole fetchVerified(BlobRef blob, long deadlineNanos) {
        String key = StoreLayout.blob(blob.id());
        int size = (int) blob.size();
        if (!fetcher.remotes().isEmpty()) {
            byte[] mirrored = new byte[size];
            if (fetcher.fromRemotes(key, 0, mirrored, 0, size, BlockHashList.DEFAULT_BLOCK_SIZE, size,
                    (d, o, l) -> matches(d, blob), deadlineNanos)) {
                return new Whole(mirrored, true);
            }
        }
        for (int attempt = 0; attempt < 2; attempt++) {
            byte[] data = fetcher.getWithRetry(key, size, deadlineNanos);
            if (matches(data, blob)) {
                fetcher.fillRemotes(key, 0, data, 0, size, BlockHashList.DEFAULT_BLOCK_SIZE);
                return new Whole(data, false);
            }
            metrics.verificationFailures.increment();
        }
        throw failedTwice(blob);
    }

    /** A blob whose bytes failed verification on both fetches: logged once, failing the read. */
    private BlockVerificationException failedTwice(BlobRef blob) {
        LOG.warn("Blob {} read whole from {} failed SHA-256 verification twice; failing the read",
                blob.id(), fetcher.store().describe());
        return new BlockVerificationException(blob.id());
    }

    private static boolean matches(byte[] data, BlobRef blob) {
        return matches(data, 0, data.length, blob);
    }

    /** Keeps each block of {@code data} that verifies against {@code list} (all do, unless the manifest lies). */
    private void keep(BlobRef blob, BlockHashList list, byte[] data) {
        keep(blob, list, data, data.length, false);
    }

    /**
     * Keeps each block of {@code data[0, len)} that verifies against {@code list}.
     *
     * @param wholeVerified the bytes already hashed to the blob's id: a one-block list naming that
     *                      id as its block's hash needs no second hash of the same bytes
     */
    private void keep(BlobRef blob, BlockHashList list, byte[] data, int len, boolean wholeVerified) {
        if (list.blobSize() != len) {
            return;
        }
        if (wholeVerified && list.blockCount() == 1 && list.hashOf(0).equals(blob.id())) {
            if (!closed.getAsBoolean()) {
                storage.put(new BlockKey(blob.id(), list.blockSize(), 0), blob.blocks(), data, 0, len, null);
            }
            return;
        }
        int bs = list.blockSize();
        for (int b = 0; b < list.blockCount() && !closed.getAsBoolean(); b++) {
            int off = (int) list.blockOffset(b);
            int blockLen = list.blockLength(b);
            if (list.verify(b, data, off, blockLen)) {
                storage.put(new BlockKey(blob.id(), bs, b), blob.blocks(), data, off, blockLen, null);
            }
        }
    }
}
