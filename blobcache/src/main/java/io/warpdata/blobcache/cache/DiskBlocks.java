package io.warpdata.blobcache.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import io.warpdata.manifest.BlobId;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static io.warpdata.blobcache.cache.CacheDirectory.closeQuietly;
import static io.warpdata.blobcache.cache.CacheDirectory.deleteFile;

/**
 * Blocks on disk, one file per block ({@link BlockFile}), in a {@link CacheDirectory}. A block
 * is written to {@code tmp/} and renamed into place only when complete, so a crash (kill -9)
 * never leaves a torn block under its real name; a power loss may, but then the file size,
 * header checksum or chunk CRC32C gives it away and it is treated as a miss. Hence no fsync per
 * block.
 *
 * <p>The index of what is cached lives in memory and is rebuilt at start from every valid
 * block file's header ({@link CacheDirectory#recover}). Eviction is Caffeine's W-TinyLFU over a
 * byte weigher: a small recency window plus frequency-based admission. ML training reads the
 * same dataset once per epoch; when the dataset is larger than the cache, LRU evicts every block
 * just before its next use (hit rate 0), while TinyLFU keeps a stable, frequently used part
 * resident. An evicted block's file is deleted inside the index's per-key lock, as are renames
 * into place, so a delete never races a rewrite of the same block.
 *
 * <p>Readers use a bounded cache of open FileChannels. A block being read is pinned: eviction
 * unlinks its file at once (an open file stays readable on Linux) but closes its channel only
 * when the last reader leaves. A read that still loses a race (its channel closed by the
 * open-file bound or by an interrupt) reopens the file; if the file is gone, the block is a miss
 * and is fetched again: never an error, never wrong bytes.
 *
 * <p>Writes keep a free-space floor on the file system ({@link FreeSpaceFloor}); a file is
 * written to {@code tmp/} by {@link DiskWrites} and renamed into place here.
 *
 * <p>Archive members cached under their own SHA-256 ({@link MemberReads}) are block 0 of the
 * blob whose id is that hash, in the same files, index and eviction: they count against the
 * same size limit and go by the same policy. Their entries are marked by a list id equal to the
 * blob id (verified by it), and at most {@link #MAX_MEMBERS} are indexed: each costs heap for its
 * index entry, which the byte limit does not bound when members are small. Those the bound lets
 * go of stay on disk, in room the index does not use, as {@link SpareMembers} (an eighth to a quarter of
 * an index entry's heap each), and go back into the index when read.
 */
final class DiskBlocks implements BlockStorage {
    private static final Logger LOG = LoggerFactory.getLogger(DiskBlocks.class);
    /**
     * Members cached under their own hash indexed at most: 32,768. An index entry costs about 400
     * bytes of heap (key, entry, Caffeine's nodes, this bound's own node; measured over 20,000
     * members), so the members cost at most ~13 MiB of the heap (384 MiB by default) however
     * small they are, while the byte limit alone would let a 100 GiB cache of 30 KB members hold
     * 3.1 million entries (1.2 GiB of heap). 32,768 members are 1 GB of 30 KB images and up to
     * 8 GiB of 256 KiB ones. Beyond it the least valuable members (W-TinyLFU by count) leave the
     * index for {@link #spare}, or are deleted if it keeps none; blocks are not touched.
     */
    static final int MAX_MEMBERS = 32_768;
    /**
     * Read-ahead blocks not read yet are held out of eviction up to a quarter of the cache (within
     * its limit: the other blocks make room for them)...
     *
     * <p>W-TinyLFU admits a new block only if it has been asked for more often than the block it
     * would push out, and a block read ahead has been asked for by nobody yet: once the cache was
     * full of blocks read once, every block read ahead was evicted as it was written and fetched
     * again when its reader came (audit 51: a 500 MB cache, three files of 700 MB read with
     * {@code cat} one after another fetched up to 1.9x what was read, most of the read-ahead
     * evicted unread; docs/cache.md, "Eviction"). Held out ("pinned"), such a block is kept outside
     * the index until a read reaches its end, and then competes as any block; past the bound the
     * oldest held compete first, and {@code cache gc} and a disk short of room let them go as far
     * as they must.
     */
    static final int PIN_FRACTION = 4;
    /** ...and 256 MiB at most: four full read-ahead windows. */
    static final long PIN_MAX_BYTES = 256L << 20;
    /**
     * The index's bound comes down in steps of an eighth of the pin bound as more is held at once,
     * and goes back up only at gc or when the disk is short of room ({@link #evictTo}): it leaves
     * room for the most held at once. Lowered again as held blocks were read (two steps late),
     * each step down evicted blocks at once, least recently used first and not by frequency; over
     * epochs of a dataset larger than the cache, with a reader slower than read-ahead, that took
     * the blocks kept from the last pass before their turn, and every pass fetched all of it
     * again (audit 52: 629 MB through a 400 MB cache with {@code cat | sha256sum}, 1.00 a pass;
     * now 0.53-0.78). Set at every pin and unpin before that, the bound cost a blocking lock and
     * Caffeine's maintenance twice a block, and each change restarts Caffeine's adaptation of its
     * window (review 52). The price: once read-ahead has held blocks, the other blocks have the
     * most held at once less room (a quarter of the cache, 256 MiB, at most).
     */
    static final int PIN_STEPS = 8;

    private final CacheDirectory dir;
    private final ReadMetrics metrics;
    private final long limit;
    private final FreeSpaceFloor floor;
    private final Cache<BlockKey, DiskEntry> index;
    /**
     * Blocks read ahead and not read yet ({@link DiskEntry#pinned}), outside {@link #index}: the
     * eviction policy sees a block read ahead only once it is read, as it sees a block fetched for
     * a reader when it is placed. Held in the index at weight 0, placing it and weighing it again
     * once read counted two uses against one for a block kept from the last pass, so over epochs
     * of a dataset larger than the cache W-TinyLFU let each pass's read-ahead push out what the
     * last pass kept (docs/cache.md, "Eviction"). A key is in at most one of the two: entries come
     * in and go from here under the index's lock for that key ({@link #place}, {@link #admit},
     * {@link #drop}, {@link #forget}).
     */
    private final ConcurrentHashMap<BlockKey, DiskEntry> held = new ConcurrentHashMap<>();
    /** Uses counted ({@link #use}), not placements: for tests of what counts as one. */
    private final java.util.concurrent.atomic.LongAdder uses = new java.util.concurrent.atomic.LongAdder();
    /** Bytes of {@link DiskEntry#pinned} entries, and the most there may be. */
    private final java.util.concurrent.atomic.AtomicLong pinnedBytes = new java.util.concurrent.atomic.AtomicLong();
    private final long pinBudget;
    /** {@link #pinBudget} / {@link #PIN_STEPS}. */
    private final long pinStep;
    /**
     * What the index's bound leaves for pinned blocks: the most pinned at once, rounded up to a
     * step, raised before a block is pinned, lowered only by gc ({@link #PIN_STEPS}); written
     * under {@link #sizeLock}.
     */
    private volatile long reserved;
    /** Held while the index's bound is set ({@link #raiseReserve}, {@link #resetReserve}, {@link #evictTo}). */
    private final java.util.concurrent.locks.ReentrantLock sizeLock = new java.util.concurrent.locks.ReentrantLock();
    /** A pinned entry and its key, as queued. */
    private record Pinned(BlockKey key, DiskEntry entry) {
    }
    /**
     * The pinned entries, oldest first; ones unpinned by a read or gone since stay until met at the
     * head ({@link #pinOrder}), and the queue holds at most four times the entries pinned, or
     * {@link #MIN_QUEUED}.
     */
    private final Queue<Pinned> pinnedOrder = new ConcurrentLinkedQueue<>();
    private final java.util.concurrent.atomic.AtomicInteger queued = new java.util.concurrent.atomic.AtomicInteger();
    /** Entries pinned now. */
    private final java.util.concurrent.atomic.AtomicInteger pinnedCount = new java.util.concurrent.atomic.AtomicInteger();
    /** One thread at a time drops entries from the queue's head ({@link #pinOrder}). */
    private final java.util.concurrent.atomic.AtomicBoolean trimming = new java.util.concurrent.atomic.AtomicBoolean();
    /** The queue may hold this many entries whatever is pinned. */
    private static final int MIN_QUEUED = 1024;
    /**
     * Blocks on their way between the index, the held ones and the spare members, as one count:
     * those under way in the low bits ({@link #MOVING}), those done above them. A size read with
     * none under way at its start and the count unchanged at its end is exact ({@link #trimExactly}).
     */
    private final java.util.concurrent.atomic.AtomicLong moves = new java.util.concurrent.atomic.AtomicLong();
    private static final long MOVING = (1L << 24) - 1;
    private static final long MOVED = 1L << 24;
    /** A place trimmed the spare members on a size that may have been off: {@link #trimmer} trims again. */
    private final AtomicBoolean trimPending = new AtomicBoolean();
    /** One exact trim at a time ({@link #trimExactly}). */
    private final java.util.concurrent.locks.ReentrantLock trimLock = new java.util.concurrent.locks.ReentrantLock();
    /** The thread of the exact trims, started at the first; it waits {@link #TRIM_DELAY_NANOS} to trim once for a burst of places. */
    private volatile Thread trimmer;
    private static final long TRIM_DELAY_NANOS = 10_000_000L;
    private final Cache<BlockKey, FileChannel> channels;
    /** The member entries of {@link #index}, bounded by count ({@link #MAX_MEMBERS}). */
    private final Cache<BlockKey, Boolean> members;
    /** The bound of {@link #members}. */
    private final int maxMembers;
    /** Members {@link #members} let go of, to be removed from the index outside any cache callback. */
    private final Queue<BlockKey> membersOut = new ConcurrentLinkedQueue<>();
    /**
     * Members the index let go of for its count bound, their files kept in room the index and the
     * held blocks do not use ({@link #trimSpare}); found by {@link #entry} and {@link #contains}.
     */
    private final SpareMembers spare;
    private final ThreadLocal<DiskScratch.Read> scratch = ThreadLocal.withInitial(DiskScratch.Read::new);
    /** Read states of virtual threads (control clients): 8 MiB of direct buffers however many read. */
    private final DiskScratch.ReadPool sharedScratch = new DiskScratch.ReadPool(8);
    private final DiskWrites writes;
    private final Object gcLock = new Object();
    private final PageCacheHints hints = PageCacheHints.shared();
    /** Blocks whose files wait to be read ahead ({@link #willNeed}); made, with its thread, at the first hint. */
    private volatile BlockingQueue<BlockKey> hintQueue;
    /** When a write last looked whether the directory's lock is still this process's ({@link #takenOver}). */
    private volatile long lastLockCheck = System.nanoTime();
    /** Whether another process has taken the directory over: no more writes. */
    private volatile boolean takenOver;
    /** How often running out of inodes is logged at most ({@link #freeFiles}). */
    private static final long INODE_WARN_EVERY_NANOS = 60_000_000_000L;
    /** When running out of inodes was last logged. */
    private final java.util.concurrent.atomic.AtomicLong lastInodeWarn =
            new java.util.concurrent.atomic.AtomicLong(System.nanoTime() - INODE_WARN_EVERY_NANOS);
    /** Out of inodes, the cache gives up this fraction of itself (1/64) so that writes land again. */
    static final int INODE_EVICT_FRACTION = 64;
    /** When a failed write last looked whether the directory was deleted ({@link #remakeIfGone}). */
    private volatile long lastGoneCheck = System.nanoTime() - 2_000_000_000L;
    /** When a failed write first found the directory broken (0: not broken), for {@link #REMAKE_AFTER_NANOS}. */
    private volatile long brokenSince;
    /** How long the directory must stay gone before it is made again: 5 s. */
    static final long REMAKE_AFTER_NANOS = 5_000_000_000L;
    private Thread hintThread;
    /** Told when the directory was made again (the hash lists write back what memory holds). */
    private volatile Runnable onRemade = () -> { };
    /** Hints waiting at most: a 256 MiB read-ahead of 1 MiB blocks. */
    private static final int HINT_QUEUE = 256;
    private volatile boolean closed;

    /**
     * Opens (creating if needed) the cache under {@code dir}, deletes temp files and rebuilds
     * the index by scanning block headers.
     *
     * @param minFreeBytes free-space floor, or {@link CacheConfig#AUTO_FREE_FLOOR}
     * @throws CacheDirectoryException if the directory is unusable or in use by another process
     */
    DiskBlocks(Path dir, long limitBytes, long minFreeBytes, int maxOpenFiles, ReadMetrics metrics, DiskSpace space) {
        this(dir, limitBytes, minFreeBytes, maxOpenFiles, metrics, space, MAX_MEMBERS, SpareMembers.defaultMax());
    }

    /** As above, indexing at most {@code maxMembers} members cached under their own hash and keeping no spare ones. */
    DiskBlocks(Path dir, long limitBytes, long minFreeBytes, int maxOpenFiles, ReadMetrics metrics, DiskSpace space,
               int maxMembers) {
        this(dir, limitBytes, minFreeBytes, maxOpenFiles, metrics, space, maxMembers, 0);
    }

    /** As above, keeping at most {@code maxSpare} more members on disk past the index's bound ({@link SpareMembers}). */
    DiskBlocks(Path dir, long limitBytes, long minFreeBytes, int maxOpenFiles, ReadMetrics metrics, DiskSpace space,
               int maxMembers, int maxSpare) {
        this.spare = new SpareMembers(maxSpare);
        this.maxMembers = maxMembers;
        this.dir = new CacheDirectory(dir);
        this.metrics = metrics;
        this.limit = limitBytes;
        this.floor = new FreeSpaceFloor(space == null ? DiskSpace.of(this.dir.root()) : space, minFreeBytes,
                this::makeRoom);
        this.writes = new DiskWrites(this.dir, floor, metrics);
        this.channels = Caffeine.newBuilder()
                .maximumSize(maxOpenFiles)
                .executor(Runnable::run)
                .removalListener((BlockKey k, FileChannel ch, RemovalCause c) -> closeQuietly(ch))
                .build();
        this.pinBudget = Math.min(limitBytes / PIN_FRACTION, PIN_MAX_BYTES);
        this.pinStep = Math.max(1, pinBudget / PIN_STEPS);
        this.index = Caffeine.newBuilder()
                .maximumWeight(limitBytes)
                .weigher((BlockKey k, DiskEntry e) -> e.weight())
                .executor(Runnable::run)
                .evictionListener(this::onEvicted)
                .build();
        this.members = Caffeine.newBuilder()
                .maximumSize(maxMembers)
                .executor(Runnable::run)
                .evictionListener((BlockKey k, Boolean v, RemovalCause c) -> membersOut.add(k))
                .build();
        rebuild();
    }

    Path listsDir() {
        return dir.listsDir();
    }

    Path tmpDir() {
        return dir.tmpDir();
    }

    /** What every file made in the directory goes through ({@link CacheDirectory#writes}). */
    WriteGate writes() {
        return dir.writes();
    }

    /** {@code v1/} of the cache directory. */
    Path root() {
        return dir.root();
    }

    /** The free space the floor watches. */
    DiskSpace space() {
        return floor.space();
    }

    private void onEvicted(BlockKey key, DiskEntry e, RemovalCause cause) {
        if (e == null) {
            return;
        }
        // Unlinking is safe under a reader (an open file stays readable on Linux); closing its
        // channel is not, so a block being read keeps its channel until the last reader leaves.
        e.evicted = true;
        deleteFile(dir.path(key));
        if (e.readers.get() == 0) {
            channels.invalidate(key);
        }
        if (e.member) {
            members.invalidate(key);
        }
        metrics.evictions.increment();
        metrics.evictedBytes.add(e.weight());
        if (e.prefetchCredit != null && e.prefetchCredit.compareAndSet(false, true)) {
            metrics.prefetchWastedBytes.add(e.length);
        }
    }

    /** Indexes every valid block file the directory recovered, oldest first. */
    private void rebuild() {
        List<CacheDirectory.Found> found = dir.recover();
        // Members past the index's bound go straight to the spare ones, oldest first: indexed first
        // and let go after, a cache of 600,000 members took 240 MB of heap at start (the review).
        long toSpare = found.stream().filter(f -> f.header().listId().equals(f.key().blob())).count() - maxMembers;
        for (CacheDirectory.Found f : found) {
            BlockFile.Header h = f.header();
            boolean member = h.listId().equals(f.key().blob());
            if (member && toSpare-- > 0) {
                SpareMembers.Spare out = spare.add(f.key().blob(), h.dataLength());
                if (out != null) {
                    deleteFile(dir.path(MemberReads.key(out.id()))); // past the spare bound too
                }
                continue;
            }
            DiskEntry e = new DiskEntry(f.key(), h.headerLength(), h.dataLength(), h.crcs(), h.listId(), null);
            index.put(f.key(), e);
            if (e.member) {
                members.put(f.key(), Boolean.TRUE);
            }
        }
        index.cleanUp();
        members.cleanUp();
        dropMembersOut();
        trimSpare();
    }

    @Override
    public boolean get(BlockKey key, int offInBlock, ByteBuffer dst, int dstIndex, int len) {
        DiskEntry e = entry(key);
        if (e == null || offInBlock + len > e.length) {
            return false;
        }
        if (!e.pinned && (e.readEnd < 0 ? offInBlock == 0 : offInBlock != e.readEnd)) {
            // A use, for the eviction policy. The pieces of one scan through the block are one use:
            // counted each, a block read in 8 pieces was 8 times as frequent as it is, every block
            // of a pass looked hot to W-TinyLFU, and over epochs of a dataset larger than the cache
            // the blocks kept from the last pass lost their place to the ones being read. Placing a
            // block counted a use, so the first read after it counts only if it starts the block
            // anew (the reader it was fetched for took its first piece from the fetch); a block
            // held as read ahead is placed in the index when read to its end.
            use(key);
        }
        e.readEnd = offInBlock + len;
        if (e.member) {
            members.getIfPresent(key); // its use, for the members' own eviction
        }
        int c0 = offInBlock / BlockFile.CHUNK;
        int c1 = (offInBlock + len - 1) / BlockFile.CHUNK;
        int start = c0 * BlockFile.CHUNK;
        int span = Math.min((c1 + 1) * BlockFile.CHUNK, e.length) - start;
        if (e.hinted) {
            e.hinted = false; // read: the next pass's read-ahead may hint it again
        }
        e.readers.incrementAndGet();
        try {
            return read(key, e, offInBlock, dst, dstIndex, len, c0, c1, start, span);
        } finally {
            if (e.readers.decrementAndGet() == 0 && e.evicted) {
                channels.invalidate(key);
            }
            if (e.pinned && offInBlock + len >= e.length) {
                // Read to its end: it competes for its place as any block from now on (at its first
                // piece it lost to blocks read once while its other pieces were still to come).
                unpin(key, e, false);
            }
        }
    }

    /** Counts a use of an indexed block for the eviction policy ({@link #get}). */
    private void use(BlockKey key) {
        index.getIfPresent(key);
        uses.increment();
    }

    /** Uses counted so far ({@link #use}; tests). */
    long uses() {
        return uses.sum();
    }

    /**
     * The entry of a cached block, indexed or {@link #held}; null if neither. Counts no use (see
     * {@link #get}).
     */
    private DiskEntry entry(BlockKey key) {
        DiskEntry e = index.policy().getIfPresentQuietly(key);
        if (e == null) {
            e = held.get(key);
            if (e == null) {
                e = index.policy().getIfPresentQuietly(key); // admitted between the two looks
                if (e == null && !spare.isEmpty() && isMember(key)) {
                    e = fromSpare(key);
                }
            }
        }
        return e;
    }

    /** Whether {@code key} may be a member cached under its hash (only those are ever {@link #spare}). */
    private static boolean isMember(BlockKey key) {
        return key.index() == 0 && key.blockSize() == MemberReads.MEMBER_BLOCK_SIZE;
    }

    /**
     * Takes a spare member back into the index and returns its entry; null if it is not spare, or
     * its file is gone or damaged (then deleted). Done under the index's lock for the key, header
     * read and all (as {@link #place} renames under it), so that a second reader of the member
     * waits for the first one's look and finds it indexed, rather than missing and fetching it.
     */
    private DiskEntry fromSpare(BlockKey key) {
        boolean[] taken = {false};
        DiskEntry now;
        moving();
        try {
            now = index.asMap().compute(key, (k, v) -> {
                if (v != null || held.containsKey(k)) {
                    return v;
                }
                int len = spare.take(k.blob());
                if (len < 0) {
                    return null;
                }
                BlockFile.Header h = null;
                try (FileChannel ch = FileChannel.open(dir.path(k), StandardOpenOption.READ)) {
                    h = BlockFile.readHeader(ch);
                } catch (java.nio.file.NoSuchFileException gone) {
                    return null; // deleted under warpd: a miss, not damage
                } catch (IOException ex) {
                    h = null;
                }
                if (h == null || !h.key().equals(k) || !h.listId().equals(k.blob()) || h.dataLength() != len) {
                    LOG.warn("Cached {} has a damaged header; deleting it, it will be fetched again", k);
                    metrics.cacheCorruptBlocks.increment();
                    deleteFile(dir.path(k));
                    return null;
                }
                taken[0] = true;
                return new DiskEntry(k, h.headerLength(), h.dataLength(), h.crcs(), h.listId(), null);
            });
        } finally {
            moved();
        }
        if (taken[0]) {
            metrics.spareMemberHits.increment();
            members.put(key, Boolean.TRUE);
            dropMembersOut();
        }
        return now != null ? now : held.get(key);
    }

    /**
     * Deletes the file of a member let go of from {@link #spare}, under the index's lock for its
     * key and only if the index and the held blocks do not have it: one fetched and placed again
     * since keeps its file.
     */
    private void deleteSpareFile(BlockKey key) {
        index.asMap().compute(key, (k, v) -> {
            // Spare again since it was let go (fetched, placed and let go once more: every add to
            // the spare ones is made under this lock) keeps its file too (the review).
            if (v == null && !held.containsKey(k) && !spare.contains(k.blob())) {
                deleteFile(dir.path(k));
            }
            return v;
        });
    }

    /**
     * Lets the oldest spare members go until the cache is within its limit again (the index and
     * held blocks grew), on the size as counted now: cheap, on the thread of the place, and a
     * little off at times (a member moving between the index, the held ones and the spare ones is
     * counted in neither while it moves, and Caffeine may not have counted the index's last
     * writes), so {@link #trimmer} trims again on an exact size once the places pause. (CI,
     * 2026-12-02: with nothing running the cache held one member past its limit.)
     */
    private void trimSpare() {
        if (spare.isEmpty()) {
            return;
        }
        long over = countedBytes() - limit;
        if (over > 0) {
            letGoSpare(spare.trimTo(spare.bytes() - over));
        }
        if (!trimPending.getAndSet(true)) {
            java.util.concurrent.locks.LockSupport.unpark(trimmer());
        }
    }

    /**
     * Trims the spare members on an exact size: Caffeine's queued writes applied, read with no
     * move under way from its start to its end (a move leaves the total as it was, so trimming
     * the excess from the spare ones as they are then is right whatever moves after). False if
     * moves overlapped every try.
     */
    private boolean trimExactly() {
        trimLock.lock();
        try {
            for (int i = 0; i < 64 && !spare.isEmpty(); i++) {
                long before = moves.get();
                if ((before & MOVING) == 0) {
                    index.cleanUp();
                    long over = countedBytes() - limit;
                    if (moves.get() == before) {
                        if (over > 0) {
                            letGoSpare(spare.trimTo(spare.bytes() - over));
                        }
                        return true;
                    }
                }
                Thread.onSpinWait();
            }
            return spare.isEmpty();
        } finally {
            trimLock.unlock();
        }
    }

    private Thread trimmer() {
        Thread t = trimmer;
        if (t == null) {
            synchronized (this) {
                if (trimmer == null && !closed) {
                    trimmer = Thread.ofPlatform().daemon().name("warp-cache-trim").start(this::trimLoop);
                }
                t = trimmer;
            }
        }
        return t;
    }

    /** {@link #trimmer}'s loop: a trim asked for waits {@link #TRIM_DELAY_NANOS} (the places after it ask none meanwhile), then is done exactly, again 1 ms later while moves overlap it. */
    private void trimLoop() {
        while (!closed) {
            java.util.concurrent.locks.LockSupport.park(this);
            java.util.concurrent.locks.LockSupport.parkNanos(TRIM_DELAY_NANOS);
            while (!closed && trimPending.getAndSet(false)) {
                try {
                    if (!trimExactly()) {
                        trimPending.set(true);
                        java.util.concurrent.locks.LockSupport.parkNanos(1_000_000L);
                    }
                } catch (RuntimeException e) {
                    LOG.warn("Trimming the cache's spare members failed; the next place trims again", e);
                }
            }
        }
    }

    /** A block starts moving between the index, the held ones and the spare members ({@link #moves}). */
    private void moving() {
        moves.incrementAndGet();
    }

    /** It is in its new place, counted there. */
    private void moved() {
        moves.addAndGet(MOVED - 1);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Here: an indexed member (not held for a reader, nobody reading it) leaves the index for
     * the spare members passed in this pass, its file kept; a spare one joins them.
     */
    @Override
    public void passed(BlockKey key) {
        if (!isMember(key)) {
            return;
        }
        SpareMembers.Spare[] pushed = {null};
        moving();
        try {
            passToSpare(key, pushed);
        } finally {
            moved();
        }
        if (pushed[0] != null) {
            letGoSpare(List.of(pushed[0]));
        }
    }

    /** {@link #passed}'s move, under the index's lock for the key; a spare member the spare ones let go of for it into {@code pushed}. */
    private void passToSpare(BlockKey key, SpareMembers.Spare[] pushed) {
        index.asMap().compute(key, (k, e) -> {
            if (e == null) {
                if (!held.containsKey(k)) {
                    spare.passKept(k.blob());
                }
                return null;
            }
            if (!e.member || e.pinned || e.readers.get() > 0) {
                return e;
            }
            if (!spare.keeps()) {
                return e; // keeps none: it stays indexed
            }
            SpareMembers.Spare out = spare.pass(k.blob(), e.length);
            e.evicted = true;
            channels.invalidate(k);
            members.invalidate(k);
            metrics.membersSpared.increment();
            pushed[0] = out;
            return null;
        });
    }

    @Override
    public void newPass() {
        letGoSpare(spare.newPass());
    }

    /** Deletes the files of spare members let go of, counted as evictions. */
    private void letGoSpare(List<SpareMembers.Spare> out) {
        for (SpareMembers.Spare s : out) {
            deleteSpareFile(MemberReads.key(s.id()));
            metrics.evictions.increment();
            metrics.evictedBytes.add(SpareMembers.weight(s.length()));
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Here: queued for {@link PageCacheHints} on a thread of its own, so that the reader's
     * thread spends a queue offer, not the advice (which allocates the pages and submits their
     * reads, and waits when the disk's queue is full). A full queue drops the hint.
     */
    @Override
    public boolean willNeed(BlockKey key) {
        DiskEntry e = entry(key); // not a use: the read to come is
        if (e == null || e.evicted || e.hinted || closed || !hintQueue().offer(key)) {
            return false;
        }
        e.hinted = true;
        metrics.diskReadAheadBlocks.increment();
        return true;
    }

    private BlockingQueue<BlockKey> hintQueue() {
        BlockingQueue<BlockKey> q = hintQueue;
        if (q == null) {
            synchronized (this) {
                if (hintQueue == null) {
                    BlockingQueue<BlockKey> fresh = new ArrayBlockingQueue<>(HINT_QUEUE);
                    hintThread = Thread.ofPlatform().daemon().name("warp-page-hints").start(() -> hintLoop(fresh));
                    hintQueue = fresh;
                }
                q = hintQueue;
            }
        }
        return q;
    }

    private void hintLoop(BlockingQueue<BlockKey> q) {
        try {
            while (!closed) {
                BlockKey key = q.take();
                DiskEntry e = entry(key);
                try {
                    if (e != null && !e.evicted) {
                        hints.willNeed(dir.path(key));
                    }
                } catch (RuntimeException adviceFailed) {
                    // A hint is only a hint: the block's read reads it, as without one.
                    LOG.debug("page-cache hint for {} failed: {}", key, adviceFailed.toString());
                }
            }
        } catch (InterruptedException stop) {
            // closed
        }
    }

    /**
     * Reads the 64 KiB chunks the range touches and checks their CRC32C. A chunk-aligned range
     * into a direct buffer (a FUSE read of a whole-block-aligned file: the kernel asks for
     * 128 KiB-aligned pieces) is read straight into the caller's buffer and checked there; any
     * other range goes through a scratch buffer (the thread's own; a virtual thread borrows a
     * shared one) and is copied out once.
     */
    private boolean read(BlockKey key, DiskEntry e, int offInBlock, ByteBuffer dst, int dstIndex, int len, int c0, int c1,
            int start, int span) {
        if (!Thread.currentThread().isVirtual()) {
            return read(key, e, offInBlock, dst, dstIndex, len, c0, c1, start, span, scratch.get());
        }
        DiskScratch.Read s;
        try {
            s = sharedScratch.borrow();
        } catch (InterruptedException stop) {
            Thread.currentThread().interrupt();
            return false;
        }
        try {
            return read(key, e, offInBlock, dst, dstIndex, len, c0, c1, start, span, s);
        } finally {
            sharedScratch.giveBack(s);
        }
    }

    private boolean read(BlockKey key, DiskEntry e, int offInBlock, ByteBuffer dst, int dstIndex, int len, int c0, int c1,
            int start, int span, DiskScratch.Read s) {
        boolean direct = dst.isDirect() && offInBlock == start && len == span;
        ByteBuffer buf = direct ? dst.slice(dstIndex, len) : s.buffer(span);
        for (int attempt = 0; ; attempt++) {
            FileChannel ch = channels.getIfPresent(key);
            if (ch == null) {
                try {
                    FileChannel opened = FileChannel.open(dir.path(key), StandardOpenOption.READ);
                    ch = channels.asMap().putIfAbsent(key, opened);
                    if (ch == null) {
                        ch = opened;
                    } else {
                        closeQuietly(opened);
                    }
                } catch (java.nio.file.NoSuchFileException ex) {
                    // Deleted under warpd (rm -rf v1/blocks/*, to free space): a miss, not a damaged block.
                    forget(key, e);
                    return false;
                } catch (IOException ex) {
                    if (!e.evicted) {
                        drop(key, e, "cannot be opened (" + ex + ")");
                    }
                    // else: evicted while we looked it up, an ordinary miss.
                    return false;
                }
            }
            buf.clear().limit(span);
            try {
                if (!BlockFile.readFully(ch, buf, (long) e.headerLength + start)) {
                    drop(key, e, "is truncated");
                    return false;
                }
                break;
            } catch (ClosedChannelException ex) {
                // Evicted (or closed by an interrupt) under us: reopen; a deleted file is then a miss.
                channels.asMap().remove(key, ch);
                if (attempt >= 2 || Thread.currentThread().isInterrupted()) {
                    return false;
                }
            } catch (IOException ex) {
                drop(key, e, "cannot be read (" + ex + ")");
                return false;
            }
        }
        for (int c = c0; c <= c1; c++) {
            int from = (c - c0) * BlockFile.CHUNK;
            buf.limit(Math.min(from + BlockFile.CHUNK, span)).position(from);
            s.crc.reset();
            s.crc.update(buf);
            if ((int) s.crc.getValue() != e.crcs[c]) {
                drop(key, e, "fails its CRC32C in chunk " + c);
                return false;
            }
        }
        if (!direct) {
            dst.put(dstIndex, buf, offInBlock - start, len);
        }
        if (e.prefetchCredit != null && !e.prefetchCredit.get() && e.prefetchCredit.compareAndSet(false, true)) {
            metrics.prefetchHitBlocks.increment();
        }
        return true;
    }

    /** Forgets a block whose file is gone (deleted by something else): a miss from now on, no damage. */
    private void forget(BlockKey key, DiskEntry e) {
        index.asMap().compute(key, (k, v) -> {
            if (stillThere(k, v, e)) {
                letGo(k, e);
                return null;
            }
            return v;
        });
    }

    /** Removes a damaged block (if still the indexed one): it becomes a miss and is refetched. */
    private void drop(BlockKey key, DiskEntry e, String why) {
        index.asMap().compute(key, (k, v) -> {
            if (!stillThere(k, v, e)) {
                return v;
            }
            // Logged only when the block really was bad, not when eviction won a race.
            LOG.warn("Cached {} {}; deleting it, it will be fetched again", key, why);
            metrics.cacheCorruptBlocks.increment();
            letGo(k, e);
            deleteFile(dir.path(k));
            return null;
        });
    }

    /**
     * Inside the index's compute for {@code k} (indexed there as {@code v}, or null): whether
     * {@code e} is still the block's entry, indexed and not evicted, or held (then taken out of
     * {@link #held}).
     */
    private boolean stillThere(BlockKey k, DiskEntry v, DiskEntry e) {
        return v == null ? held.remove(k, e) : v == e && !v.evicted;
    }

    /** Marks {@code e} gone: a miss from now on, its channel closed, its member entry and held bytes let go. */
    private void letGo(BlockKey k, DiskEntry e) {
        e.evicted = true;
        channels.invalidate(k);
        if (e.member) {
            members.invalidate(k);
        }
        unpinned(e); // if it was held: its bytes are no longer
    }

    /** Evicts the members {@link #members} let go of (their byte weight leaves the index too). */
    private void dropMembersOut() {
        BlockKey k;
        List<SpareMembers.Spare> out = null;
        while ((k = membersOut.poll()) != null) {
            SpareMembers.Spare[] oldest = {null};
            moving();
            try {
                index.asMap().computeIfPresent(k, (key, e) -> {
                    if (!e.member) {
                        return e;
                    }
                    e.evicted = true;
                    if (e.readers.get() == 0) {
                        channels.invalidate(key);
                    }
                    // Kept as spare, its file stays (a reader still in it reads on); the spare tier's
                    // oldest may be let go for it, deleted below, outside this key's lock.
                    SpareMembers.Spare pushed = spare.add(key.blob(), e.length);
                    if (!spare.keeps()) {
                        deleteFile(dir.path(key));
                        metrics.evictions.increment();
                        metrics.evictedBytes.add(e.weight());
                    } else {
                        metrics.membersSpared.increment();
                        oldest[0] = pushed;
                    }
                    return null;
                });
            } finally {
                moved();
            }
            if (oldest[0] != null) {
                if (out == null) {
                    out = new ArrayList<>();
                }
                out.add(oldest[0]);
            }
        }
        if (out != null) {
            letGoSpare(out);
        }
    }

    @Override
    public boolean contains(BlockKey key) {
        // Held first: a block only ever moves from there to the index, so none is missed in between.
        return held.containsKey(key) || index.asMap().containsKey(key)
                || !spare.isEmpty() && isMember(key) && spare.contains(key.blob());
    }

    /** {@inheritDoc} Not a use: planning a read asks this, and the read counts ({@link #get}). */
    @Override
    public int length(BlockKey key) {
        DiskEntry e = entry(key);
        return e == null ? -1 : e.length;
    }

    @Override
    public boolean put(BlockKey key, BlobId listId, byte[] data, int off, int len, AtomicBoolean prefetchCredit) {
        if (closed || contains(key)) {
            return true;
        }
        WriteGate gate = dir.writes();
        if (!gate.begin()) {
            return true; // closed since: served, not kept
        }
        try {
            putOnDisk(key, listId, data, off, len, prefetchCredit);
        } finally {
            gate.end();
        }
        // Not written (the reason was counted and logged): the memory tier may keep it (Tiers).
        return closed || contains(key);
    }

    private void putOnDisk(BlockKey key, BlobId listId, byte[] data, int off, int len, AtomicBoolean prefetchCredit) {
        if (takenOver()) {
            return;
        }
        int headerLength = BlockFile.headerLength(len);
        long bytes = (long) headerLength + len;
        if (!writes.reserve(key, bytes)) {
            remakeIfGone();
            return;
        }
        try {
            DiskWrites.Written w = writes.toTemp(key, listId, data, off, len, headerLength, false);
            if (w == DiskWrites.NO_SPACE) {
                // Tried again once, after evicting; with nothing to evict, the second refusal is what
                // is counted and logged.
                freeFiles(bytes);
                w = writes.toTemp(key, listId, data, off, len, headerLength, true);
            }
            if (w != null) {
                DiskEntry fresh = new DiskEntry(key, headerLength, len, w.crcs(), listId, prefetchCredit);
                // Read ahead, and no reader has taken it yet: held out of eviction (PIN_FRACTION).
                boolean ahead = prefetchCredit != null && !prefetchCredit.get();
                fresh.pinned = ahead && reservePin(fresh.weight());
                if (ahead && !fresh.pinned) {
                    fresh.readEnd = 0; // placed unheld: placing counted its read to come, which starts at 0
                }
                DiskEntry placed = null;
                try {
                    placed = place(key, w, fresh);
                } finally {
                    if (placed != fresh) {
                        unpinned(fresh);
                    }
                }
                if (placed == fresh && fresh.pinned) {
                    pinOrder(new Pinned(key, fresh));
                }
                if (placed == fresh) {
                    trimSpare();
                }
            } else {
                remakeIfGone();
            }
        } finally {
            writes.release(bytes);
        }
    }

    /**
     * After the file system refused a block for want of space that the floor had found free: the
     * disk is out of inodes (a file per block; small members fill a disk's inodes long before its
     * bytes). Evicts, by the normal policy, {@link #INODE_EVICT_FRACTION} of the cache (at least
     * {@code bytes}), so that this write and the next ones land, rather than caching nothing more
     * until an operator steps in. Logged at most once a minute.
     */
    private void freeFiles(long bytes) {
        long evicted;
        long size;
        synchronized (gcLock) {
            size = countedBytes();
            evicted = evictTo(Math.max(0, size - Math.max(bytes, size / INODE_EVICT_FRACTION)));
        }
        long now = System.nanoTime();
        long last = lastInodeWarn.get();
        if (evicted > 0 && now - last >= INODE_WARN_EVERY_NANOS && lastInodeWarn.compareAndSet(last, now)) {
            LOG.warn("The cache's disk at {} refused a block for want of space though {} bytes are free: most likely"
                    + " it is out of inodes (warpd keeps a file per block). Evicted {} bytes of blocks to keep caching;"
                    + " give the cache a disk with more inodes (df -i), or a smaller --cache-size", dir.root(),
                    floor.usableBytes(), evicted);
        }
    }

    /**
     * Whether another warpd has taken the cache directory over (its lock file is not the one this
     * process locked: see {@link CacheDirectory#stillLocked}); looked at most once a second, and
     * for good once it has been: this process then keeps nothing more on that disk.
     */
    private boolean takenOver() {
        if (takenOver) {
            return true;
        }
        long now = System.nanoTime();
        if (now - lastLockCheck < 1_000_000_000L) {
            return false;
        }
        lastLockCheck = now;
        if (dir.stillLocked()) {
            return false;
        }
        takenOver = true;
        LOG.warn("Another process has taken over the cache directory {} (it was deleted and made again, with a lock"
                + " of its own): this warpd writes no more blocks there and serves from what it has and from the"
                + " store. Restart it with its own --cache-dir", dir.root());
        return true;
    }

    /**
     * After a write that failed: if the cache's {@code v1/} was deleted under us and stays gone
     * for {@link #REMAKE_AFTER_NANOS}, makes it again and forgets the blocks it held (their files
     * went with it), so that caching resumes and the cache's size and block count say what is
     * there. Looked at most once a second.
     */
    private void remakeIfGone() {
        long now = System.nanoTime();
        long last = lastGoneCheck;
        if (now - last < 1_000_000_000L || closed) {
            return;
        }
        lastGoneCheck = now;
        if (!dir.broken()) {
            brokenSince = 0;
            return;
        }
        // Only once it has stayed gone a while: a folder made again while an rm -rf is under
        // way makes the rm fail ("Directory not empty").
        long since = brokenSince;
        if (since == 0) {
            brokenSince = now;
            return;
        }
        if (now - since < REMAKE_AFTER_NANOS || !dir.remakeIfGone()) {
            return;
        }
        brokenSince = 0;
        long blocks = blockCount();
        long size = countedBytes();
        for (DiskEntry e : index.asMap().values()) {
            e.evicted = true;
        }
        for (var h : held.entrySet()) {
            if (held.remove(h.getKey(), h.getValue())) {
                h.getValue().evicted = true;
                unpinned(h.getValue());
            }
        }
        index.invalidateAll();
        members.invalidateAll();
        spare.clear();
        channels.invalidateAll();
        LOG.warn("The cache directory {} was deleted while warpd ran; it is made again and caching resumes"
                + " (the {} blocks, {} bytes, it held are gone)", dir.root(), blocks, size);
        onRemade.run();
    }

    /**
     * Runs {@code r} each time the directory is made again after it was deleted under warpd:
     * what lives beside the blocks (the block hash lists) is written back from memory, since a
     * block is only served offline with its blob's list on disk (audit 23).
     */
    void onRemade(Runnable r) {
        this.onRemade = Objects.requireNonNull(r, "r");
    }

    /**
     * Room for {@code bytes} more pinned: taken (the index's bound lowered first if need be, so
     * that the limit holds throughout), the oldest pinned let go first if the pin bound is full;
     * false if it cannot hold them.
     */
    private boolean reservePin(long bytes) {
        if (bytes > pinBudget) {
            return false;
        }
        while (true) {
            long held = pinnedBytes.get();
            if (held + bytes <= pinBudget) {
                if (pinnedBytes.compareAndSet(held, held + bytes)) {
                    pinnedCount.incrementAndGet();
                    if (held + bytes > reserved) {
                        sizeLock.lock(); // the put's thread, not a reader's: it may wait for a gc
                        try {
                            raiseReserve();
                        } finally {
                            sizeLock.unlock();
                        }
                    }
                    return true;
                }
                continue;
            }
            Pinned oldest = pollPinned();
            if (oldest == null) {
                return false; // held by entries still being placed: this one is not pinned
            }
            unpin(oldest.key(), oldest.entry(), true);
        }
    }

    /**
     * Raises the reserve to the pinned bytes rounded up to a step if they passed it, the index's
     * bound first; caller holds {@link #sizeLock}. It is lowered only by {@link #resetReserve}.
     */
    private void raiseReserve() {
        long want = roundUp(pinnedBytes.get());
        if (want > reserved) {
            index.policy().eviction().orElseThrow().setMaximum(limit - want);
            reserved = want;
        }
    }

    /**
     * Sets the reserve to the pinned bytes rounded up to a step, whatever it was (gc, a disk short
     * of room); caller holds {@link #sizeLock}. Lowered, the reserve says so first and the pinned
     * bytes are looked at again: a pin that read the reserve before it came down took the lock,
     * one after it is counted (the review: either way a block could be placed held with the bound
     * not lowered for it).
     */
    private void resetReserve() {
        long want = roundUp(pinnedBytes.get());
        if (want <= reserved) {
            reserved = want;
            want = Math.max(want, roundUp(pinnedBytes.get()));
        }
        index.policy().eviction().orElseThrow().setMaximum(limit - want);
        reserved = want;
    }

    private long roundUp(long bytes) {
        return Math.min(limit, (bytes + pinStep - 1) / pinStep * pinStep);
    }

    /**
     * Lets a pinned entry compete for its place ({@link #admit}): the reserve still holds its
     * bytes, so the limit holds.
     */
    private void unpin(BlockKey key, DiskEntry e, boolean unread) {
        moving();
        try {
            if (unpinned(e)) {
                admit(key, e, unread);
            }
        } finally {
            moved();
        }
    }

    /**
     * Moves an entry no longer pinned from {@link #held} into the index, where it counts its first
     * use and competes for its place; nothing if it is gone from {@code held} (dropped, forgotten).
     * One let go {@code unread} (past the bound, or gc) and not read at all yet counts its read
     * to come now, as one use more (counted as read once, it lost its place to blocks read once
     * before its reader came), and that read, starting at 0, then continues it (the review: it
     * counted that read again, three uses against one).
     */
    private void admit(BlockKey key, DiskEntry e, boolean unread) {
        // Set before a reader's first piece can write it, or not at all (the review: a reader's
        // write between a look and a set was overwritten, and its next piece counted again).
        boolean toCome = unread && DiskEntry.READ_END.compareAndSet(e, -1, 0);
        DiskEntry now = index.asMap().compute(key, (k, v) -> v == null && held.remove(k, e) ? e : v);
        if (now == e && toCome) {
            use(key);
        }
        if (now == e && e.member) {
            members.put(key, Boolean.TRUE);
            dropMembersOut();
        }
    }

    /** Clears {@code e}'s pin and takes its bytes off the pinned; false if it was not pinned. */
    private boolean unpinned(DiskEntry e) {
        synchronized (e) {
            if (!e.pinned) {
                return false;
            }
            e.pinned = false;
        }
        pinnedBytes.addAndGet(-e.weight());
        pinnedCount.decrementAndGet();
        return true;
    }

    /**
     * Queues a pinned entry, first dropping the entries at the head that were read (or are gone)
     * since, so that the queue stays about as long as what is pinned; past four times the entries
     * pinned (a block pinned and never read, with many read after it) its oldest are let go. One
     * thread trims at a time; the others only add.
     */
    private void pinOrder(Pinned p) {
        pinnedOrder.add(p);
        queued.incrementAndGet();
        if (!trimming.compareAndSet(false, true)) {
            return;
        }
        try {
            for (Pinned head; (head = pinnedOrder.peek()) != null; ) {
                boolean stale = !head.entry().pinned;
                if (!stale && queued.get() <= Math.max(MIN_QUEUED, 4L * pinnedCount.get())) {
                    return;
                }
                if (pinnedOrder.remove(head)) { // the head, unless a pin or gc took it first
                    queued.decrementAndGet();
                    if (!stale) {
                        unpin(head.key(), head.entry(), true);
                    }
                }
            }
        } finally {
            trimming.set(false);
        }
    }

    /** Entries queued as pinned, some unpinned since (tests). */
    int pinQueueLength() {
        return queued.get();
    }

    /** Whether the block is held as read ahead and not read (tests). */
    boolean pinned(BlockKey key) {
        DiskEntry e = held.get(key);
        return e != null && e.pinned;
    }

    /** Bytes pinned now (tests). */
    long pinnedBytes() {
        return pinnedBytes.get();
    }

    /** The oldest queued entry, or null. */
    private Pinned pollPinned() {
        Pinned p = pinnedOrder.poll();
        if (p != null) {
            queued.decrementAndGet();
        }
        return p;
    }

    /**
     * Renames a written file into place under the index's per-key lock, unless the block got there
     * first; a pinned entry goes to {@link #held}, not the index. Returns the entry now there (null
     * if the rename failed).
     */
    private DiskEntry place(BlockKey key, DiskWrites.Written w, DiskEntry fresh) {
        Path target = dir.path(key);
        DiskEntry[] placed = {null};
        moving(); // a spare member's file placed again goes into the index
        try {
            index.asMap().compute(key, (k, old) -> {
                DiskEntry there = old != null ? old : held.get(k);
                if (there != null) {
                    deleteFile(w.tmp());
                    placed[0] = there;
                    return old;
                }
                try {
                    moveIntoPlace(key, w.tmp(), target);
                } catch (IOException e) {
                    writes.failed(key, e);
                    deleteFile(w.tmp());
                    return null;
                }
                placed[0] = fresh;
                if (fresh.member && !spare.isEmpty()) {
                    spare.take(k.blob()); // demoted while this copy was fetched: one entry for one file
                }
                if (fresh.pinned) {
                    held.put(k, fresh);
                    return null;
                }
                return fresh;
            });
        } finally {
            moved();
        }
        if (placed[0] == fresh && fresh.member && !fresh.pinned) {
            members.put(key, Boolean.TRUE);
            dropMembersOut();
        }
        return placed[0];
    }

    /** Renames a written block file into place; its shard folder is made again if it was deleted since it was made. */
    private void moveIntoPlace(BlockKey key, Path tmp, Path target) throws IOException {
        try {
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (java.nio.file.NoSuchFileException e) {
            if (!Files.exists(tmp) || Files.isDirectory(target.getParent())) {
                throw e;
            }
            dir.remakeShard(key);
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /** Evicts cached blocks worth {@code shortBy} bytes; false if the cache is empty and nothing went. */
    private boolean makeRoom(long shortBy) {
        synchronized (gcLock) {
            return !(evictTo(Math.max(0, countedBytes() - shortBy)) == 0 && countedBytes() == 0);
        }
    }

    /**
     * Bytes held: what the index weighs, the pinned blocks it does not, and the spare members. An
     * exact trim is done first (after {@link #trimmer}'s, if one is under way), and the index's writes still
     * queued in Caffeine's buffer are applied (a write made while another thread held Caffeine's
     * lock waits there for the index's next read or write: read after the last one, the size
     * counted a member let go of, or not one placed). For stats and gc, not the read path.
     */
    @Override
    public long sizeBytes() {
        // Whether or not a trim is pending: the trimmer may have taken it and not be done yet.
        if (!spare.isEmpty() && !trimExactly()) {
            trimPending.set(true); // moves overlapped it: the trimmer tries again
            java.util.concurrent.locks.LockSupport.unpark(trimmer());
        }
        index.cleanUp();
        return countedBytes();
    }

    /** {@link #sizeBytes} as counted now, without trimming or Caffeine's queued writes. */
    private long countedBytes() {
        return index.policy().eviction().orElseThrow().weightedSize().orElse(0) + pinnedBytes.get() + spare.bytes();
    }

    @Override
    public long blockCount() {
        return index.estimatedSize() + held.size() + spare.count();
    }

    @Override
    public long spareMembers() {
        return spare.count();
    }

    @Override
    public boolean keepsNothingNow() {
        // No room even with all evicted, v1/ gone or another warpd's, or a file system remounted read-only.
        if (takenOver || dir.broken() || !java.nio.file.Files.isWritable(dir.root())) {
            return true;
        }
        try {
            return floor.usableBytes() + countedBytes() < floor.bytes() + BlockFile.headerLength(1 << 20) + (1L << 20);
        } catch (java.io.UncheckedIOException e) {
            return false; // not known: the writes will tell
        }
    }

    @Override
    public long spareMemoryBytes() {
        return spare.memoryBytes();
    }

    /** Whether the member is kept past the index's count bound, not indexed (tests). */
    boolean spare(BlockKey key) {
        return spare.contains(key.blob()) && !index.asMap().containsKey(key);
    }

    @Override
    public long limitBytes() {
        return limit;
    }

    /** The pin bound: a quarter of the cache, 256 MiB at most ({@link #PIN_FRACTION}). */
    @Override
    public long heldRoomBytes() {
        return pinBudget;
    }

    @Override
    public long freeFloorBytes() {
        return floor.bytes();
    }

    @Override
    public long gc(long limitBytes) {
        synchronized (gcLock) {
            return evictTo(Math.max(0, limitBytes));
        }
    }

    /**
     * Evicts (by the normal policy) down to {@code target} bytes, pinned blocks only as far as the
     * others do not reach it, oldest first; caller holds gcLock.
     */
    private long evictTo(long target) {
        sizeLock.lock();
        try {
            long before = countedBytes();
            if (before <= target) {
                return 0;
            }
            // The spare members go first: the index let go of them already. All of them if the
            // index and the held blocks alone are over.
            letGoSpare(spare.trimTo(Math.max(0, target - (before - spare.bytes()))));
            var eviction = index.policy().eviction().orElseThrow();
            eviction.setMaximum(Math.max(0, target - pinnedBytes.get()));
            index.cleanUp();
            if (pinnedBytes.get() > target) {
                // Not enough without the pinned: the oldest compete too, until the rest fit.
                for (Pinned p; pinnedBytes.get() > target && (p = pollPinned()) != null; ) {
                    unpin(p.key(), p.entry(), true);
                }
                eviction.setMaximum(Math.max(0, target - pinnedBytes.get()));
                index.cleanUp();
            }
            resetReserve();
            return before - countedBytes();
        } finally {
            sizeLock.unlock();
        }
    }

    @Override
    public VerifyResult verify(HashLists lists, LongConsumer progress, BooleanSupplier cancelled) {
        // Held first, as in contains; a block that moved to the index in between is listed once.
        Map<BlockKey, DiskEntry> all = new java.util.LinkedHashMap<>(held);
        index.asMap().forEach(all::putIfAbsent);
        Map<BlockKey, DiskEntry> spares = spareEntries();
        spares.forEach(all::putIfAbsent);
        return DiskVerify.run(new ArrayList<>(all.entrySet()), dir, lists, progress,
                () -> cancelled.getAsBoolean() || closed, (key, e) -> {
                    if (spares.get(key) == e) {
                        dropSpare(key, true);
                    } else {
                        drop(key, e, "fails verification");
                    }
                }, (key, e) -> {
                    if (spares.get(key) == e) {
                        dropSpare(key, false);
                    } else {
                        forget(key, e);
                    }
                });
    }

    /**
     * A spare member {@link #verify} found damaged ({@code bad}: its file deleted) or gone: let go
     * of, if it is still spare (under its key's lock: not one indexed or made spare again since).
     */
    private void dropSpare(BlockKey key, boolean bad) {
        index.asMap().compute(key, (k, v) -> {
            if (v == null && !held.containsKey(k) && spare.take(k.blob()) >= 0 && bad) {
                LOG.warn("Cached {} fails verification; deleting it, it will be fetched again", k);
                metrics.cacheCorruptBlocks.increment();
                deleteFile(dir.path(k));
            }
            return v;
        });
    }

    /**
     * An entry for each spare member, from its file's header, for {@link #verify}; one whose header
     * is damaged gets CRCs of zero, so that its check fails and it is deleted as any damaged block.
     */
    private Map<BlockKey, DiskEntry> spareEntries() {
        Map<BlockKey, DiskEntry> out = new java.util.LinkedHashMap<>();
        for (SpareMembers.Spare s : spare.all()) {
            BlockKey key = MemberReads.key(s.id());
            BlockFile.Header h = null;
            try (FileChannel ch = FileChannel.open(dir.path(key), StandardOpenOption.READ)) {
                h = BlockFile.readHeader(ch);
            } catch (IOException ex) {
                h = null; // gone: DiskVerify finds it missing
            }
            boolean good = h != null && h.key().equals(key) && h.listId().equals(key.blob()) && h.dataLength() == s.length();
            out.put(key, good
                    ? new DiskEntry(key, h.headerLength(), h.dataLength(), h.crcs(), h.listId(), null)
                    : new DiskEntry(key, BlockFile.headerLength(s.length()), s.length(),
                            new int[BlockFile.chunkCount(s.length())], key.blob(), null));
        }
        return out;
    }

    @Override
    public void close() {
        closed = true;
        synchronized (this) {
            if (hintThread != null) {
                hintThread.interrupt();
            }
            if (trimmer != null) {
                java.util.concurrent.locks.LockSupport.unpark(trimmer);
            }
        }
        channels.invalidateAll();
        channels.cleanUp();
        dir.close();
    }
}
