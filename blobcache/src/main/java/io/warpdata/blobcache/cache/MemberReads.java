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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Archive members read by their own SHA-256 (from the member index), next to the block path: a
 * member cached under its hash serves every dataset and version that holds the same bytes, and
 * a small member read at random is fetched on its own, costing about its size rather than a
 * block. {@link ReadPlan} decides when each is used; {@link ReadExecutor} runs the plan.
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
 *
 * <h2>Members by their own hash (DESIGN section 6, issue 16)</h2>
 * A tar member's read ({@link io.warpdata.blobcache.cache.BlobReader#readMember}) carries, besides its
 * shard and offset, the member's SHA-256 from the member index. {@link ReadPlan} tries, in
 * this order:
 * <ol>
 * <li>the member cached under its hash: block 0 of the blob whose id is the hash
 *     ({@code MemberReads.MEMBER_BLOCK_SIZE} = 1 MiB blocks, so a member of up to 1 MiB is that
 *     whole block), kept by {@code DiskBlocks} / {@code MemoryBlocks} beside the blocks, in the
 *     same files, under the same size limit and eviction; its list id is its own blob id, which
 *     is how {@code cache verify} re-hashes it; a torn or damaged file is a miss, as for blocks
 *     ({@code member_hits});</li>
 * <li>another blob's cached blocks holding the same bytes, found in {@code MemberLocator}
 *     (hash -> blob, offset, length, remembered whenever a member is served from its own
 *     blocks): another dataset, or another version, whose shards pack the same files
 *     differently is served from the first one's cache. The blocks were verified against their
 *     own hash list, but only a member index says those bytes are this member, so a location is
 *     hashed whole once before it serves anything, and forgotten when its blocks are gone or its
 *     bytes do not match ({@code dedup_hits});</li>
 * <li>the member's own blocks when they are all cached (the block path's hits, as before);</li>
 * <li>a member of at most {@code MemberReads.MAX_FETCH_BYTES} = 256 KiB read at random (its
 *     read continues no sequential stream of its shard, none of its blocks is in flight, the
 *     shard is not being fetched whole; auto and remote modes): one ranged GET of exactly its
 *     bytes, checked against its SHA-256 (a mismatch is fetched once more, then the read fails
 *     with {@code MemberVerificationException}), handed to its readers, then cached under its
 *     hash ({@code member_fetches}, {@code member_fetched_bytes}). A cold random read of a
 *     30 KB image costs 30 KB, not a 1 MiB block. A lookup ({@link BlobMember#lookup}: a tensor
 *     of a safetensors file, its header, its tensor hashes) is fetched so up to 1 MiB while its
 *     blob's lookups are sparse (fewer than two a block they touched), and its fetches have the
 *     shard fetched whole only once they have read half of it: 32 random tensors of 16 KiB of a
 *     64 MiB file cost about their own bytes and the file's header, not 32 blocks;</li>
 * <li>else the block path: its shard's blocks with read-ahead.</li>
 * </ol>
 * Steps 1 and 2 need nothing of the member's own shard, not even its block hash list, so a
 * deduplicated read costs no request at all; they come first because either is a disk hit like
 * step 3, and step 3 (with step 4's decision) needs the shard's hash list.
 *
 * <p>How this coexists with block caching: sequential scans stay on blocks. A member fetched on
 * its own is recorded in {@code ReadAhead} as a seek that missed the cache, so the next member
 * of a scan (a tar header further on) continues its stream, opens the window and goes to the
 * blocks, and read-ahead brings large GETs as before: a scan costs one member GET at each
 * stream's start. A shuffled pass is still random access that read-ahead cannot follow; its
 * member fetches count as the missed seeks that make a shard dense (8 of them, and one per 8
 * blocks), and from then on the shard is fetched whole and its members read from blocks, so a
 * shuffled epoch costs each shard once plus the few members fetched before (32 of them in a
 * 256 MiB shard, about 1 MB of 30 KB images), in a few large GETs rather than a GET per member. Hybrid mode fetches shards
 * whole at first touch and fetches no member on its own. Reads served by hash (steps 1-2) are
 * not recorded for the shard: they cost nothing, and a shard read only through another
 * dataset's cache should not be read ahead. A stream that ends exactly at a member's end last
 * read that very member, so reading it again (after its cached copy was evicted) is a seek,
 * not a continuation.
 *
 * <p>Bounds: members cached under their hash count against the cache's size limit (a 4 KiB
 * header per file as blocks have); on disk at most {@code DiskBlocks.MAX_MEMBERS} = 32,768 are
 * indexed (their index entries cost heap the byte limit does not bound; ~13 MiB at most) and the
 * rest kept as {@link SpareMembers}, about 60 bytes each outside the heap (1,048,576 at most); in
 * remote mode each entry weighs {@code MemoryBlocks.ENTRY_HEAP_BYTES} = 256 bytes more than its
 * data. The locator holds at most {@code MemberLocator.SLOTS} = 65,536 locations (~5 MiB) of
 * members up to {@code MemberLocator.MAX_LOCATED_BYTES} = 16 MiB, 4 ways per set, losing a
 * location to a newer one when its set is full. Member GETs run on the fetch executor, at most
 * {@code maxConcurrentFetches} at once (8 MiB of buffers at the default 32, up to 32 MiB when they
 * are all lookups of 1 MiB); readers wait for them
 * until their deadline, single flight by hash.
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

    /** One member's fetch, shared by every reader of it until it is cached. */
    static final class MemberFetch {
        final CompletableFuture<byte[]> done = new CompletableFuture<>();
        /** Whether a mirror served the bytes (else the store did); set before {@link #done} completes. */
        volatile boolean mirrored;
        /**
         * Fetched ahead for an order plan ({@link #prefetch}): set once a reader took the bytes
         * (a read-ahead hit), else the cached member is held until read, as a block read ahead is;
         * null for a reader's own fetch.
         */
        volatile AtomicBoolean ahead;
        /** Run once the fetch ended: cached (or not), or failed ({@link #prefetch}'s caller: its bytes are then in the cache's count). */
        final AtomicReference<Runnable> ended = new AtomicReference<>();

        void ended() {
            Runnable r = ended.getAndSet(null);
            if (r != null) {
                r.run();
            }
        }
        private final java.util.concurrent.atomic.AtomicBoolean started = new java.util.concurrent.atomic.AtomicBoolean();

        /** Whether the caller is the one (of all who claimed it) that must {@link #start} it. */
        boolean toStart() {
            return !started.get() && started.compareAndSet(false, true);
        }
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

    private final ReadMetrics metrics;
    private final BlockStorage storage;
    private final BlockFetcher fetcher;
    private final HashLists lists;
    private final Suspects suspects;
    /** Members whose GETs failed their hash twice that were logged in the last minute. */
    private final OncePerMinute badLogged = new OncePerMinute();
    private final Executor executor;
    private final MemberLocator locator = new MemberLocator();
    private final ConcurrentHashMap<BlobId, MemberFetch> inflight = new ConcurrentHashMap<>();
    private final Semaphore gets;
    private final ThreadLocal<Hashing> hashing = ThreadLocal.withInitial(Hashing::new);
    private final AtomicLong lastWarn = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);

    /**
     * @param suspects told of a member whose bytes failed verification (its shard's read-ahead holds back)
     * @param executor runs member GETs and writes fetched members to the cache
     */
    MemberReads(CacheConfig config, ReadMetrics metrics, BlockStorage storage, BlockFetcher fetcher, HashLists lists,
                Suspects suspects, Executor executor) {
        this.metrics = metrics;
        this.storage = storage;
        this.fetcher = fetcher;
        this.lists = lists;
        this.suspects = suspects;
        this.executor = executor;
        this.gets = new Semaphore(config.maxConcurrentFetches());
    }

    /** The cache key of the member with SHA-256 {@code hash}: block 0 of the blob whose id it is. */
    static BlockKey key(BlobId hash) {
        return new BlockKey(hash, MEMBER_BLOCK_SIZE, 0);
    }

    // ---------------------------------------------------------------- by hash: Source.MemberCached, Source.Located

    /** Whether the member is cached under its hash, with its exact length. */
    boolean cached(BlobMember m) {
        return storage.length(key(m.hash())) == m.length();
    }

    /**
     * Copies {@code [offset, offset + n)} of the member cached under its hash into
     * {@code dst[at, at + n)}; false if it is not there after all (evicted, damaged).
     */
    boolean readCached(BlobMember m, long offset, ByteBuffer dst, int at, int n) {
        return storage.get(key(m.hash()), (int) offset, dst, at, n);
    }

    /** Where the member's bytes were last served from blocks, or null. */
    MemberLocator.Location located(BlobMember m) {
        return locator.find(m.hash());
    }

    /** Forgets a location that could not serve (blocks gone, or bytes that do not hash to the member). */
    void forget(MemberLocator.Location l) {
        locator.forget(l);
    }

    /** Reads from another blob's cached blocks, once they are known to hash to the member; false if they cannot serve. */
    boolean readLocated(MemberLocator.Location l, long offset, ByteBuffer dst, int at, int n) {
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
            if (!storage.get(new BlockKey(l.blob.id(), bs, b), (int) (pos - blockStart), dst, at + (int) (pos - from),
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
                if (!storage.get(new BlockKey(l.blob.id(), bs, b), (int) (pos - blockStart), h.scratch, 0, take)) {
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

    // ---------------------------------------------------------------- fetched on its own: Source.MemberGet

    /** Whether a fetch of the member is under way. */
    boolean inFlight(BlobMember m) {
        return inflight.containsKey(m.hash());
    }

    /**
     * The member's fetch: the one under way, or a new one, which exactly one of its callers
     * ({@link MemberFetch#toStart}) must {@link #start} (single flight by hash).
     */
    MemberFetch claim(BlobMember m) {
        MemberFetch f = inflight.get(m.hash());
        if (f != null) {
            return f;
        }
        MemberFetch mine = new MemberFetch();
        f = inflight.putIfAbsent(m.hash(), mine);
        if (f != null) {
            return f;
        }
        // A fetch that ended between the caller's look at the cache and this claim left the member
        // cached: it is served from there, not fetched again (an order plan's fetches end while
        // their readers decide: 1 file of 256 fetched twice in OrderPrefetchTest).
        // Started first, so that no other claimer starts a GET while the cache is read (review 58).
        if (cached(m) && mine.started.compareAndSet(false, true)) {
            byte[] kept = cachedBytes(m);
            if (kept != null) {
                mine.done.complete(kept);
                inflight.remove(m.hash(), mine);
            } else {
                mine.started.set(false); // gone meanwhile: the caller (or another claimer) fetches it
            }
        }
        return mine;
    }

    /** The member's bytes from the cache, or null if it is not cached whole under its hash (the caller looked). */
    private byte[] cachedBytes(BlobMember m) {
        if (m.length() > MEMBER_BLOCK_SIZE) {
            return null;
        }
        byte[] bytes = new byte[(int) m.length()];
        return readCached(m, 0, ByteBuffer.wrap(bytes), 0, bytes.length) ? bytes : null;
    }

    /**
     * Fetches {@code m} ahead of its reader for an order plan that fetches files
     * ({@link OrderPrefetcher#fileStep}): one ranged GET of exactly its bytes on the executor,
     * checked and cached under its hash as a reader's fetch is, and held out of eviction until
     * read (a block read ahead: {@link BlockStorage#put}); a reader that comes while it is under
     * way waits for it. {@code done} runs when it ends, whichever way.
     *
     * @return false, and {@code done} is not run, if it is cached or being fetched already
     */
    boolean prefetch(BlobMember m, long deadline, Runnable done) {
        if (cached(m) || ownBlocksCached(m)) {
            return false;
        }
        MemberFetch f = claim(m);
        if (!f.toStart()) {
            return false;
        }
        f.ahead = new AtomicBoolean();
        f.ended.set(done); // after the store: what it holds then counts it (review 58, M4)
        start(f, m, deadline);
        return true;
    }

    /**
     * Whether the member's own blocks are all cached, so that its reader reads them
     * ({@link ReadPlan}); false if its shard's block hash list is not in memory (then the member
     * is fetched: the listing that named it loads the list, so this is rare).
     */
    private boolean ownBlocksCached(BlobMember m) {
        BlockHashList list = lists.getIfPresent(m.blob().blocks());
        if (list == null || list.blobSize() != m.blob().size() || m.length() == 0) {
            return false;
        }
        int bs = list.blockSize();
        for (long b = m.offset() / bs; b <= (m.offset() + m.length() - 1) / bs; b++) {
            if (storage.length(new BlockKey(m.blob().id(), bs, (int) b)) < 0) {
                return false;
            }
        }
        return true;
    }

    /** A reader took {@code f}'s bytes: if it was fetched ahead, that is a read-ahead hit, and the member is not held for a reader. */
    void taken(MemberFetch f) {
        AtomicBoolean a = f.ahead;
        if (a != null && !a.get() && a.compareAndSet(false, true)) {
            metrics.prefetchHitBlocks.increment();
        }
    }

    /** Runs a fetch {@link #claim} made on the executor. */
    void start(MemberFetch mine, BlobMember m, long deadline) {
        try {
            executor.execute(() -> run(mine, m, deadline));
        } catch (RejectedExecutionException e) {
            fail(mine, m, new StoreUnavailableException("The fetch executor refused work (shutting down?)", e));
        } catch (RuntimeException | Error e) {
            fail(mine, m, e);
        }
    }

    /**
     * The member's verified bytes, waiting for its fetch until {@code deadline} ({@link MemberFetch#mirrored}
     * then says where they came from).
     *
     * @throws MemberVerificationException if the member's bytes failed verification twice
     * @throws io.warpdata.store.StoreException if it could not be fetched within the deadline
     */
    byte[] await(MemberFetch f, BlobMember m, long deadline) {
        try {
            return Deadlines.await(f.done, deadline, () -> "fetching member " + m.hash() + " of blob "
                    + m.blob().id() + " from " + fetcher.store().describe());
        } catch (StoreUnavailableException e) {
            if (!f.done.isDone()) {
                inflight.remove(m.hash(), f); // hung: the next read starts a fresh fetch
            }
            throw e;
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
            // A mirror's blocks around the member are kept before it is handed over (about 1 ms
            // of hashing and a write): handed over first, a single reader's next member in the
            // same block asked the mirror for that block again before it was written (3 blocks
            // of 32 more in RemoteTiersTest, measured in session 26).
            mine.mirrored = fetchVerified(m, bytes, deadline);
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
        mine.ended();
    }

    /**
     * One ranged GET of the member, checked against its hash; a mismatch is fetched once more.
     *
     * @return whether a mirror served it (else the store did)
     */
    private boolean fetchVerified(BlobMember m, byte[] bytes, long deadline) {
        String key = StoreLayout.blob(m.blob().id());
        if (fetcher.fromRemotes(key, m.offset(), bytes, 0, bytes.length, BlockHashList.DEFAULT_BLOCK_SIZE,
                m.blob().size(), (d, o, l) -> hashes(m, d, o, l), (at, d, l) -> keepBlocks(m, at, d, l, deadline),
                deadline)) {
            return true;
        }
        if (suspects.memberWaiting(m.hash())) {
            // Its bytes came wrong again and again moments ago: failed at once, no GET.
            throw new MemberVerificationException(m.blob().id(), m.offset(), m.length(), m.hash());
        }
        for (int attempt = 0; ; attempt++) {
            fetcher.readWithRetry(key, m.offset(), bytes, 0, bytes.length, deadline);
            metrics.memberFetchedBytes.add(bytes.length);
            if (hashes(m, bytes, 0, bytes.length)) {
                return false;
            }
            metrics.verificationFailures.increment();
            // As a block that fails: the shard's read-ahead holds back until a GET of it verifies.
            suspects.failed(m.blob().id());
            if (attempt > 0) {
                suspects.memberFailedTwice(m.hash());
                if (badLogged.first(m.hash())) {
                    LOG.warn("Member {} ({} bytes at offset {} of blob {}) from {} failed SHA-256 verification twice;"
                            + " failing the read (logged once a minute per member)", m.hash(), m.length(), m.offset(),
                            m.blob().id(), fetcher.store().describe());
                }
                throw new MemberVerificationException(m.blob().id(), m.offset(), m.length(), m.hash());
            }
        }
    }

    /**
     * Keeps the whole blocks a mirror served around a member, each verified against the shard's
     * block hash list, so that the shard's other members are read from them ({@link Source}'s own
     * blocks) instead of asking the mirror for the same block again: a shuffled pass over 3,000
     * files of 16 KB asked one node's mirror for block 0 of their shard 13 times, 2x the dataset
     * (audit 26). Only with the list in memory (a member read fetches none): its load is started
     * for the reads that follow. A block that fails its hash is not kept (the member was checked).
     */
    private void keepBlocks(BlobMember m, long at, byte[] data, int len, long deadline) {
        BlockHashList list = lists.getIfPresent(m.blob().blocks());
        if (list == null) {
            lists.loading(m.blob(), deadline);
            return;
        }
        int bs = list.blockSize();
        if (bs != BlockHashList.DEFAULT_BLOCK_SIZE || list.blobSize() != m.blob().size() || at % bs != 0) {
            return;
        }
        int first = (int) (at / bs);
        int pos = 0;
        for (int b = first; b < list.blockCount() && pos < len; b++) {
            int bl = list.blockLength(b);
            if (pos + bl > len) {
                break;
            }
            BlockKey k = new BlockKey(m.blob().id(), bs, b);
            if (storage.length(k) < 0 && list.verify(b, data, pos, bl)) {
                storage.put(k, m.blob().blocks(), data, pos, bl, null);
            }
            pos += bl;
        }
    }

    private boolean hashes(BlobMember m, byte[] data, int off, int len) {
        Hashing h = hashing.get();
        h.md.reset();
        h.md.update(data, off, len);
        return MemberLocator.hashes(m.hash(), h.digest());
    }

    /** Writes a fetched (and already handed over) member to the cache; it leaves the in-flight map once cached. */
    private void store(MemberFetch mine, BlobMember m, byte[] bytes) {
        try {
            storage.put(key(m.hash()), m.hash(), bytes, 0, bytes.length, mine.ahead);
        } catch (RuntimeException e) {
            LOG.warn("Could not cache member {}: {}", m.hash(), e.toString());
        } finally {
            inflight.remove(m.hash(), mine);
            mine.ended();
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
