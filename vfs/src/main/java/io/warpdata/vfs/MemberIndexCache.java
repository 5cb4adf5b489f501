package io.warpdata.vfs;

import com.github.benmanes.caffeine.cache.AsyncLoadingCache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.warpdata.blobcache.cache.BlobReader;
import io.warpdata.catalog.LastKnownGood;
import io.warpdata.store.ObjectTooLargeException;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.MemberIndex;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;

/**
 * Member indexes of artifacts, loaded on first touch of an artifact directory and held in a
 * cache bounded by the total number of members (memory is proportional to members, not to
 * index bytes). Each index loads behind its own future, so a slow or failing load of one
 * artifact never blocks lookups in another; a failed load is not cached and the next touch
 * retries.
 *
 * <p>An index read from the store (verified by the blob reader) is also kept whole in the
 * catalog's {@link LastKnownGood}, outside the block cache: eviction never drops it, and a
 * version that was opened once can be listed after a restart while the store is down.
 */
final class MemberIndexCache {
    private final AsyncLoadingCache<BlobRef, MemberIndex> indexes;

    /**
     * Index bytes allowed per member the cache may hold. warpd sizes the cache at a quarter of
     * the heap at 200 bytes a member, so 400 a member is half the heap: parsing holds the index's
     * bytes and its parsed arrays (about as large) at once, so a larger index could not be parsed
     * anyway and would only end warpd on OutOfMemoryError. Checked before reading, so a manifest
     * that claims a huge index allocates nothing.
     */
    static final long INDEX_BYTES_PER_MEMBER = 400;

    MemberIndexCache(BlobReader reader, LastKnownGood known, long maxMembers, Executor executor) {
        long arrayMax = Integer.MAX_VALUE - 16L;
        long maxIndexBytes = maxMembers > arrayMax / INDEX_BYTES_PER_MEMBER ? arrayMax : maxMembers * INDEX_BYTES_PER_MEMBER;
        this.indexes = Caffeine.newBuilder()
                .maximumWeight(maxMembers)
                .weigher((BlobRef ref, MemberIndex index) -> index.size() + 1)
                .executor(executor)
                .buildAsync(ref -> fitting(load(reader, known, ref, maxIndexBytes), ref, maxMembers));
    }

    /**
     * An index of more members than the whole cache may hold would be evicted as soon as it is
     * loaded, and parsed again at every lookup: refused instead, saying what to do.
     */
    private static MemberIndex fitting(MemberIndex index, BlobRef ref, long maxMembers) {
        if (index.size() + 1L > maxMembers) {
            throw new IndexTooLargeException("member index " + ref.id(), index.size(), maxMembers - 1);
        }
        return index;
    }

    private static MemberIndex load(BlobReader reader, LastKnownGood known, BlobRef ref, long maxIndexBytes) {
        if (ref.size() > maxIndexBytes) {
            throw new ObjectTooLargeException("member index " + ref.id(), ref.size(), maxIndexBytes,
                    "An index this large needs more memory than warpd has for member indexes: start warpd with a"
                            + " larger heap (WARP_HEAP=4g), or check the manifest that names it (warpctl info).");
        }
        byte[] kept = known.blob(ref.id()).orElse(null);
        if (kept != null) {
            return MemberIndex.parse(kept, "member index " + ref.id());
        }
        byte[] bytes = reader.readIndex(ref);
        MemberIndex index = MemberIndex.parse(bytes, "member index " + ref.id());
        known.keepBlob(ref.id(), bytes);
        return index;
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

    /** Members currently held (for gauges). */
    long heldMembers() {
        return indexes.synchronous().policy().eviction()
                .map(e -> e.weightedSize().orElse(0L)).orElse(0L);
    }
}
