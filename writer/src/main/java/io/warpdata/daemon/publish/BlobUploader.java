package io.warpdata.daemon.publish;

import io.warpdata.store.BlobStore;
import io.warpdata.store.StoreException;
import io.warpdata.store.StoreLayout;
import io.warpdata.manifest.BlobId;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Uploads the blobs of a new version that the store lacks, each with its block hash list, in
 * parallel: a blob already stored (by content hash) is skipped, so publishing the same input
 * twice uploads nothing, and a view, whose member bytes are its parent's, uploads only its
 * table and its member indexes.
 */
public final class BlobUploader {
    private final BlobStore store;
    private final int threads;
    private final PublishProgress progress;

    /** What an upload did. */
    public record Upload(int uploaded, int skipped, long bytesUploaded, long bytesSkipped) {
    }

    /**
     * @param threads parallel uploads (S3 likes several streams; 8 keeps one host busy)
     */
    public BlobUploader(BlobStore store, int threads, PublishProgress progress) {
        this.store = Objects.requireNonNull(store, "store");
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1");
        }
        this.threads = threads;
        this.progress = Objects.requireNonNull(progress, "progress");
    }

    /**
     * Uploads every blob of {@code blobs} and each one's block hash list that the store does not
     * hold yet (duplicates are sent once).
     *
     * @throws StoreException if an upload fails, or the store holds a blob of the wrong size
     */
    public Upload uploadMissing(List<StagedBlob> blobs) {
        List<StagedBlob> all = withBlockLists(blobs);
        AtomicInteger uploaded = new AtomicInteger();
        AtomicInteger skipped = new AtomicInteger();
        AtomicLong bytesUploaded = new AtomicLong();
        AtomicLong bytesSkipped = new AtomicLong();
        progress.start("upload", all.stream().mapToLong(StagedBlob::size).sum());
        ExecutorService pool = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "warp-publish-upload");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (StagedBlob b : all) {
                futures.add(pool.submit(() -> {
                    progress.checkpoint("upload its next blob");
                    if (uploadOne(b)) {
                        uploaded.incrementAndGet();
                        bytesUploaded.addAndGet(b.size());
                    } else {
                        skipped.incrementAndGet();
                        bytesSkipped.addAndGet(b.size());
                    }
                    progress.advance(b.size());
                }));
            }
            for (Future<?> f : futures) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    futures.forEach(other -> other.cancel(true));
                    if (e.getCause() instanceof RuntimeException re) {
                        throw re;
                    }
                    throw new StoreException("Upload to " + store.describe() + " failed: " + e.getCause(),
                            "Check the store and publish again; blobs already uploaded are reused.", e.getCause());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new StoreException("Publish interrupted", "Publish again; uploaded blobs are reused.", e);
                }
            }
            return new Upload(uploaded.get(), skipped.get(), bytesUploaded.get(), bytesSkipped.get());
        } finally {
            pool.shutdownNow();
            progress.finish();
        }
    }

    /** Each blob followed by its block hash list, without duplicates. */
    private static List<StagedBlob> withBlockLists(List<StagedBlob> blobs) {
        Map<BlobId, StagedBlob> out = new LinkedHashMap<>();
        for (StagedBlob b : blobs) {
            out.putIfAbsent(b.id(), b);
            StagedBlob blocks = StagedBlob.ofBytes(b.blocksBytes());
            out.putIfAbsent(blocks.id(), blocks);
        }
        return new ArrayList<>(out.values());
    }

    /**
     * An object the failed upload may still have made, if it cannot be this blob (another size):
     * one of the right size may be another publisher's, made meanwhile from a good copy (the review).
     */
    private void deleteIfOfOtherSize(String key, long size) {
        try {
            OptionalLong now = store.length(key);
            if (now.isPresent() && now.getAsLong() != size) {
                store.delete(key);
            }
        } catch (RuntimeException e) {
            // the store's own error is already the reason the upload failed
        }
    }

    /** Whether the blob was written (false: the store had it). */
    private boolean uploadOne(StagedBlob b) {
        String key = StoreLayout.blob(b.id());
        OptionalLong existing = store.length(key);
        if (existing.isPresent()) {
            if (existing.getAsLong() != b.size()) {
                throw new StoreException("Blob " + key + " in " + store.describe() + " has " + existing.getAsLong()
                        + " bytes, expected " + b.size(), "The store holds a damaged blob; delete that object and"
                        + " publish again.", null);
            }
            return false;
        }
        if (b.file().isEmpty()) {
            return store.putIfAbsent(key, b.bytes().get());
        }
        // The file is uploaded from where it is, read again after it was hashed: the bytes sent
        // must be the bytes hashed, or the store holds other bytes under this hash for good (a
        // later publish skips the object as present). Checked before, and after: an object made
        // from a file that changed meanwhile is deleted again.
        Path file = b.file().get();
        FileStamp stamp = b.stamp().orElseThrow();
        stamp.requireSame(file, "after it was hashed, before its upload");
        boolean written;
        try {
            written = store.putIfAbsent(key, file);
        } catch (RuntimeException e) {
            // A file cut short mid-upload fails the upload itself (S3: "400 EntityTooSmall", said
            // as the server's fault: audit 46): the file's change is the cause to name, the
            // store's error beside it, and an object the failed upload still made (a lost answer
            // to a retried PUT) goes too.
            try {
                stamp.requireSame(file, "during its upload");
            } catch (InvalidInputException changed) {
                changed.addSuppressed(e);
                deleteIfOfOtherSize(key, b.size());
                throw changed;
            }
            throw e;
        }
        if (written) {
            try {
                stamp.requireSame(file, "during its upload");
            } catch (InvalidInputException e) {
                try {
                    store.delete(key); // made by this upload, of bytes that are not its hash's
                } catch (RuntimeException d) {
                    throw new InvalidInputException(e.getMessage() + "; and the object " + key + " it made could not be"
                            + " deleted (" + d.getMessage() + ")", "Delete that object from " + store.describe()
                            + " with the store's own tools, then publish again once the file stays put.", d);
                }
                throw e;
            }
        }
        return written;
    }
}
