package io.warpdata.blobcache.cache;

import io.warpdata.store.StoreLayout;
import io.warpdata.store.StoreUnavailableException;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlockHashList;
import java.nio.ByteBuffer;
import java.security.DigestException;
import java.security.MessageDigest;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Archive members read by their own SHA-256 (from the member index), next to the block path: a
 * member cached under its hash serves every dataset and version that holds the same bytes, and
 * a small member read at random is fetched on its own, costing about its size rather than a
 * block. See the package documentation for the lookup order and why; {@link BlockCache#readMember}
 * runs it.
 *
 * <p>A member cached under its hash is what it is: block 0 of the blob whose id is that hash,
 * with {@link #MEMBER_BLOCK_SIZE}-byte blocks ({@link #key}). It lives in the block storage
 * beside the blocks (same files, same size limit, same eviction), marked by a list id equal to
 * its blob id, which is how it is re-verified ({@link BlockStorage#put}).
 *
 * <p>A member fetch is one ranged GET of exactly the member's bytes on the fetch executor,
 * which every reader of the member waits for until its own deadline (single flight by hash), at
 * most {@code maxConcurrentFetches} at once; its bytes are checked against the member's SHA-256,
 * a mismatch is fetched once more, then the read fails with {@link MemberVerificationException}.
 * The readers are handed the bytes as soon as they are checked; the cache write follows on the
 * fetch thread. No lock is held across the GET; a hit allocates only its small key.
 */
final class MemberReads {
    private static final Logger LOG = LoggerFactory.getLogger(MemberReads.class);
    /**
     * Largest member fetched on its own: 256 KiB. Below it a ranged GET of the member is cheaper
     * than its 1 MiB block in bytes (4x or more), while a GET's cost is mostly its round trip; a
     * larger member read at random is most of a block anyway. Also bounds the memory of member
     * fetches in flight: {@code maxConcurrentFetches} x 256 KiB (8 MiB at the default 32).
     */
    static final int MAX_FETCH_BYTES = 256 << 10;
    /**
     * Block size of the key a member is cached under: 1 MiB, the default block size, so a blob
     * that happens to be one of these members on its own (published alone with default blocks)
     * shares the entry. Members larger than this are never looked up under their hash.
     */
    static final int MEMBER_BLOCK_SIZE = BlockHashList.DEFAULT_BLOCK_SIZE;
    /** A member whose bytes in another blob do not hash to it is logged at most this often. */
    private static final long WARN_EVERY_NANOS = 10_000_000_000L;

    /** Tells read-ahead of a member fetched on its own: a read of its blob that missed the cache. */
    @FunctionalInterface
    interface Seeks {
        void fetched(BlobMember member, BlockHashList list);
    }

    /** One member's fetch, shared by every reader of it until it is cached. */
    private static final class MemberFetch {
        final CompletableFuture<byte[]> done = new CompletableFuture<>();
    }

    /** Per-thread hashing state: no allocation per check. */
    private static final class Hashing {
        final MessageDigest md = BlobId.sha256();
        final byte[] out = new byte[32];
        final ByteBuffer scratch = ByteBuffer.allocate(64 << 10);

        /** Finishes the digest into {@link #out}. */
        byte[] digest() {
            try {
                md.digest(out, 0, out.length);
            } catch (DigestException e) {
                throw new IllegalStateException("SHA-256 output buffer is 32 bytes", e);
            }
            return out;
        }
    }

    private final CacheConfig config;
    private final ReadMetrics metrics;
    private final BlockStorage storage;
    private final BlockFetcher fetcher;
    private final HashLists lists;
    private final FetchScheduler scheduler;
    private final ReadAhead readAhead;
    private final Seeks seeks;
    private final Executor executor;
    private final MemberLocator locator = new MemberLocator();
    private final ConcurrentHashMap<BlobId, MemberFetch> inflight = new ConcurrentHashMap<>();
    private final Semaphore gets;
    private final ThreadLocal<Hashing> hashing = ThreadLocal.withInitial(Hashing::new);
    private final AtomicLong lastWarn = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);

    /**
     * @param readAhead tracks access per blob (null: the cache does not fetch)
     * @param seeks     told of each member fetched on its own, before its GET
     * @param executor  writes fetched members to the cache
     */
    MemberReads(CacheConfig config, ReadMetrics metrics, BlockStorage storage, BlockFetcher fetcher, HashLists lists,
                FetchScheduler scheduler, ReadAhead readAhead, Seeks seeks, Executor executor) {
        this.config = config;
        this.metrics = metrics;
        this.storage = storage;
        this.fetcher = fetcher;
        this.lists = lists;
        this.scheduler = scheduler;
        this.readAhead = readAhead;
        this.seeks = seeks;
        this.executor = executor;
        this.gets = new Semaphore(config.maxConcurrentFetches());
    }

    /** The cache key of the member with SHA-256 {@code hash}: block 0 of the blob whose id it is. */
    static BlockKey key(BlobId hash) {
        return new BlockKey(hash, MEMBER_BLOCK_SIZE, 0);
    }

    // ---------------------------------------------------------------- by hash: steps 1 and 2

    /**
     * Serves {@code [offset, offset + n)} of the member into {@code dst[at, at + n)} by its hash,
     * without touching its own blob: from the member cached under its hash, else from the cached
     * blocks of another blob that holds the same bytes.
     *
     * @return whether it was served (false: neither is cached; {@code dst} may have been written)
     */
    boolean readByHash(BlobMember m, long offset, ByteBuffer dst, int at, int n) {
        if (m.length() <= MEMBER_BLOCK_SIZE) {
            BlockKey key = key(m.hash());
            if (storage.length(key) == m.length() && storage.read(key, (int) offset, dst, at, n)) {
                metrics.memberHits.increment();
                metrics.hitBytes.add(n);
                return true;
            }
        }
        MemberLocator.Location l = locator.find(m.hash());
        if (l == null || l.length != m.length() || (l.offset == m.offset() && l.blob.id().equals(m.blob().id()))) {
            // Unknown, or known only where this very read would look next (its own blocks).
            return false;
        }
        if (readLocated(l, offset, dst, at, n)) {
            metrics.dedupHits.increment();
            metrics.hitBytes.add(n);
            return true;
        }
        locator.forget(l);
        return false;
    }

    /** Reads from another blob's cached blocks, once they are known to hash to the member. */
    private boolean readLocated(MemberLocator.Location l, long offset, ByteBuffer dst, int at, int n) {
        BlockHashList list = lists.getIfPresent(l.blob.blocks());
        if (list == null) {
            list = lists.readFromDisk(l.blob.blocks());
        }
        if (list == null || list.blobSize() != l.blob.size() || !(l.verified || verify(l, list))) {
            return false;
        }
        int bs = list.blockSize();
        long from = l.offset + offset;
        long end = from + n;
        for (int b = (int) (from / bs); b <= (int) ((end - 1) / bs); b++) {
            long blockStart = (long) b * bs;
            long pos = Math.max(from, blockStart);
            int take = (int) (Math.min(end, blockStart + list.blockLength(b)) - pos);
            if (!storage.read(new BlockKey(l.blob.id(), bs, b), (int) (pos - blockStart), dst, at + (int) (pos - from),
                    take)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Hashes the located bytes (from cached blocks only) and compares them with the member's
     * hash, once per location: the blocks were verified against their own blob's hash list, but
     * only the member index that named the location says they are this member.
     */
    private boolean verify(MemberLocator.Location l, BlockHashList list) {
        synchronized (l) {
            if (l.verified) {
                return true;
            }
            Hashing h = hashing.get();
            h.md.reset();
            int bs = list.blockSize();
            long pos = l.offset;
            long end = l.offset + l.length;
            while (pos < end) {
                int b = (int) (pos / bs);
                long blockStart = (long) b * bs;
                int take = (int) Math.min(Math.min(end, blockStart + list.blockLength(b)) - pos, h.scratch.capacity());
                if (!storage.read(new BlockKey(l.blob.id(), bs, b), (int) (pos - blockStart), h.scratch, 0, take)) {
                    return false;
                }
                h.md.update(h.scratch.array(), 0, take);
                pos += take;
            }
            if (!l.hashes(h.digest())) {
                warn(() -> LOG.warn("Bytes [{}, +{}) of blob {} do not hash to the member a member index placed there;"
                        + " not serving them for other datasets", l.offset, l.length, l.blob.id()));
                return false;
            }
            l.verified = true;
            return true;
        }
    }

    /** Remembers where a member was served from blocks, for other blobs holding the same bytes. */
    void remember(BlobMember m) {
        locator.remember(m.hash(), m.blob(), m.offset(), m.length());
    }

    // ---------------------------------------------------------------- fetched on its own: step 4

    /**
     * Serves the read by fetching the member on its own (or waiting for that fetch, already
     * under way), if it is small and read at random: not continuing a sequential stream of its
     * blob, none of its blocks already in flight, the blob not being fetched whole, and the mode
     * fetches members (auto, remote; hybrid fetches whole blobs at first touch instead).
     *
     * @return whether it was served (false: the block path should read it)
     * @throws MemberVerificationException if the member's bytes failed verification twice
     * @throws io.warpdata.store.StoreException if it could not be fetched within the deadline
     */
    boolean fetch(BlobMember m, BlockHashList list, long offset, ByteBuffer dst, int at, int n, long deadline) {
        if (m.length() > MAX_FETCH_BYTES || readAhead == null || config.mode() == CacheMode.HYBRID) {
            return false;
        }
        MemberFetch f = inflight.get(m.hash());
        if (f == null) {
            if (blocksInFlight(m, list)) {
                return false;
            }
            if (readAhead.followsBlocks(m.blob(), list, m.offset() + offset, m.offset() + m.length())) {
                // Sequential: its blocks will serve it. Unless a read of another piece of this very
                // member has just started fetching it (and so made this read look sequential).
                f = inflight.get(m.hash());
                if (f == null) {
                    return readByHash(m, offset, dst, at, n);
                }
            } else {
                MemberFetch mine = new MemberFetch();
                f = inflight.putIfAbsent(m.hash(), mine);
                if (f == null) {
                    start(mine, m, list, deadline);
                    f = mine;
                }
            }
        }
        byte[] bytes;
        try {
            bytes = Deadlines.await(f.done, deadline, () -> "fetching member " + m.hash() + " of blob "
                    + m.blob().id() + " from " + fetcher.store().describe());
        } catch (StoreUnavailableException e) {
            if (!f.done.isDone()) {
                inflight.remove(m.hash(), f); // hung: the next read starts a fresh fetch
            }
            throw e;
        }
        dst.put(at, bytes, (int) offset, n);
        metrics.missBytes.add(n);
        return true;
    }

    /** Whether a block the member lies in is being fetched (not cached yet): the block path then waits for it. */
    private boolean blocksInFlight(BlobMember m, BlockHashList list) {
        int bs = list.blockSize();
        int first = (int) (m.offset() / bs);
        int last = (int) ((m.offset() + Math.max(1, m.length()) - 1) / bs);
        for (int b = first; b <= last; b++) {
            BlockKey k = new BlockKey(m.blob().id(), bs, b);
            if (scheduler.cachedOrInFlight(k) && !storage.contains(k)) {
                return true;
            }
        }
        return false;
    }

    /** Tells read-ahead of the fetch, then runs it on the executor. */
    private void start(MemberFetch mine, BlobMember m, BlockHashList list, long deadline) {
        try {
            // Before the GET, so that a shuffled pass over a shard still counts as one (and may
            // have the blob fetched whole while this member's GET is under way).
            seeks.fetched(m, list);
            executor.execute(() -> run(mine, m, deadline));
        } catch (RejectedExecutionException e) {
            fail(mine, m, new StoreUnavailableException("The fetch executor refused work (shutting down?)", e));
        } catch (RuntimeException | Error e) {
            fail(mine, m, e);
        }
    }

    /** Fetches, checks, hands over and caches a member (never throws: the outcome goes to {@code mine}). */
    private void run(MemberFetch mine, BlobMember m, long deadline) {
        boolean acquired = false;
        try {
            acquired = gets.tryAcquire(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (!acquired) {
                throw new StoreUnavailableException("No member fetch slot within the read deadline for member "
                        + m.hash() + " of blob " + m.blob().id(), null);
            }
            byte[] bytes = new byte[(int) m.length()];
            fetchVerified(m, bytes, deadline);
            metrics.memberFetches.increment();
            mine.done.complete(bytes);
            store(mine, m, bytes);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail(mine, m, new StoreUnavailableException("Interrupted fetching member " + m.hash(), e));
        } catch (RuntimeException | Error e) {
            fail(mine, m, e);
        } finally {
            if (acquired) {
                gets.release();
            }
        }
    }

    private void fail(MemberFetch mine, BlobMember m, Throwable e) {
        // Out of the map first, so that a reader that sees the failure and retries starts afresh.
        inflight.remove(m.hash(), mine);
        mine.done.completeExceptionally(e);
    }

    /** One ranged GET of the member, checked against its hash; a mismatch is fetched once more. */
    private void fetchVerified(BlobMember m, byte[] bytes, long deadline) {
        String key = StoreLayout.blob(m.blob().id());
        for (int attempt = 0; ; attempt++) {
            fetcher.readWithRetry(key, m.offset(), bytes, 0, bytes.length, deadline);
            metrics.memberFetchedBytes.add(bytes.length);
            Hashing h = hashing.get();
            h.md.reset();
            h.md.update(bytes);
            if (MemberLocator.hashes(m.hash(), h.digest())) {
                return;
            }
            metrics.verificationFailures.increment();
            // As a block that fails: the shard's read-ahead holds back until a GET of it verifies.
            readAhead.onVerificationFailure(m.blob().id());
            if (attempt > 0) {
                LOG.warn("Member {} ({} bytes at offset {} of blob {}) from {} failed SHA-256 verification twice;"
                        + " failing the read", m.hash(), m.length(), m.offset(), m.blob().id(), fetcher.store().describe());
                throw new MemberVerificationException(m.blob().id(), m.offset(), m.length(), m.hash());
            }
        }
    }

    /** Writes a fetched (and already handed over) member to the cache; it leaves the in-flight map once cached. */
    private void store(MemberFetch mine, BlobMember m, byte[] bytes) {
        try {
            storage.put(key(m.hash()), m.hash(), bytes, 0, bytes.length, null);
        } catch (RuntimeException e) {
            LOG.warn("Could not cache member {}: {}", m.hash(), e.toString());
        } finally {
            inflight.remove(m.hash(), mine);
        }
    }

    /** Whether no member fetch is under way or waiting to be written. */
    boolean idle() {
        return inflight.isEmpty();
    }

    private void warn(Runnable log) {
        long now = System.nanoTime();
        long last = lastWarn.get();
        if (now - last >= WARN_EVERY_NANOS && lastWarn.compareAndSet(last, now)) {
            log.run();
        }
    }
}
