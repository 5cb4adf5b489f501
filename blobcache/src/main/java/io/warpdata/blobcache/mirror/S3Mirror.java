package io.warpdata.blobcache.mirror;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.warpdata.store.BlobNotFoundException;
import io.warpdata.store.BlobStore;
import io.warpdata.store.ObjectTooLargeException;
import io.warpdata.store.StoreException;
import io.warpdata.store.StoreNotAnsweringException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * A shared tier on an S3-compatible bucket (S3 Express One Zone, MinIO, Ceph RGW) with its own
 * endpoint and credentials, which warpd reads like an HTTP mirror and fills itself: after the
 * read plan has fetched bytes from the store and verified them, it offers them here, and a
 * background thread writes them. Many nodes filling the same objects is harmless: every key is
 * content-addressed and written with put-if-absent, except a key whose copy here failed
 * verification ({@link #rejected}): its next fill is written over it, so that a damaged object
 * is repaired by the first node that reads the store instead of failing every node for good; and
 * for 30 s after such a failure every fill overwrites, since a tier with one damaged copy may
 * hold more, and the reads this node sends to the store meanwhile never looked at them.
 *
 * <p>Layout in the bucket (under its prefix), so that a blob read only in part is still shared:
 * <ul>
 *   <li>a whole object (manifest, hash list, member index) under its store key
 *       ({@link io.warpdata.store.StoreLayout});
 *   <li>each block of a blob as its own object, {@link #blockKey}:
 *       {@code <store key>.blocks/<block size>/<index>}. A range is read block by block and is a
 *       hit only if every block is there.
 * </ul>
 *
 * <p>The fill queue is bounded in bytes (a copy of each offer waits there); an offer that does not
 * fit is dropped and counted. A failed write is counted and logged at debug, never thrown.
 */
public final class S3Mirror implements Mirror {
    private static final Logger LOG = LoggerFactory.getLogger(S3Mirror.class);
    /** 64 MiB of offers at most: 64 blocks in flight to a tier that is slower than the store. */
    public static final long DEFAULT_QUEUE_BYTES = 64L << 20;
    /** How long after a damaged copy is found every fill overwrites: the tier's backoff after a failure. */
    static final Duration OVERWRITE_AFTER_DAMAGE = Duration.ofSeconds(30);

    private final String name;
    private final BlobStore bucket;
    private final long queueBytesLimit;
    private final long graceNanos;
    private final BlockingQueue<Fill> queue = new ArrayBlockingQueue<>(4096);
    private final AtomicLong queuedBytes = new AtomicLong();
    /** Keys whose copy in the tier failed verification: their next fill overwrites them. */
    private final Cache<String, Boolean> damaged = Caffeine.newBuilder().maximumSize(10_000)
            .expireAfterWrite(Duration.ofMinutes(10)).build();
    /**
     * Until when every fill overwrites (System.nanoTime): a tier with one damaged copy may hold
     * others, and what this node reads from the store while the tier is skipped after a failure
     * (30 s) was never checked against the tier's copies, so those are written over, not left
     * (with put-if-absent, 66 of 70 damaged objects stayed damaged after two nodes read them all).
     */
    private volatile long overwriteUntilNanos = System.nanoTime() - 1;
    private final LongAdder written = new LongAdder();
    private final LongAdder failed = new LongAdder();
    private final LongAdder dropped = new LongAdder();
    private final Thread filler;
    private volatile boolean closed;

    private record Fill(String key, byte[] data) {
    }

    /**
     * @param name the mirror as configured, without secrets ({@code s3://bucket/prefix})
     * @param bucket the tier's bucket and prefix, opened with the tier's own endpoint, credentials
     *        and a short silence timeout (this mirror closes it)
     * @param queueBytesLimit the most bytes waiting to be written
     */
    public S3Mirror(String name, BlobStore bucket, long queueBytesLimit) {
        this(name, bucket, queueBytesLimit, ANSWER_GRACE);
    }

    /**
     * @param grace what an answer may take beyond its bytes at {@link #SLOWEST_BYTES_PER_SECOND}
     *        (at least the bucket's timeout of silence; tests shorten it)
     */
    public S3Mirror(String name, BlobStore bucket, long queueBytesLimit, Duration grace) {
        this.name = Objects.requireNonNull(name, "name");
        this.graceNanos = grace.toNanos();
        this.bucket = Objects.requireNonNull(bucket, "bucket");
        if (queueBytesLimit <= 0) {
            throw new IllegalArgumentException("fill queue limit must be positive, was " + queueBytesLimit);
        }
        this.queueBytesLimit = queueBytesLimit;
        this.filler = Thread.ofPlatform().daemon().name("warp-mirror-fill").start(this::fillLoop);
    }

    /** The key of one block of a blob in the tier. */
    public static String blockKey(String storeKey, int blockSize, long index) {
        return storeKey + ".blocks/" + blockSize + "/" + index;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public boolean read(MirrorRange range, byte[] dst, int dstOff) throws MirrorException {
        Objects.checkFromIndexSize(dstOff, range.length(), dst.length);
        // Each block's GET is bounded by the socket's silence and the ceiling; the range by the
        // slowest rate waited for (Mirror.SLOWEST_BYTES_PER_SECOND) past the grace, checked as
        // the bytes come in, so a tier that drips is given up inside a block, as HttpMirror does.
        long start = System.nanoTime();
        int done = 0;
        for (int i = 0; i < range.blocks(); i++) {
            int len = Math.min(range.blockSize(), range.length() - done);
            String key = blockKey(range.key(), range.blockSize(), range.firstBlock() + i);
            int before = done;
            try {
                bucket.read(key, 0, dst, dstOff + done, len, n -> keepsPace(range, before + n, start));
            } catch (BlobNotFoundException absent) {
                return false;
            } catch (StoreException e) {
                throw translate(key, e);
            } catch (TooSlow slow) {
                throw new MirrorException(MirrorException.Kind.TIMEOUT, slow.getMessage());
            }
            done += len;
        }
        return true;
    }

    /** Thrown by a read's progress when the answer fell behind the slowest rate; ends the GET. */
    private static final class TooSlow extends RuntimeException {
        TooSlow(String message) {
            super(message, null, false, false);
        }
    }

    private void keepsPace(MirrorRange range, long written, long start) {
        long elapsed = System.nanoTime() - start;
        if (Mirror.behindSlowest(written, elapsed, graceNanos) > 0 || elapsed > ANSWER_CEILING.toNanos()) {
            throw new TooSlow(name + " sent " + written + " of " + range.length() + " bytes of " + range + " in "
                    + String.format("%.1f", elapsed / 1e9) + " s, slower than " + (SLOWEST_BYTES_PER_SECOND >> 20)
                    + " MiB/s (the slowest answer waited for)");
        }
    }

    @Override
    public Optional<byte[]> get(String key, int maxBytes) throws MirrorException {
        try {
            return Optional.of(bucket.get(key, maxBytes));
        } catch (BlobNotFoundException absent) {
            return Optional.empty();
        } catch (ObjectTooLargeException e) {
            throw new MirrorException(MirrorException.Kind.BAD_ANSWER, name + ": " + key + " is larger than " + maxBytes, e);
        } catch (StoreException e) {
            throw translate(key, e);
        }
    }

    private MirrorException translate(String key, StoreException e) {
        MirrorException.Kind kind = e instanceof StoreNotAnsweringException ? MirrorException.Kind.TIMEOUT : MirrorException.Kind.STATUS;
        return new MirrorException(kind, name + ": " + key + ": " + e.getMessage(), e);
    }

    @Override
    public boolean fillable() {
        return true;
    }

    @Override
    public void fill(MirrorRange range, byte[] verified, int off) {
        Objects.checkFromIndexSize(off, range.length(), verified.length);
        int done = 0;
        for (int i = 0; i < range.blocks(); i++) {
            int len = Math.min(range.blockSize(), range.length() - done);
            offer(blockKey(range.key(), range.blockSize(), range.firstBlock() + i),
                    Arrays.copyOfRange(verified, off + done, off + done + len));
            done += len;
        }
    }

    @Override
    public void fillObject(String key, byte[] verified) {
        offer(key, verified.clone());
    }

    @Override
    public void rejected(String key, long offset, int len, int blockSize) {
        overwriteUntilNanos = System.nanoTime() + OVERWRITE_AFTER_DAMAGE.toNanos();
        if (offset < 0) {
            damaged.put(key, Boolean.TRUE);
            return;
        }
        if (blockSize <= 0 || len <= 0) {
            return;
        }
        for (long b = offset / blockSize; b * blockSize < offset + len; b++) {
            damaged.put(blockKey(key, blockSize, b), Boolean.TRUE);
        }
    }

    private void offer(String key, byte[] copy) {
        if (closed) {
            dropped.increment();
            return;
        }
        long after = queuedBytes.addAndGet(copy.length);
        if (after > queueBytesLimit || !queue.offer(new Fill(key, copy))) {
            queuedBytes.addAndGet(-copy.length);
            dropped.increment();
        }
    }

    private void fillLoop() {
        while (!closed || !queue.isEmpty()) {
            Fill fill;
            try {
                fill = queue.poll(200, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                return;
            }
            if (fill == null) {
                continue;
            }
            try {
                boolean wrote;
                if (damaged.getIfPresent(fill.key()) != null || System.nanoTime() - overwriteUntilNanos < 0) {
                    bucket.put(fill.key(), fill.data()); // over a copy that failed, or may have
                    damaged.invalidate(fill.key());
                    wrote = true;
                } else {
                    wrote = bucket.putIfAbsent(fill.key(), fill.data());
                }
                if (wrote) {
                    written.increment();
                }
            } catch (RuntimeException e) {
                failed.increment();
                LOG.debug("mirror {}: could not write {}: {}", name, fill.key(), e.toString());
            } finally {
                queuedBytes.addAndGet(-fill.data().length);
            }
        }
    }

    @Override
    public FillCounts fillCounts() {
        return new FillCounts(written.sum(), failed.sum(), dropped.sum(), queuedBytes.get());
    }

    /**
     * Waits until the queue is empty and the last write finished (tests, and a clean stop).
     *
     * @return whether it drained within {@code limit}
     */
    public boolean awaitFilled(Duration limit) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (queuedBytes.get() > 0) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }

    /** Stops taking offers, writes what is queued (up to 5 s), then closes the bucket's client. */
    @Override
    public void close() {
        closed = true;
        try {
            filler.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        filler.interrupt();
        bucket.close();
    }
}
