package io.warpdata.blobcache.cache;

import io.warpdata.store.BlobStore;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;
import java.util.Objects;

/**
 * The simplest verified read path: no disk cache, no prefetch. Every read fetches the blocks
 * that cover it with one ranged GET per run of up to {@link #MAX_GET_BYTES}, verifies each
 * block against the blob's {@link BlockHashList} and copies out the requested bytes. Block
 * hash lists are cached in memory. Useful for tests, tools, and as the baseline that
 * {@link BlockCache} must beat.
 *
 * <p>Retries are bounded by the policy's deadline, but a single store call that hangs is only
 * bounded by the store's own timeouts (use {@link BlockCache} when that matters).
 */
public final class DirectBlobReader implements BlobReader {
    /** Largest single GET: bounds the per-thread buffer; 4 MiB is well past S3's latency knee. */
    static final int MAX_GET_BYTES = 4 << 20;
    /** Bound on memory held by cached block hash lists (32 B per block: 16 MiB covers 512 GiB). */
    static final long HASH_LIST_MEMORY = 16L << 20;

    private final ReadMetrics metrics = new ReadMetrics();
    private final BlockFetcher fetcher;
    private final HashLists lists;
    private final ThreadLocal<byte[]> buffers = new ThreadLocal<>();

    public DirectBlobReader(BlobStore store) {
        this(store, RetryPolicy.DEFAULT);
    }

    public DirectBlobReader(BlobStore store, RetryPolicy policy) {
        this.fetcher = new BlockFetcher(Objects.requireNonNull(store, "store"), metrics,
                Objects.requireNonNull(policy, "policy"));
        this.lists = new HashLists(fetcher, HASH_LIST_MEMORY);
    }

    @Override
    public int read(BlobRef blob, long offset, byte[] dst, int dstOff, int len) {
        Objects.checkFromIndexSize(dstOff, len, dst.length);
        if (offset < 0) {
            throw new IllegalArgumentException("negative offset " + offset + " in blob " + blob.id());
        }
        if (offset >= blob.size() || len == 0) {
            return 0;
        }
        int n = (int) Math.min(len, blob.size() - offset);
        long deadline = fetcher.deadlineFromNow();
        try {
            BlockHashList list = lists.get(blob, deadline);
            int bs = list.blockSize();
            int perGet = Math.max(1, MAX_GET_BYTES / bs);
            int first = (int) (offset / bs);
            int last = (int) ((offset + n - 1) / bs);
            long pos = offset;
            int out = dstOff;
            for (int b = first; b <= last; b += perGet) {
                int count = Math.min(perGet, last - b + 1);
                int runLen = BlockFetcher.runLength(list, b, count);
                byte[] buf = buffer(runLen);
                fetcher.fetchRun(blob, list, b, count, buf, 0, deadline);
                long runStart = (long) b * bs;
                int from = (int) (pos - runStart);
                int take = (int) Math.min(runLen - from, offset + n - pos);
                System.arraycopy(buf, from, dst, out, take);
                pos += take;
                out += take;
                metrics.missBlocks.add(count);
                metrics.missBytes.add(take);
            }
            return n;
        } catch (RuntimeException e) {
            metrics.readErrors.increment();
            throw e;
        }
    }

    private byte[] buffer(int len) {
        byte[] b = buffers.get();
        if (b == null || b.length < len) {
            b = new byte[Math.max(len, MAX_GET_BYTES)];
            buffers.set(b);
        }
        return b;
    }

    @Override
    public ReadMetrics metrics() {
        return metrics;
    }

    @Override
    public void close() {
        // Nothing to release: the store belongs to the caller.
    }
}
