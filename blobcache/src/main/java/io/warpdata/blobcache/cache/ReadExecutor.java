package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs read plans: asks {@link ReadPlan} where a read's bytes come from, takes them from there,
 * tells read-ahead and order plans of the read, and hands the blocks they advise to the
 * {@link FetchScheduler}. The one place that counts reads by source: each read once under its
 * {@link ReadSource} and each byte once under the source that served it ({@link #served},
 * {@link #blockHit}, {@link #blockMiss}), with the hits, misses, member and dedup hits and read
 * errors. Calls go down only: plan, tiers, member reads, scheduler, read-ahead; none of them calls back.
 */
final class ReadExecutor implements ReadPlan.Holdings {
    /** How long after a block was not kept the disk counts as keeping none ({@link ReadMetrics#diskKeeps}). */
    static final long UNKEPT_WINDOW_NANOS = 10_000_000_000L;
    /** Blocks read ahead of a stream while the disk keeps none: 8 MiB at most, a quarter of the memory tier. */
    static final int UNKEPT_READ_AHEAD_BLOCKS = 8;

    private static final Logger LOG = LoggerFactory.getLogger(ReadExecutor.class);
    /** Shards whose member index disagreed with them ({@link #servedByBlocks}): logged once each. */
    private final java.util.Set<io.warpdata.manifest.BlobId> disagreeing = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** Local-mode misses are logged at most this often: one line tells the user what to do. */
    static final Duration NOT_CACHED_LOG_EVERY = Duration.ofSeconds(10);

    private final CacheConfig config;
    private final ReadMetrics metrics;
    private final HashLists lists;
    private final BlockStorage tiers;
    private final FetchScheduler scheduler;
    /** Null when the cache never fetches (local mode). */
    private final ReadAhead readAhead;
    /** Null when order plans are not possible. */
    private final OrderPrefetcher orders;
    private final MemberReads members;
    private final WholeBlobReads wholeReads;
    private final Suspects suspects;
    private final long deadlineNanos;
    private final AtomicLong lastNotCachedLog = new AtomicLong(System.nanoTime() - NOT_CACHED_LOG_EVERY.toNanos());
    private final ThreadLocal<ArrayList<Fetch>> pendingScratch = ThreadLocal.withInitial(ArrayList::new);
    /** Loads a blob's block hash list in the background ({@link HashListPrefetcher}); returns at once. */
    private final Consumer<BlobRef> listLoader;

    ReadExecutor(CacheConfig config, ReadMetrics metrics, HashLists lists, BlockStorage tiers, FetchScheduler scheduler,
                 ReadAhead readAhead, OrderPrefetcher orders, MemberReads members, WholeBlobReads wholeReads,
                 Suspects suspects, Consumer<BlobRef> listLoader) {
        this.config = config;
        this.metrics = metrics;
        this.lists = lists;
        this.tiers = tiers;
        this.scheduler = scheduler;
        this.readAhead = readAhead;
        this.orders = orders;
        this.members = members;
        this.wholeReads = wholeReads;
        this.suspects = suspects;
        this.listLoader = listLoader;
        this.deadlineNanos = config.retry().readDeadline().toNanos();
    }

    // ---------------------------------------------------------------- counting, in one place

    /** What is counted of a plan's source. */
    static ReadSource kind(Source source) {
        return switch (source) {
            case Source.MemberCached c -> ReadSource.MEMBER_CACHED;
            case Source.Located l -> ReadSource.LOCATED;
            case Source.OwnBlocks o -> ReadSource.OWN_BLOCKS;
            case Source.AwaitMember a -> ReadSource.AWAIT_MEMBER;
            case Source.MemberGet g -> ReadSource.MEMBER_GET;
            case Source.Blocks b -> ReadSource.BLOCKS;
            case Source.WholeBlob w -> ReadSource.WHOLE_INDEX;
        };
    }

    /**
     * Counts a read of {@code bytes} served whole by {@code source} ({@code mirrored}: its fetch
     * was a mirror's). Reads through blocks count their bytes block by block instead
     * ({@link #blockHit}, {@link #blockMiss}) and only the read here, with {@code bytes} 0.
     */
    private void served(Source source, int bytes, boolean mirrored) {
        ReadSource kind = mirrored ? ReadSource.MIRROR : kind(source);
        metrics.sourceRead(kind);
        if (bytes > 0) {
            metrics.sourceBytes(kind, bytes);
        }
        switch (source) {
            case Source.MemberCached c -> {
                metrics.memberHits.increment();
                metrics.hitBytes.add(bytes);
            }
            case Source.Located l -> {
                metrics.dedupHits.increment();
                metrics.hitBytes.add(bytes);
            }
            case Source.MemberGet g -> metrics.missBytes.add(bytes);
            case Source.AwaitMember a -> metrics.missBytes.add(bytes);
            case Source.WholeBlob w -> metrics.missBytes.add(bytes);
            // Counted block by block, as a local tier's hit or a fetch's miss:
            case Source.OwnBlocks o -> { }
            case Source.Blocks b -> { }
        }
    }

    /** A block's bytes served by a local tier, in a read through blocks of kind {@code kind}. */
    private void blockHit(ReadSource kind, int bytes) {
        metrics.hitBlocks.increment();
        metrics.hitBytes.add(bytes);
        metrics.sourceBytes(kind, bytes);
    }

    /** A block's bytes served by its fetch (a mirror or the store), in a read through blocks of kind {@code kind}. */
    private void blockMiss(ReadSource kind, int bytes, boolean mirrored) {
        metrics.missBlocks.increment();
        metrics.missBytes.add(bytes);
        metrics.sourceBytes(mirrored ? ReadSource.MIRROR : kind, bytes);
    }

    // ---------------------------------------------------------------- reads

    /** Reads {@code n} bytes of the blob at {@code offset} into {@code dst[dstOff, ...)} through its blocks. */
    void read(BlobRef blob, long offset, ByteBuffer dst, int dstOff, int n) {
        long deadline = System.nanoTime() + deadlineNanos;
        try {
            BlockHashList list = lists.get(blob, deadline, config.mode().fetches());
            boolean mirrored = readBlocks(blob, list, offset, dst, dstOff, n, deadline, ReadSource.BLOCKS, null);
            metrics.sourceRead(mirrored ? ReadSource.MIRROR : ReadSource.BLOCKS);
        } catch (RuntimeException e) {
            metrics.readErrors.increment();
            throw e;
        }
    }

    /** Reads {@code n} bytes at {@code offset} of the member into {@code dst[at, ...)}, from where its plan says. */
    void readMember(BlobMember m, long offset, ByteBuffer dst, int at, int n) {
        long deadline = System.nanoTime() + deadlineNanos;
        try {
            Source s = ReadPlan.member(m, offset, n, this, null);
            while (!run(s, m, offset, dst, at, n, deadline)) {
                s = ReadPlan.member(m, offset, n, this, s); // it did not hold the bytes after all: the next
            }
        } catch (RuntimeException e) {
            metrics.readErrors.increment();
            throw e;
        }
    }

    /** Serves the read from {@code s}; false if {@code s} turned out not to hold the bytes. */
    private boolean run(Source s, BlobMember m, long offset, ByteBuffer dst, int at, int n, long deadline) {
        long from = m.offset() + offset;
        boolean mirrored = false;
        switch (s) {
            case Source.MemberCached c -> {
                if (!members.readCached(m, offset, dst, at, n)) {
                    return false;
                }
            }
            case Source.Located l -> {
                if (!members.readLocated(l.location(), offset, dst, at, n)) {
                    members.forget(l.location());
                    return false;
                }
            }
            case Source.AwaitMember a -> {
                try {
                    mirrored = copyMember(members.claim(m), m, a.list(), offset, dst, at, n, deadline);
                } catch (MemberVerificationException disagrees) {
                    return servedByBlocks(m, a.list(), from, dst, at, n, deadline, disagrees);
                }
            }
            case Source.MemberGet g -> {
                try {
                    mirrored = copyMember(members.claim(m), m, g.list(), offset, dst, at, n, deadline);
                } catch (MemberVerificationException disagrees) {
                    return servedByBlocks(m, g.list(), from, dst, at, n, deadline, disagrees);
                }
            }
            case Source.OwnBlocks o -> {
                // Follows the order plan itself; its bytes are counted block by block.
                served(s, 0, readBlocks(m.blob(), o.list(), from, dst, at, n, deadline, ReadSource.OWN_BLOCKS, m.next()));
                remember(m, offset);
                return true;
            }
            case Source.Blocks b -> {
                try {
                    served(s, 0, readBlocks(m.blob(), b.list(), from, dst, at, n, deadline, ReadSource.BLOCKS, m.next()));
                } catch (BlockVerificationException bad) {
                    return servedOnItsOwn(m, b.list(), offset, dst, at, n, deadline, bad);
                }
                remember(m, offset);
                return true;
            }
            case Source.WholeBlob w -> throw new IllegalStateException("a member is never read whole");
        }
        served(s, n, mirrored);
        // Reads served by hash are not told to read-ahead (they cost nothing, and a shard read
        // only through another dataset's cache should not be read ahead); order plans follow
        // every read of a planned file.
        followPlan(m.blob(), from);
        return true;
    }

    /**
     * A member read through its shard's blocks, one of which the store serves wrong (it failed
     * its block hash twice): fetched on its own, checked against its own hash, when the mode and
     * its size allow. Audit 36: once a file's tensor reads were dense enough for its blocks to
     * serve them, one damaged tensor made every intact tensor of its 1 MiB block EIO. Bytes that
     * fail their own hash too fail the read with the block's error.
     */
    private boolean servedOnItsOwn(BlobMember m, BlockHashList list, long offset, ByteBuffer dst, int at, int n,
                                   long deadline, BlockVerificationException bad) {
        // The block was recorded bad where it failed (RunFetcher), once: not again here for each
        // reader, nor for a read failed at once because of it (the review: that re-armed its wait
        // at every retry, so it never recovered while a reader kept trying).
        if (!ReadPlan.memberGetAllowed(m, config.mode())) {
            throw bad;
        }
        boolean mirrored;
        try {
            mirrored = copyMember(members.claim(m), m, list, offset, dst, at, n, deadline);
        } catch (RuntimeException alsoFailed) {
            // Its own hash failed too, or the store failed it: the read fails naming the bad block.
            bad.addSuppressed(alsoFailed);
            throw bad;
        }
        served(new Source.MemberGet(list), n, mirrored);
        return true;
    }

    /**
     * A member whose ranged GETs did not hash to its member hash, twice: read through its shard's
     * blocks, checked against the shard's own block hashes, as a read of its shard's cached blocks
     * serves it. The same file then reads the same bytes whatever is cached (a member index whose
     * hash disagrees with its shard failed one way and served the other); bytes that fail the
     * block hashes too still fail the read. Logged once per shard, never remembered by its hash.
     */
    private boolean servedByBlocks(BlobMember m, BlockHashList list, long from, ByteBuffer dst, int at, int n,
                                   long deadline, MemberVerificationException disagrees) {
        boolean mirrored = readBlocks(m.blob(), list, from, dst, at, n, deadline, ReadSource.BLOCKS, m.next());
        if (disagreeing.add(m.blob().id())) {
            LOG.warn("{}; its shard's bytes there pass the shard's block hashes, so the member index disagrees with"
                    + " its shard: served the shard's verified bytes (logged once per shard)", disagrees.getMessage());
        }
        metrics.sourceRead(mirrored ? ReadSource.MIRROR : ReadSource.BLOCKS); // its bytes counted block by block
        return true;
    }

    /** Remembers where a member read from its start was served from blocks, for other blobs with the same bytes. */
    private void remember(BlobMember m, long offset) {
        if (offset == 0) {
            members.remember(m);
        }
    }

    /**
     * Waits for the member's fetch (starting it if this read claimed it) and copies the bytes out.
     *
     * @return whether a mirror served them
     */
    private boolean copyMember(MemberReads.MemberFetch f, BlobMember m, BlockHashList list, long offset, ByteBuffer dst,
                            int at, int n, long deadline) {
        if (f.toStart()) {
            // Before the GET, so that a shuffled pass over a shard still counts as one (and may
            // have the blob fetched whole while this member's GET is under way); lookups count by
            // their own rule (ReadAhead.LOOKUP_DENSE_FRACTION).
            // A file of a plan by file is no random read of its shard: counted, its reader's own
            // fetches (before the plan's) made the shard dense and fetched whole (review 58, M6).
            if (!plannedFile(m)) {
                track(m.blob(), list, m.offset(), (int) m.length(), true, m.lookup(), m.next());
            }
            members.start(f, m, deadline);
        }
        dst.put(at, members.await(f, m, deadline), (int) offset, n);
        members.taken(f);
        return f.mirrored;
    }

    /**
     * An index read: whole in one GET at first touch ({@link ReadPlan#indexWhole}), else null
     * (the caller reads it through its blocks).
     */
    byte[] readIndexWhole(BlobRef blob) {
        if (!ReadPlan.indexWhole(blob, lists.knownHere(blob.blocks()), config.mode())) {
            return null;
        }
        try {
            WholeBlobReads.Whole whole = wholeReads.read(blob, System.nanoTime() + deadlineNanos);
            served(Source.WholeBlob.INSTANCE, whole.data().length, whole.mirrored());
            return whole.data();
        } catch (RuntimeException e) {
            metrics.readErrors.increment();
            throw e;
        }
    }

    /**
     * An index read whole at first touch, handed to {@code sink} ({@link WholeBlobReads#readInto}:
     * a pooled buffer for an index of one block); false if it is to be read through its blocks.
     */
    boolean readIndexWhole(BlobRef blob, boolean keepBlocks, BlobReader.IndexSink sink) {
        if (!ReadPlan.indexWhole(blob, lists.knownHere(blob.blocks()), config.mode())) {
            return false;
        }
        try {
            boolean mirrored = wholeReads.readInto(blob, System.nanoTime() + deadlineNanos, keepBlocks, sink);
            served(Source.WholeBlob.INSTANCE, (int) blob.size(), mirrored);
            return true;
        } catch (RuntimeException e) {
            metrics.readErrors.increment();
            throw e;
        }
    }

    /**
     * Order plans follow every read of a planned file, whichever way it was served; a plan that
     * waited for its reader and may go on now is followed again by the scheduler.
     */
    private void followPlan(BlobRef blob, long offset) {
        if (orders != null && orders.onRead(blob, offset)) {
            scheduler.followPlans();
        }
    }

    /**
     * A scan's read-ahead reached the end of its shard ({@link ReadAhead#SCAN_ENDS}): the shard it
     * goes on into is read ahead from its start, with the scan's window ({@link ReadAhead#prime}).
     * Its block hash list is normally in memory (asked for at this shard's first read, or loaded
     * by the listing): then this runs on the reader's thread and only queues. A list not there
     * yet (a shard primed whole says SCAN_ENDS at its first read, with the next list just asked
     * for) is awaited on the loader's thread, and the shard primed when it arrives; the reader
     * never waits for it. A list that cannot be loaded leaves the shard to be read as before.
     */
    private void readAheadInto(BlobRef next, int window) {
        BlockHashList list = lists.getIfPresent(next.blocks());
        if (list != null) {
            prime(next, list, window);
            return;
        }
        lists.loading(next, System.nanoTime() + deadlineNanos).whenComplete((loaded, failed) -> {
            try {
                if (loaded != null) {
                    prime(next, loaded, window);
                } else {
                    LOG.debug("not reading shard {} ahead: its block hash list did not load ({})", next.id(), failed.toString());
                }
            } catch (RuntimeException e) {
                LOG.debug("not reading shard {} ahead: {}", next.id(), e.toString()); // read-ahead only
            }
        });
    }

    private void prime(BlobRef next, BlockHashList list, int window) {
        if (list.blobSize() != next.size()) {
            return; // the scan's own read of it will say what is wrong
        }
        int blocks = readAhead.prime(next, list, window);
        if (blocks > 0) {
            readAhead.scheduled(next.id(), blocks, readAheadBlocks(next, list, 0, blocks));
        }
    }

    /**
     * Reads blocks {@code [from, to)} of the blob ahead: the cached ones from disk into the page
     * cache (the kernel's read-ahead stops at each block file's end), the rest queued as
     * read-ahead fetches. Returns how far the read-ahead budget let them be queued.
     */
    private int readAheadBlocks(BlobRef blob, BlockHashList list, int from, int to) {
        for (int b = from; b < to; b++) {
            tiers.willNeed(new BlockKey(blob.id(), list.blockSize(), b));
        }
        return Math.min(to, scheduler.schedulePrefetch(blob, list, from, to));
    }

    /**
     * Reads {@code n} bytes at {@code offset} (inside the blob) through its blocks into
     * {@code dst[dstOff, ...)}: each block from the first local tier holding it, else from its
     * fetch (the one in flight, or a new one queued on demand). Counts the bytes under
     * {@code kind} (or {@link ReadSource#MIRROR}), not the read.
     *
     * @return whether a mirror served any of the fetched blocks
     */
    private boolean readBlocks(BlobRef blob, BlockHashList list, long offset, ByteBuffer dst, int dstOff, int n,
                               long deadline, ReadSource kind, BlobRef next) {
        long end = offset + n;
        boolean mirrored = false;
        ArrayList<Fetch> pending = pendingScratch.get();
        try {
            int bs = list.blockSize();
            int first = (int) (offset / bs);
            int last = (int) ((end - 1) / bs);
            // Blocks under 1 MiB that this read needs go out in runs (FetchScheduler.demandRuns),
            // asked for once every block was looked at, so that a block that failed twice moments
            // ago fails the read before any run fetches it (the review); the read waits for the
            // runs' own fetches, so what they bring counts as fetched, not as hits. Blocks of
            // 1 MiB or more are a GET each, side by side.
            boolean inRuns = last > first && bs < FetchScheduler.DEMAND_RUN_BYTES;
            java.util.BitSet missing = null;
            for (int b = first; b <= last; b++) {
                long blockStart = (long) b * bs;
                long from = Math.max(offset, blockStart);
                int take = (int) (Math.min(end, blockStart + list.blockLength(b)) - from);
                BlockKey key = new BlockKey(blob.id(), bs, b);
                if (tiers.get(key, (int) (from - blockStart), dst, dstOff + (int) (from - offset), take)) {
                    blockHit(kind, take);
                } else if (!config.mode().fetches()) {
                    throw notCached(blob, b);
                } else {
                    Suspects.Bad bad = suspects.waiting(blob.id(), b);
                    if (bad != null) {
                        // Served wrong again and again, moments ago: failed at once, not fetched again (audit 38).
                        throw new BlockVerificationException(blob.id(), b, bad.times(),
                                (System.nanoTime() - bad.failedAt()) / 1_000_000_000L,
                                Suspects.retryAfterNanos(bad.times()) / 1_000_000_000L);
                    }
                    if (inRuns) {
                        if (missing == null) {
                            missing = new java.util.BitSet(last - first + 1);
                        }
                        missing.set(b - first);
                    } else {
                        pending.add(scheduler.demand(blob, list, key));
                    }
                }
            }
            if (missing != null) {
                scheduler.demandRuns(blob, list, first, missing, pending);
                for (int i = missing.nextSetBit(0); i >= 0; i = missing.nextSetBit(i + 1)) {
                    pending.add(scheduler.demand(blob, list, new BlockKey(blob.id(), bs, first + i)));
                }
            }
            track(blob, list, offset, n, !pending.isEmpty(), false, next);
            followPlan(blob, offset);
            for (Fetch f : pending) {
                long blockStart = (long) f.key.index() * bs;
                long from = Math.max(offset, blockStart);
                int take = (int) (Math.min(end, blockStart + list.blockLength(f.key.index())) - from);
                mirrored |= copyFromFetch(f, (int) (from - blockStart), dst, dstOff + (int) (from - offset), take,
                        deadline, kind);
            }
            return mirrored;
        } finally {
            pending.clear();
        }
    }

    /**
     * Tells read-ahead of a read of the blob ({@code missed}: not all of it was cached), queues
     * the blocks it advises, and has the blob fetched whole if it says so.
     */
    private void track(BlobRef blob, BlockHashList list, long offset, int n, boolean missed, boolean lookup,
                       BlobRef next) {
        if (readAhead == null) {
            return;
        }
        ReadAhead.Advice advice = readAhead.onRead(blob, list, offset, n, missed, scheduler.runBlocks(list.blockSize()),
                lookup);
        // A disk that keeps no block now (under its free-space floor, or failing writes): what is
        // fetched ahead waits in the 32 MiB memory tier only, and a 64 MiB window pushed it out
        // before its reader came; so read ahead a few blocks only, and fetch no blob whole.
        boolean keeps = diskKeeps();
        if (advice.fetchAhead()) {
            // Unkept: no further than a few blocks past this read; read-ahead asks again from there.
            int to = keeps ? advice.to() : Math.max(advice.from(), Math.min(advice.to(),
                    (int) ((offset + n - 1) / list.blockSize()) + 1 + UNKEPT_READ_AHEAD_BLOCKS));
            readAhead.scheduled(blob.id(), advice.to(), readAheadBlocks(blob, list, advice.from(), to));
        }
        if (next != null && keeps) {
            if ((advice.flags() & ReadAhead.FIRST) != 0 && lists.getIfPresent(next.blocks()) == null) {
                // The next shard's list, asked for at this shard's first read, is in memory by
                // the time a scan reaches its end (a listing loads only the first shards' lists).
                listLoader.accept(next);
            }
            if ((advice.flags() & ReadAhead.SCAN_ENDS) != 0) {
                readAheadInto(next, advice.window());
            }
        }
        // Hybrid fetches every blob whole at its first read; auto only one read densely at random.
        CacheMode mode = config.mode();
        if (keeps && (mode == CacheMode.HYBRID ? (advice.flags() & ReadAhead.FIRST) != 0
                : mode == CacheMode.AUTO && (advice.flags() & ReadAhead.DENSE_RANDOM) != 0)) {
            if (mode == CacheMode.AUTO) {
                metrics.denseRandomBlobs.increment();
            }
            scheduler.fetchWhole(blob, list);
        }
    }

    /**
     * Waits for a block's fetch and copies the wanted part out; retries via the tiers if told to.
     *
     * @return whether a mirror served the block
     */
    private boolean copyFromFetch(Fetch f, int inBlock, ByteBuffer dst, int out, int take, long deadline,
                                  ReadSource kind) {
        while (true) {
            Fetch.BlockBytes bb = scheduler.await(f, deadline);
            boolean fetched = bb != Fetch.RETRY;
            if (fetched && bb.run().retain()) {
                try {
                    dst.put(out, bb.run().array, bb.offset() + inBlock, take);
                } finally {
                    bb.run().release();
                }
                blockMiss(kind, take, bb.mirrored());
                return bb.mirrored();
            }
            // Cached meanwhile, or fetched for us and cached, its buffer already reused: read it
            // from the tiers (or, if it could not be kept, fetch it again).
            if (tiers.get(f.key, inBlock, dst, out, take)) {
                if (fetched) {
                    blockMiss(kind, take, bb.mirrored());
                    return bb.mirrored();
                }
                blockHit(kind, take);
                return false;
            }
            f = scheduler.demand(f.blob, f.list, f.key);
        }
    }

    /** The local-mode miss, logged at most every {@link #NOT_CACHED_LOG_EVERY} (never per read). */
    private BlockNotCachedException notCached(BlobRef blob, int block) {
        BlockNotCachedException e = new BlockNotCachedException("Block " + block + " of blob " + blob.id());
        long now = System.nanoTime();
        long last = lastNotCachedLog.get();
        if (now - last >= NOT_CACHED_LOG_EVERY.toNanos() && lastNotCachedLog.compareAndSet(last, now)) {
            LOG.warn("{}. {}", e.getMessage(), e.nextStep());
        }
        return e;
    }

    // ---------------------------------------------------------------- ReadPlan.Holdings

    @Override
    public boolean memberCached(BlobMember m) {
        return members.cached(m);
    }

    @Override
    public MemberLocator.Location located(BlobMember m) {
        return members.located(m);
    }

    @Override
    public BlockHashList list(BlobRef blob) {
        return lists.get(blob, System.nanoTime() + deadlineNanos, config.mode().fetches());
    }

    @Override
    public boolean blocksCached(BlobRef blob, BlockHashList list, long from, int n) {
        int bs = list.blockSize();
        for (int b = (int) (from / bs); b <= (int) ((from + n - 1) / bs); b++) {
            if (!tiers.contains(new BlockKey(blob.id(), bs, b))) {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean plannedFile(BlobMember m) {
        return orders != null && orders.plannedFile(m.blob(), m.offset());
    }

    @Override
    public boolean memberInFlight(BlobMember m) {
        return members.inFlight(m);
    }

    @Override
    public boolean blocksInFlight(BlobMember m, BlockHashList list) {
        int bs = list.blockSize();
        int first = (int) (m.offset() / bs);
        int last = (int) ((m.offset() + Math.max(1, m.length()) - 1) / bs);
        for (int b = first; b <= last; b++) {
            BlockKey k = new BlockKey(m.blob().id(), bs, b);
            if (scheduler.inFlight().cachedOrInFlight(k) && !tiers.contains(k)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public boolean blockFailed(BlobMember m, BlockHashList list) {
        int bs = list.blockSize();
        return suspects.badBlock(m.blob().id(), (int) (m.offset() / bs),
                (int) ((m.offset() + Math.max(1, m.length()) - 1) / bs));
    }

    @Override
    public boolean followsBlocks(BlobMember m, BlockHashList list, long from) {
        return readAhead != null && readAhead.followsBlocks(m.blob(), list, from, m.offset() + m.length(), m.lookup());
    }

    @Override
    public boolean diskKeeps() {
        return metrics.diskKeeps(UNKEPT_WINDOW_NANOS);
    }

    @Override
    public CacheMode mode() {
        return config.mode();
    }
}
