package io.warpdata.vfs;

import com.github.benmanes.caffeine.cache.AsyncLoadingCache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.warpdata.blobcache.cache.BlobReader;
import io.warpdata.catalog.LastKnownGood;
import io.warpdata.store.ObjectTooLargeException;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.IndexBytes;
import io.warpdata.manifest.MemberIndex;
import io.warpdata.manifest.PartReadAhead;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;

/**
 * Member indexes of artifacts, opened on first touch of an artifact directory. Each index loads
 * behind its own future, so a slow or failing load of one artifact never blocks lookups in
 * another; a failed load is not cached and the next touch retries.
 *
 * <p>With a cache directory, an index blob read from the store (verified by the blob reader) is
 * kept as a file in the catalog's {@link LastKnownGood}, outside the block cache (eviction never
 * drops it, and a version opened once can be listed after a restart while the store is down),
 * and is read in place from that file through {@link IndexPages}, a page cache of fixed size:
 * the heap holds neither the index nor anything per member, so an index of any member count
 * opens, and warpd's memory stays flat. A parted index ({@link MemberIndex}) fetches its top
 * when opened and each part when a lookup or listing first needs it; once a walk over its parts
 * in order is seen ({@code find}), the next {@link #PARTS_AHEAD} parts are read ahead, at most
 * {@link #PARTS_IN_FLIGHT} at once across all indexes ({@link PartReadAhead}). Without a cache directory
 * ({@code --mode remote}) indexes are held on the heap, bounded by {@code maxMembers}.
 */
final class MemberIndexCache {
    /** Index blobs up to this size are fetched whole in one request; larger ones are streamed to their file. */
    static final long WHOLE_FETCH_MAX = 32L << 20;
    /** Heap bytes per member a held (heap) index is counted at, for the bound in members. */
    static final long BYTES_PER_MEMBER = 100;
    /** Index bytes allowed per member of the bound when indexes are held on the heap. */
    static final long INDEX_BYTES_PER_MEMBER = 400;
    /** Opened indexes held when they are read from files (each holds a few fields, not its members). */
    static final int FILE_INDEXES_HELD = 4096;

    /**
     * Parts read ahead at once, at most, across all indexes (system property {@code
     * warp.index.partsInFlight}). A part takes a GET's round trip and its transfer (about 40 ms
     * for 480 KiB on S3 at 20 ms and 25 MB/s a connection) while a walk reads it in about a third
     * of that, so a walk needs 3-6 in flight to not wait for the store; a cold {@code find} over
     * 1.28M members in 480 KiB parts under {@code s3like} took 4.98 s with 2 in flight, 2.67-2.89 s
     * with 8 and 2.76-2.94 s with 16, and on loopback 8 did as well as 2 (docs/bench.md). At most
     * 8 MiB of parts (1 MiB each).
     */
    static final int PARTS_IN_FLIGHT = Integer.getInteger("warp.index.partsInFlight", 8);
    /** Parts ahead of a walk kept loaded or loading. */
    static final int PARTS_AHEAD = 4;

    private final AsyncLoadingCache<BlobRef, MemberIndex> indexes;
    private final PartReadAhead ahead;
    private final BlobReader reader;
    private final LastKnownGood known;
    private final IndexPages pages;
    private final long maxIndexBytes;

    /**
     * @param maxMembers bound of indexes held on the heap (without a cache directory), in members
     * @param pageCacheBytes heap for pages of index files
     */
    MemberIndexCache(BlobReader reader, LastKnownGood known, long maxMembers, long pageCacheBytes, Executor executor) {
        this.reader = reader;
        this.known = known;
        this.pages = new IndexPages(pageCacheBytes);
        this.ahead = new PartReadAhead(executor, Math.max(0, PARTS_IN_FLIGHT), Math.max(PARTS_AHEAD, PARTS_IN_FLIGHT));
        long arrayMax = Integer.MAX_VALUE - 16L;
        this.maxIndexBytes = maxMembers > arrayMax / INDEX_BYTES_PER_MEMBER ? arrayMax : maxMembers * INDEX_BYTES_PER_MEMBER;
        Caffeine<Object, Object> b = Caffeine.newBuilder().executor(executor);
        if (known.persistent()) {
            b.maximumSize(FILE_INDEXES_HELD);
        } else {
            // Weighed in members; one index is held even if heavier than half the bound (else it
            // would be evicted as soon as it loaded, and read again at every lookup).
            long max = Math.max(2, maxMembers);
            b.maximumWeight(max).weigher((BlobRef ref, MemberIndex index) ->
                    (int) Math.min(max / 2, 1 + index.retainedBytes() / BYTES_PER_MEMBER));
        }
        this.indexes = b.buildAsync((BlobRef ref) -> load(ref));
    }

    private MemberIndex load(BlobRef ref) {
        return MemberIndex.open(bytes(ref), "member index " + ref.id(), this::bytes, ahead);
    }

    /** The verified bytes of an index blob (or part): its kept file if there is a disk, else an array. */
    private IndexBytes bytes(BlobRef ref) {
        if (known.persistent()) {
            Optional<Path> file = known.keptBlobFile(ref.id()); // verified as it is read, by the page cache
            if (file.isEmpty()) {
                byte[][] refused = new byte[1][];
                file = fetchToFile(ref, refused);
                if (refused[0] != null) { // the disk refused (logged): read it from the heap this time
                    return IndexBytes.of(refused[0]);
                }
                if (file.isEmpty() && ref.size() <= WHOLE_FETCH_MAX) { // gone again at once: read it whole this time
                    return IndexBytes.of(reader.readIndex(ref));
                }
            }
            if (file.isPresent()) {
                return pages.open(file.get(), ref.id(), ref.size(), why -> {
                    known.forgetBlobFile(ref.id());
                    return fetchToFile(ref, new byte[1][]).orElseThrow(() -> new java.io.IOException(
                            "the cache directory did not take it again (its disk refused, or it is full)"));
                });
            }
        }
        if (ref.size() > maxIndexBytes) {
            throw new ObjectTooLargeException("member index " + ref.id(), ref.size(), maxIndexBytes,
                    "Without a cache directory (--mode remote) warpd holds member indexes on its heap: give it a cache"
                            + " directory (--mode cache), or a larger heap (WARP_HEAP=4g), or check the manifest that"
                            + " names it (warpctl info).");
        }
        byte[] kept = known.blob(ref.id()).orElse(null);
        if (kept != null) {
            return IndexBytes.of(kept);
        }
        byte[] bytes = reader.readIndex(ref);
        known.keepBlob(ref.id(), bytes);
        return IndexBytes.of(bytes);
    }

    /**
     * Fetches an index blob from the store (verified by the reader) into its kept file: the file,
     * or empty if the disk refused it; then {@code refused[0]} holds its bytes if it was fetched
     * whole (up to {@link #WHOLE_FETCH_MAX}: from the reader's buffer, a pooled one for a part, so
     * no array of its size unless the disk refused), else stays null.
     */
    private Optional<Path> fetchToFile(BlobRef ref, byte[][] refused) {
        if (ref.size() > WHOLE_FETCH_MAX) {
            IndexPages.PageCrcs crcs = new IndexPages.PageCrcs(ref.size());
            Optional<Path> kept = known.keepBlob(ref.id(), ref.size(), out -> stream(ref, out, crcs));
            if (kept.isPresent()) {
                pages.learn(ref.id(), crcs.done());
            }
            return kept;
        }
        reader.readIndex(ref, BlobReader.IndexBlocks.CALLER_KEEPS, (bytes, len) -> {
            if (known.keepBlob(ref.id(), bytes, len)) {
                pages.learn(ref.id(), bytes, len); // the reader verified them: the file's first open reads nothing
            } else {
                refused[0] = Arrays.copyOf(bytes, len);
            }
        });
        return refused[0] != null ? Optional.empty() : known.keptBlobFile(ref.id());
    }

    /** Copies a large index blob through the verified read path, a block at a time, taking its page CRCs. */
    private void stream(BlobRef ref, java.io.OutputStream out, IndexPages.PageCrcs crcs) throws java.io.IOException {
        byte[] buf = new byte[1 << 20];
        long at = 0;
        while (at < ref.size()) {
            int n = reader.read(ref, at, buf, 0, (int) Math.min(buf.length, ref.size() - at));
            if (n <= 0) {
                throw new java.io.IOException("the index blob " + ref.id() + " ended at " + at + " of " + ref.size() + " bytes");
            }
            crcs.update(buf, 0, n);
            out.write(buf, 0, n);
            at += n;
        }
    }

    /**
     * The index stored in {@code ref}, loading it if needed (the calling thread waits only for
     * this index).
     *
     * @throws RuntimeException whatever the load threw (store errors, a corrupted index)
     */
    MemberIndex get(BlobRef ref) {
        CompletableFuture<MemberIndex> future = indexes.get(ref);
        try {
            return future.get();
        } catch (ExecutionException | CompletionException e) {
            // Caffeine drops failed loads too, but asynchronously; make sure the next touch retries.
            indexes.asMap().remove(ref, future);
            Throwable cause = e.getCause() == null ? e : e.getCause();
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new CompletionException(cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CompletionException(e);
        }
    }

    /** Members of the indexes currently open (for gauges). */
    long heldMembers() {
        long n = 0;
        for (CompletableFuture<MemberIndex> f : indexes.asMap().values()) {
            if (f.isDone() && !f.isCompletedExceptionally()) {
                n += f.join().size();
            }
        }
        return n;
    }

    /** Reading parts ahead of walks (for tests and gauges). */
    PartReadAhead readAhead() {
        return ahead;
    }

    /** The page cache of index files (for tests and gauges). */
    IndexPages pages() {
        return pages;
    }
}
