package io.warpdata.blobcache.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;

/**
 * Detects sequential access per blob and says what to read ahead: {@link #onRead} returns the
 * blocks to fetch ({@link Advice}) and calls nobody; the {@link ReadExecutor} hands them to the
 * {@link FetchScheduler}.
 *
 * <h2>The algorithm, and why each constant has its value</h2>
 * Access is tracked <em>per blob</em>, not per file handle ({@code ReadAhead}). PyTorch's
 * {@code ImageFolder} opens, reads and closes thousands of small members lying one after another
 * in a tar shard; per handle each is a short read, per blob it is a sequential scan, and it gets
 * read-ahead like one.
 * <ul>
 * <li>Each blob keeps up to {@code STREAMS_PER_BLOB} = 4 streams (end offset, window). A read
 *     continues a stream when it starts at most {@code FORWARD_GAP_BYTES} = 256 KiB after the
 *     stream's end or at most {@code BACKWARD_SLACK_BYTES} = 256 KiB before it (both capped at one
 *     block). 256 KiB covers tar headers (0.5-1.5 KiB) and skipped small members, and DataLoader
 *     workers finishing neighbouring members out of order; a longer jump is a seek. Until its
 *     window has opened a stream is continued only within {@code OPEN_GAP_BYTES} = 16 KiB of its
 *     end: random reads of small members land within 256 KiB of some stream's end often. Four streams
 *     let a few readers scan one shard at different places (as ZFS's zfetch does) without
 *     each one's reads looking like seeks to the others.</li>
 * <li>A read further ahead than that, but within the blocks a stream with an open window has
 *     already read ahead, also continues it: the stream's read-ahead was right, and another
 *     reader of the same scan got there first. DataLoader workers take batches in turn (with 2
 *     workers and 32 members of 128 KiB a batch, each worker's next batch starts 4 MB past its
 *     last one), so each batch began a stream of its own with no window, and no window reached
 *     its 64 MiB: the folder-order ImageFolder pass of the bench under {@code --network s3like}
 *     ran at 1,630-1,744 images/s, and at 1,721-1,927 with this rule alone (0.73 and 0.83 of the
 *     big file's cold MB/s in the same session, issue 26's goal 0.8). Only a scan's window
 *     ({@link #SCAN_ENDS_MIN_WINDOW_BLOCKS}) takes such reads: random reads grew small ones.</li>
 * <li>A scan whose read-ahead has reached its shard's end reads the artifact's next shard ahead
 *     ({@link #SCAN_ENDS}, {@link #prime}): a stream at its start with the scan's window, and that
 *     window of it fetched (in a cache of 512 MiB or more), so that the scan meets it warm. Each
 *     shard used to begin with a seek (its first member fetched on its own) and a window growing
 *     from 2 blocks: 100-230 ms of waiting at each shard's start under {@code s3like}; with both
 *     rules the pass ran at 0.88-0.93 of the big file's cold MB/s (0.85 after the mends of the
 *     review and audit 49). The cost: a scan that stops
 *     at a shard's end, or whose next members lie deep in the next shard (a view's, a folder's),
 *     has fetched up to one window nobody reads.</li>
 * <li>A read that continues no stream is a <em>seek</em>: it replaces the least recently used
 *     stream with a new one whose window is 0. Random access therefore costs no extra bytes: the
 *     window only opens once a stream is continued.</li>
 * <li>The first continuation opens the window at {@code INITIAL_WINDOW_BLOCKS} = 2 blocks (2 MiB):
 *     small enough that a short sequential run (a Parquet page, two members) wastes little, large
 *     enough to hide one GET's latency behind the reader. In a blob read in short runs (at least
 *     {@code SHORT_RUNS_MIN} = 8 windows, and more than half of those opened, that nobody read:
 *     records of up to 1 MiB read at random in several reads each), a stream opens its window
 *     only once it has read more than 1 MiB since its seek. Each time the stream reaches a new
 *     block the window doubles, up to {@code MAX_WINDOW_BYTES} = 64 MiB: about half a second of
 *     one S3 stream, enough to keep {@code maxConcurrentFetches} GETs busy for a fast reader (in a
 *     disk cache under about 261 MiB, a quarter of the cache: {@link #maxWindowBlocks}).</li>
 * <li>Read-ahead is topped up only when at most half a window is left ahead of the reader, so it
 *     goes out in runs of at least half a window (at the full window exactly 32 MiB); consecutive missing blocks of a run are fetched
 *     with ranged GETs sized to the connection ({@code ConnectionRate}): what one GET delivers in
 *     0.25 s as measured on the cache's own GETs, a power of two between 4 MiB and
 *     {@code FetchScheduler.MAX_RUN_BYTES} = 32 MiB. On loopback that is 32 MiB (few requests: S3
 *     bills per request, and each costs the SDK's request pipeline in CPU); over a link that gives
 *     one connection 25 MB/s it is 4 MiB, so a half window goes out as 8 GETs at once instead of
 *     one (S3's own guidance: 8-16 MB ranges, a connection per ~85 MB/s). The GET is
 *     read straight into the run's buffer and each block is verified and handed to its readers
 *     as soon as it has arrived, so a reader never waits for the rest of a run; a GET that fails
 *     part way is retried for the blocks not yet handed over only.</li>
 * <li>Read-ahead bytes queued or in flight are bounded by {@code maxPrefetchBytes} (128 MiB by
 *     default); when the budget is used up, read-ahead is skipped and picked up by a later read.
 *     All fetches together are bounded by {@code maxInFlightBytes} (256 MiB) of memory.</li>
 * <li>Reads never wait for read-ahead that is not theirs: a read needing block b waits only for
 *     b's fetch; if b is queued as read-ahead and not yet started, the read moves it to the
 *     high-priority queue, which fetch workers always drain first. Read-ahead (and warm and
 *     hybrid fetches) may occupy at most 3/4 of the {@code maxConcurrentFetches} workers, so a
 *     read's own GET starts at once even while slow read-ahead GETs are in flight.</li>
 * <li>A shuffled pass over a tar shard is random access that read-ahead cannot follow, and
 *     every member would wait a round trip for its own block. In auto mode a blob becomes
 *     <em>dense</em> once at least 8 seeks, and one per 8 of its blocks, have missed the cache
 *     (an eighth of it touched at random, reads that hit the cache do not count), and those
 *     seeks have read at least 1/64 of its bytes ({@code DENSE_BYTES_FRACTION}: 2,000 small
 *     members sampled from a million are many seeks but few bytes, and must not cost whole
 *     shards); it is then
 *     fetched whole in the background as hybrid mode does at first touch (runs sized as above,
 *     128 MiB of them in flight), once per tracked blob, for blobs up to 1 GiB
 *     ({@code dense_random_blobs} counts them). A Parquet file whose column chunks are known
 *     (below) is never dense: a query reads some chunks, never all.</li>
 * <li>Parquet: once a read has reached a blob's end, its footer is read from the local tiers
 *     ({@link ParquetLayouts}, {@link ParquetFooter}); if it is Parquet, a stream's read-ahead
 *     stops at the end of the column chunk it is in ({@link #limit}, the one place read-ahead's
 *     reach is decided), since a query reads the chunks of its columns and skips the rest. A
 *     stream that went without a gap through {@code SCAN_CHUNKS} = 2 chunks past where it began
 *     and 8 MiB is a scan ({@code dd}) and is read ahead as any blob.</li>
 * <li>A read-ahead block evicted before anyone read it counts as {@code prefetch_wasted_bytes};
 *     a read served by a read-ahead block counts as {@code prefetch_hit_blocks}.</li>
 * <li>A block that fails SHA-256 verification (even once, with a good refetch) marks its blob
 *     <em>suspect</em>: every window of the blob closes, no read-ahead is scheduled for it, and
 *     read-ahead of it already queued but not yet demanded by a reader is dropped, until one GET
 *     of the blob verifies without a single mismatch (then windows start over from 0). A store
 *     serving wrong bytes thus costs about the demanded blocks (each fetched and refetched
 *     once), not whole windows: the kernel's own read-ahead keeps reading on after an EIO, and
 *     each such read used to grow the window and fetch up to 64 MiB more of failing blocks.</li>
 * <li>{@code TRACKED_BLOBS} = 8192 blobs are tracked (about 300 bytes each); a forgotten blob
 *     simply starts over with a window of 0.</li>
 * </ul>
 *
 */
final class ReadAhead {
    /** Window of a stream's first sequential continuation: 2 blocks (2 MiB at the default size). */
    static final int INITIAL_WINDOW_BLOCKS = 2;
    /** Largest window: 64 MiB, about half a second of S3 throughput for one stream. */
    static final long MAX_WINDOW_BYTES = 64L << 20;
    /**
     * A read starting at most this far after a stream's end (and at most one block) continues it:
     * tar headers between members are 0.5-1.5 KiB and skipping a few small members stays well
     * inside 256 KiB, while a larger jump (a Parquet reader skipping columns) is a real seek.
     */
    static final long FORWARD_GAP_BYTES = 256L << 10;
    /**
     * A read starting at most this far before a stream's end (and at most one block) also
     * continues it: DataLoader workers reading neighbouring members finish out of order.
     */
    static final long BACKWARD_SLACK_BYTES = 256L << 10;
    /**
     * A stream whose window has not opened yet is continued only by a read starting at most this
     * far from its end: tar headers, PAX records and padding between members are a few KiB. A
     * random read landing within the 256 KiB gap of a stream's end is no sign of a scan: with
     * 2,000 random members of 200,000 in 20 MB shards, one read in ten did, each opened a 2 MiB
     * window, and with dense fetches bounded by bytes they fetched 176 MB in 913 GETs.
     */
    static final long OPEN_GAP_BYTES = 16L << 10;
    /** Independent sequential streams tracked per blob. */
    static final int STREAMS_PER_BLOB = 4;
    /** Blobs whose access is tracked (about 300 bytes each). */
    static final int TRACKED_BLOBS = 8192;
    /**
     * Auto mode fetches a whole blob once it is being read densely at random: at least this many
     * seeks that missed the cache...
     */
    static final int DENSE_MIN_SEEKS = 8;
    /**
     * A blob whose streams opened windows that nobody read, at least this many and more than half
     * of those opened, is read in short runs (records of up to 1 MiB read at random, each in
     * several reads: a 1 MiB sample in 128 KiB reads): its streams then open their window only
     * once they have read more than {@link #SHORT_RUN_BYTES} since their seek. Every such record
     * continued its stream and opened a window of 2 blocks nobody read: shuffled 1 MiB records read
     * in 128 KiB pieces fetched 1.9-2.7x what they read. A window counts as unread when its stream
     * is replaced before it read more than {@link #SHORT_RUN_BYTES} and neither the read replacing
     * it nor another stream began in what it read ahead (in-order batches of DataLoader workers,
     * each a stream of its own, read one another's). Scans grow past it and never count; lookups
     * (tensors) are not counted or held back, nor is a Parquet file whose column chunks are known
     * (its windows end at the chunk's end: {@link #limit}). Both counts are halved once
     * {@link #SHORT_RUNS_DECAY} windows were opened, so that a blob read otherwise later is
     * judged by its recent reads.
     */
    static final int SHORT_RUNS_MIN = 8;
    /** A run longer than this since its seek is not short: 1 MiB, whatever the block size. */
    static final long SHORT_RUN_BYTES = 1L << 20;
    /** Windows opened after which both short-run counts are halved. */
    static final int SHORT_RUNS_DECAY = 64;
    /** ...and at least one for every this many of its blocks (an eighth of the blob touched at random). */
    static final int DENSE_BLOCKS_PER_SEEK = 8;
    /** Largest blob auto mode fetches whole when read densely at random: 1 GiB (tar shards are far smaller). */
    static final long DENSE_MAX_BLOB_BYTES = 1L << 30;
    /**
     * ...and only once those seeks have read at least 1/64 of its bytes: fetching it whole then
     * costs at most 64 times what was read so far. Counting seeks alone misfired on small
     * members: 2,000 random members of 200 bytes out of 1.28M in ten 128 MiB shards are 200
     * seeks a shard, far above one per 8 blocks, and fetched 1.28 GB for 400 KB read.
     */
    static final int DENSE_BYTES_FRACTION = 64;
    /**
     * Lookups ({@link BlobMember#lookup}: tensors read at random) make a blob dense only once
     * they have read half of it: fetching it whole then costs at most twice what was read (issue
     * 26's bound), where the members' rule (an eighth of the blocks touched, 1/64 of the bytes)
     * fetched a 21 MiB file for 1,000 tensors of 1 KiB. A pass over most of a file's tensors in
     * random order still ends up reading it whole, in large GETs.
     */
    static final int LOOKUP_DENSE_FRACTION = 2;
    /**
     * Lookups are fetched on their own while they are sparse: fewer than this many, or fewer
     * than {@link #LOOKUP_PER_BLOCK} a block they touched. Past that they are served by the
     * blocks (read ahead, and the blob fetched whole by the members' rule): a GET brings a
     * block's worth of the tensors read next. Measured (issue 26's bench, 1,000 random tensors of
     * 1 KiB out of 20,000 in a 21 MiB shard, about 48 a block): a GET per tensor cut the bytes
     * fetched from 21.6x to 3.3x what was read but its cold rate from ~600 to 69 tensors/s,
     * numpy asking for one tensor at a time; a session before measured the same (docs/cache.md).
     * Sparse lookups (32 of a 64 MiB file) cost their own bytes.
     */
    static final int LOOKUP_SPARSE_MIN = 8;
    /** Lookups a touched block past which they count as dense (see {@link #LOOKUP_SPARSE_MIN}). */
    static final int LOOKUP_PER_BLOCK = 2;
    /** Blocks whose lookups are told apart: 65,536 (8 KiB a blob at most); beyond, they count as the last. */
    static final int LOOKUP_BLOCKS_TRACKED = 1 << 16;
    /**
     * A stream that has gone, without a gap, through this many column chunks of a Parquet file
     * beyond the one it started in is a scan ({@code dd}, {@code cp}): it read one chunk whole and
     * went on into the next, further than the kernel's read-around carries a query's read of one
     * chunk. It is read ahead as any blob; a query's stream stops at its chunk's end.
     */
    static final int SCAN_CHUNKS = 2;
    /**
     * ...and read at least 8 MiB without a gap: a query reading adjacent columns goes through
     * chunks too (DuckDB's group-by of the bench reads ts, category and value one after another,
     * 1.6 MB in a row group) and, taken for a scan, had read-ahead run on into the 4 MB note
     * column after them. A scan pays for this bound over its first 8 MiB only.
     */
    static final long SCAN_MIN_BYTES = 8L << 20;
    /**
     * How far the kernel's read-around carries a read past the end of what was asked: the mount's
     * read-ahead, 1 MiB ({@code MountOptions.MAX_READAHEAD}), plus one 1 MiB FUSE read it is cut
     * into. A stream that crossed into the next column chunk by less than this may be only that
     * (measured: DuckDB reading a 4 MB chunk, the kernel asked for 1.2 MB of the next one); it
     * gets no read-ahead into that chunk until it has read further.
     */
    static final long READ_AROUND_BYTES = 2L << 20;
    /**
     * FUSE reads start on page boundaries, so a reader asking for a column chunk from its first
     * byte is seen starting up to a page before it, in the previous chunk: a run is taken to have
     * begun where it stood this much later.
     */
    static final long RUN_START_SLACK_BYTES = 64L << 10;

    /**
     * A stream whose window has reached this many blocks is a scan: it went on through at least
     * three blocks. Only a scan continues where it read ahead past its end, and only a scan's
     * read-ahead reaching its blob's end reads the next shard ahead ({@link #SCAN_ENDS}).
     */
    static final int SCAN_ENDS_MIN_WINDOW_BLOCKS = 8;

    /**
     * The window from which a stream is a scan at block size {@code bs}: {@link
     * #SCAN_ENDS_MIN_WINDOW_BLOCKS}, or the largest window where blocks are so large (over 8 MiB)
     * that fewer fit in it.
     */
    static int scanWindow(int bs) {
        return (int) Math.min(SCAN_ENDS_MIN_WINDOW_BLOCKS, Math.max(1, MAX_WINDOW_BYTES / bs));
    }

    /** {@link #onRead} result: the first read of the blob this tracker has seen. */
    static final int FIRST = 1;
    /**
     * {@link #onRead} result: the blob just became densely read at random (once per tracked blob):
     * a shuffled pass over a tar shard, whose remaining members will be read soon, in no order
     * that read-ahead can follow. Fetching it whole in large runs costs one shard's bytes in a
     * few GETs, where member by member each read waits a round trip for its own block.
     */
    static final int DENSE_RANDOM = 2;
    /**
     * {@link #onRead} result: this read-ahead reaches the end of the blob on a scan (a window of
     * {@link #SCAN_ENDS_MIN_WINDOW_BLOCKS} or more), once per stream. The shard a scan goes
     * on into ({@link BlobMember#next}) is then read ahead from its start ({@link #prime}), so
     * that the scan does not meet it cold: each shard used to begin with a seek (a member fetched
     * on its own) and a window growing from 2 blocks, 100-230 ms of waiting at each shard's start
     * in the bench's folder-order ImageFolder pass under {@code --network s3like}.
     */
    static final int SCAN_ENDS = 4;

    /**
     * What a read tells its caller: {@link #FIRST} and/or {@link #DENSE_RANDOM}, and the blocks
     * {@code [from, to)} to fetch ahead (none when {@code from == to}). Fetching them is the
     * caller's; if it could fetch only up to some block, it says so with {@link #scheduled}.
     */
    record Advice(int flags, int from, int to, int window) {
        static final Advice NONE = new Advice(0, 0, 0, 0);
        static final Advice FIRST_ONLY = new Advice(FIRST, 0, 0, 0);

        static Advice of(int flags) {
            return flags == 0 ? NONE : flags == FIRST ? FIRST_ONLY : new Advice(flags, 0, 0, 0);
        }

        boolean fetchAhead() {
            return from < to;
        }
    }

    private static final class Stream {
        long end;
        /** Where the stream's reads last began without a gap before them (a forward skip starts a new run). */
        long runStart;
        /** Where the seek that started it read from (0 for a primed stream). */
        long began;
        /** It has read more than {@link #SHORT_RUN_BYTES} since its seek (a primed stream: a scan's). */
        boolean grew;
        int window;
        int scheduledUntil;
        long lastUse;
        /** This stream's read-ahead has reached the blob's end on a scan ({@link #SCAN_ENDS} said once). */
        boolean scanEnded;
    }

    private static final class Access {
        final Stream[] streams = new Stream[STREAMS_PER_BLOB];
        long clock;
        /** Seeks (reads continuing no stream) that missed the cache, and their bytes. */
        int missedSeeks;
        long missedSeekBytes;
        /** Lookups that missed the cache, and their bytes ({@link #LOOKUP_DENSE_FRACTION}). */
        int missedLookups;
        long missedLookupBytes;
        /** The blocks those lookups lay in (at most {@link #LOOKUP_BLOCKS_TRACKED}; null until the first). */
        java.util.BitSet lookupBlocks;
        boolean dense;
        /** Dense, and its bytes count in {@link #denseBytes} (taken back once, when idle or no longer tracked). */
        final java.util.concurrent.atomic.AtomicBoolean counted = new java.util.concurrent.atomic.AtomicBoolean();
        /** Its size, while {@link #counted}. */
        volatile long countedBytes;
        /** When a read of it last came, while {@link #counted}. */
        volatile long lastReadNanos;
        /** Missed seeks at which to ask for room again, after a refusal ({@link #DENSE_RECHECK_SEEKS}). */
        int recheckAt;
        /** Verification failures of this blob seen so far ({@link Suspects}): a new one closes every window. */
        int failuresSeen;
        /** Made by {@link #prime} and not read yet: its first read is still the blob's {@link #FIRST}. */
        boolean primed;
        /** Windows opened by reads (not lookups), and those nobody read ({@link #SHORT_RUNS_MIN}). */
        int windowsOpened;
        int shortWindows;

        Access() {
            for (int i = 0; i < streams.length; i++) {
                streams[i] = new Stream();
            }
        }
    }

    private final Suspects suspects;
    private final ParquetLayouts layouts;
    private final Cache<BlobId, Access> blobs = Caffeine.newBuilder()
            .maximumSize(TRACKED_BLOBS)
            .executor(Runnable::run)
            .removalListener((BlobId id, Access a, com.github.benmanes.caffeine.cache.RemovalCause c) -> uncount(a))
            .build();

    /**
     * A blob is fetched whole only if it is at most an eighth of the cache: a cache that cannot
     * hold the shards being read at random until their members are read evicts them and fetches
     * them again. With a 20 MB cache and 11 MB shards walked class folder by class folder, whole
     * shards were evicted before their members were read and fetched again for the next folder:
     * 1.7 GB fetched for 55 MB of shards, 159 MB with this bound. Read-ahead windows are bounded
     * by the cache too ({@link #maxWindowBlocks}).
     */
    static final int DENSE_CACHE_FRACTION = 8;
    /**
     * A blob fetched whole for random reads counts against what the cache keeps
     * ({@link #denseRoom}) until nobody has read it for a minute: the blobs fetched whole must fit
     * together. A shuffled epoch reads every shard at random at once, so each became dense after
     * a few dozen reads and all were fetched whole; over more than the cache keeps, a shard was
     * evicted before most of its members were read, and they were read through 1 MiB blocks
     * fetched again (120,000 members of 6-14 KB in ten 130 MB shards, through a 1.1 GB cache:
     * 23.4x and 33.6x what two epochs read). Past the room, shards stay as they are: their members
     * are fetched on their own.
     */
    static final long DENSE_IDLE_NANOS = 60_000_000_000L;
    /** Missed seeks of a blob refused for want of room before it is asked again (the look costs a walk over the tracked blobs at most once a second). */
    static final int DENSE_RECHECK_SEEKS = 64;

    private final long denseMaxBlobBytes;
    /** What the cache keeps of blocks: the blobs fetched whole for random reads together fit in it. */
    private final long denseRoom;
    /** Bytes of the blobs fetched whole for random reads and read within {@link #DENSE_IDLE_NANOS}. */
    private final java.util.concurrent.atomic.AtomicLong denseBytes = new java.util.concurrent.atomic.AtomicLong();
    /** When the tracked blobs were last walked for dense ones gone idle. */
    private final java.util.concurrent.atomic.AtomicLong lastIdleWalk = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.function.LongSupplier nanoClock;
    /** What the cache holds out of eviction for blocks read ahead: bounds windows ({@link #maxWindowBlocks}). */
    private final long heldRoom;
    /**
     * Whether scans are followed across readers and shards (reads inside a scan's read-ahead
     * continue it; {@link #prime}): only in a cache of at least {@link #FOLLOW_SCANS_MIN_CACHE_BYTES}.
     */
    private final boolean followScans;
    /**
     * Smallest cache in which a scan is followed across readers and shards: eight full windows,
     * 512 MiB. In a smaller one a scan kept at its full 64 MiB window, and the next shard's,
     * pushed out blocks before their readers came (audit 49: a 64 MB cache over shards of 63-110
     * MB fetched 1,255-1,493 MB for 639 MB read, against 1,042-1,087 without; two jobs through a
     * 300 MB cache fetched 41-55% more). The default cache is 100 GB.
     */
    static final long FOLLOW_SCANS_MIN_CACHE_BYTES = 8 * MAX_WINDOW_BYTES;

    /**
     * @param cacheBytes what the cache may hold: bounds whole-blob fetches
     * @param heldRoom   what the cache holds out of eviction for blocks read ahead and not yet read
     *                   ({@link BlockStorage#heldRoomBytes}): bounds windows
     */
    ReadAhead(Suspects suspects, ParquetLayouts layouts, long cacheBytes, long heldRoom) {
        this(suspects, layouts, cacheBytes, heldRoom, System::nanoTime);
    }

    /** As above, with the clock that tells when a blob fetched whole was last read (tests). */
    ReadAhead(Suspects suspects, ParquetLayouts layouts, long cacheBytes, long heldRoom,
              java.util.function.LongSupplier nanoClock) {
        this.nanoClock = nanoClock;
        this.suspects = suspects;
        this.layouts = layouts;
        this.denseMaxBlobBytes = Math.min(DENSE_MAX_BLOB_BYTES, cacheBytes / DENSE_CACHE_FRACTION);
        this.denseRoom = heldRoom >= cacheBytes ? cacheBytes : cacheBytes - heldRoom;
        this.lastIdleWalk.set(nanoClock.getAsLong() - 1_000_000_000L);
        this.followScans = cacheBytes >= FOLLOW_SCANS_MIN_CACHE_BYTES;
        this.heldRoom = heldRoom;
    }

    /** In a cache of {@code cacheBytes} that holds nothing out of eviction: for tests. */
    ReadAhead(Suspects suspects, ParquetLayouts layouts, long cacheBytes) {
        this(suspects, layouts, cacheBytes, Long.MAX_VALUE);
    }

    /**
     * The largest window, in blocks of {@code bs}: {@link #MAX_WINDOW_BYTES}, or what the cache
     * holds of blocks read ahead and not yet read, less the block being read, at a block's weight
     * on disk (its data and {@link BlockFile}'s header), where that is less (on disk a quarter of
     * the cache, {@link DiskBlocks#PIN_FRACTION}: caches under about 261 MiB). A larger window is more
     * than may be held, and its oldest blocks, the next to be read, were evicted unread (audit 52,
     * F2): one {@code cat} of 629 MB at a time through a 100 MB cache fetched 1.33-2.27x what it
     * read, 0.99-1.07x with this bound; through 150 MB 0.90-1.58x, 0.98-1.04x; three at once
     * through 100 MB 1.88-2.74x, 1.05-1.12x (docs/cache.md, "Eviction"). The room is one for all
     * readers, so several at once still hold a little more than it. (Bounded by the cache before
     * read-ahead was held out of eviction, windows cost more: 248-295 MB fetched for 200 MB read
     * through a 50 MB cache, against 212-222 MB unbounded.)
     */
    int maxWindowBlocks(int bs) {
        long byRoom = heldRoom / ((long) bs + BlockFile.headerLength(bs)) - 1;
        return (int) Math.max(1, Math.min(MAX_WINDOW_BYTES / bs, byRoom));
    }

    /** Without Parquet layouts (they are never learned), in a large cache: for tests of everything else. */
    ReadAhead(Suspects suspects) {
        this(suspects, new ParquetLayouts(null), Long.MAX_VALUE);
    }

    /**
     * Records a read of {@code [offset, offset+len)} ({@code missed}: a block of it was not
     * cached) and says what to read ahead if it continues a sequential stream.
     *
     * @param runBlocks blocks of one read-ahead GET at this block size: read-ahead tops up once a whole run fits
     */
    Advice onRead(BlobRef blob, BlockHashList list, long offset, int len, boolean missed, int runBlocks) {
        return onRead(blob, list, offset, len, missed, runBlocks, false);
    }

    /**
     * As above; a {@code lookup} ({@link BlobMember#lookup}: a tensor) continues a stream only
     * where it ended exactly (the next tensor of a pass in file order), not within the gaps a
     * scan of tar members skips: 250 random tensors of 1 KiB among a file's 5,000 land within
     * 16 KiB of one another often, and each such landing opened a 2 MiB window.
     */
    Advice onRead(BlobRef blob, BlockHashList list, long offset, int len, boolean missed, int runBlocks,
                  boolean lookup) {
        boolean first = false;
        Access a = blobs.getIfPresent(blob.id());
        if (a == null) {
            Access fresh = new Access();
            a = blobs.asMap().putIfAbsent(blob.id(), fresh);
            if (a == null) {
                a = fresh;
                first = true;
            }
        }
        long end = offset + len;
        int bs = list.blockSize();
        long gap = lookup ? 0 : Math.min(FORWARD_GAP_BYTES, bs);
        long slack = lookup ? 0 : Math.min(BACKWARD_SLACK_BYTES, bs);
        int failures = suspects.failures(blob.id());
        boolean suspect = failures > 0 && suspects.suspect(blob.id());
        ColumnChunks chunks = layouts.onRead(blob, list, offset, len);
        synchronized (a) {
            if (a.primed) {
                a.primed = false;
                first = true;
            }
            if (a.dense && a.counted.get()) {
                a.lastReadNanos = nanoClock.getAsLong(); // still read: its room stays taken
            }
            if (failures != a.failuresSeen) {
                // A block failed verification since: every window closes.
                a.failuresSeen = failures;
                for (Stream t : a.streams) {
                    t.window = 0;
                }
            }
            a.clock++;
            Stream s = null;
            Stream oldest = a.streams[0];
            for (Stream t : a.streams) {
                if (continues(t, offset, gap, slack, bs, followScans)) {
                    s = t;
                    break;
                }
                if (t.lastUse < oldest.lastUse) {
                    oldest = t;
                }
            }
            if (s == null) {
                // A seek: start a new stream with no read-ahead, replacing the least recently used.
                if (oldest.window > 0 && !oldest.grew && !readAheadTaken(a, oldest, offset, bs)) {
                    a.shortWindows++; // opened, and nobody read what it read ahead
                }
                oldest.end = end;
                oldest.runStart = offset;
                oldest.began = offset;
                oldest.grew = false;
                oldest.window = 0;
                oldest.scanEnded = false;
                oldest.scheduledUntil = (int) ((end - 1) / bs) + 1;
                oldest.lastUse = a.clock;
                int result = first ? FIRST : 0;
                if (missed && lookup) {
                    // Counted while suspect too: a blob that once served a bad byte still tells sparse
                    // lookups from dense ones (its blocks are then demanded, never read ahead).
                    a.missedLookups++;
                    a.missedLookupBytes += len;
                    if (a.lookupBlocks == null) {
                        a.lookupBlocks = new java.util.BitSet();
                    }
                    int firstBlock = (int) Math.min(offset / bs, LOOKUP_BLOCKS_TRACKED);
                    int lastBlock = (int) Math.min((end - 1) / bs, LOOKUP_BLOCKS_TRACKED);
                    a.lookupBlocks.set(firstBlock, lastBlock + 1);
                    if (!a.dense && !suspect && a.missedLookups >= DENSE_MIN_SEEKS
                            && a.missedLookupBytes * LOOKUP_DENSE_FRACTION >= blob.size()
                            && blob.size() <= denseMaxBlobBytes && !chunks.known()
                            && a.missedLookups >= a.recheckAt && roomForWhole(a, blob, a.missedLookups)) {
                        a.dense = true;
                        result |= DENSE_RANDOM;
                    }
                } else if (missed && !a.dense && !suspect) {
                    a.missedSeeks++;
                    a.missedSeekBytes += len;
                    if (dense(a, blob, list, chunks) && a.missedSeeks >= a.recheckAt
                            && roomForWhole(a, blob, a.missedSeeks)) {
                        a.dense = true;
                        result |= DENSE_RANDOM;
                    }
                }
                return Advice.of(result);
            }
            s.lastUse = a.clock;
            if (offset > s.end) {
                s.runStart = offset;
            }
            int prevLast = (int) ((s.end - 1) / bs);
            s.end = Math.max(s.end, end);
            int last = (int) ((s.end - 1) / bs);
            if (suspect) {
                // Follow the stream, but fetch nothing ahead of it: those blocks would most likely
                // fail verification too, and a reader that goes on after an EIO (the kernel's own
                // read-ahead does) would otherwise cost whole windows of wrong bytes.
                s.window = 0;
                s.scheduledUntil = last + 1;
                return first ? Advice.FIRST_ONLY : Advice.NONE;
            }
            int maxWindow = maxWindowBlocks(bs);
            if (s.end - s.began > SHORT_RUN_BYTES) {
                s.grew = true;
            }
            if (s.window == 0) {
                if (!s.grew && !lookup && !chunks.known() && a.shortWindows >= SHORT_RUNS_MIN
                        && 2L * a.shortWindows > a.windowsOpened) {
                    return first ? Advice.FIRST_ONLY : Advice.NONE; // short runs, and not past one yet
                }
                s.window = Math.min(INITIAL_WINDOW_BLOCKS, maxWindow);
                if (lookup) {
                    s.grew = true; // lookups are not counted
                } else if (++a.windowsOpened >= SHORT_RUNS_DECAY) {
                    a.windowsOpened /= 2;
                    a.shortWindows /= 2;
                }
            } else if (last > prevLast) {
                s.window = Math.min(s.window * 2, maxWindow);
            }
            int from = Math.max(s.scheduledUntil, last + 1);
            int limit = limit(s, chunks, list, last);
            int to = Math.min(limit, last + 1 + s.window);
            // Top up once half a window, or one whole GET's run if that is less, is free ahead:
            // read-ahead goes out in large GETs rather than block by block. At the full window and
            // 32 MiB runs (a fast link) that is exactly half of it, one whole GET of
            // FetchScheduler.MAX_RUN_BYTES ("less than half" asked for 33 blocks and so one extra
            // 1-block GET per top-up); with 4 MiB runs (a 25 MB/s link, ConnectionRate) it is
            // every 4 blocks, so the window stays nearly full: 15 GETs in flight, not 8 to 16.
            // The blob's end, or the column chunk's, may come first: then the rest goes out at once.
            boolean topUp = from < to && (to - from >= Math.min(s.window / 2, runBlocks) || to == limit);
            if (topUp) {
                s.scheduledUntil = to;
            }
            int flags = first ? FIRST : 0;
            // Said once the scan's read-ahead covers the blob to its end, whether or not this read
            // topped it up: a primed stream has all of a shard smaller than its window scheduled
            // from the start and never tops up, and the shard after it must be primed too (the
            // review: every second shard of 64 MiB or less was met cold).
            if (s.scheduledUntil >= list.blockCount() && s.window >= scanWindow(bs) && !chunks.known()
                    && !s.scanEnded) {
                s.scanEnded = true;
                flags |= SCAN_ENDS;
            }
            if (topUp) {
                return new Advice(flags, from, to, s.window);
            }
            return (flags & SCAN_ENDS) != 0 ? new Advice(flags, 0, 0, s.window) : Advice.of(flags);
        }
    }

    /**
     * Whether a read at {@code offset} continues stream {@code t}: within {@code gap} after its
     * end or {@code slack} before it once its window is open, within {@link #OPEN_GAP_BYTES}
     * either way before that; and, once its window is a scan's ({@link #SCAN_ENDS_MIN_WINDOW_BLOCKS}),
     * anywhere past its end in the blocks it has already read ahead (not for lookups, {@code gap == 0}).
     */
    private static boolean continues(Stream t, long offset, long gap, long slack, int bs, boolean followScans) {
        if (t.end <= 0 && t.window == 0) {
            return false; // never used (a primed stream has its window and no end yet)
        }
        long after = t.window > 0 ? gap : Math.min(gap, OPEN_GAP_BYTES);
        long before = t.window > 0 ? slack : Math.min(slack, OPEN_GAP_BYTES);
        if (followScans && t.window >= scanWindow(bs) && gap > 0 && offset > t.end
                && offset < (long) t.scheduledUntil * bs) {
            // Within what a scan already reads ahead: another reader of the same scan. Not for a
            // window of 2 or 4 blocks: random reads landing in those grew them on their own (the
            // review: a shuffled pass over a shard of 24 blocks said SCAN_ENDS in 82 of 200 seeds).
            return true;
        }
        return offset >= t.end - before && offset <= t.end + after;
    }

    /**
     * Whether someone read in what stream {@code o} read ahead: the seek at {@code offset} that
     * replaces it, or another stream that began there. Caller holds the blob's lock.
     */
    private static boolean readAheadTaken(Access a, Stream o, long offset, int bs) {
        long from = o.end;
        long to = (long) o.scheduledUntil * bs;
        if (offset >= from && offset < to) {
            return true;
        }
        for (Stream t : a.streams) {
            if (t != o && t.end > 0 && t.began >= from && t.began < to) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether the cache keeps room for {@code a}'s blob fetched whole beside the others fetched
     * whole and still read ({@link #DENSE_IDLE_NANOS}); if so it counts against that room from now
     * on. Refused, it asks again {@link #DENSE_RECHECK_SEEKS} missed seeks later. Caller holds
     * {@code a}'s lock.
     */
    private boolean roomForWhole(Access a, BlobRef blob, int seeks) {
        long size = blob.size();
        long now = nanoClock.getAsLong();
        if (!reserveDense(size)) {
            walkIdle(now);
            if (!reserveDense(size)) {
                a.recheckAt = seeks + DENSE_RECHECK_SEEKS;
                return false;
            }
        }
        a.countedBytes = size;
        a.lastReadNanos = now;
        a.counted.set(true);
        if (blobs.asMap().get(blob.id()) != a) {
            uncount(a); // no longer tracked: its removal came before it counted (the review)
        }
        return true;
    }

    private boolean reserveDense(long size) {
        while (true) {
            long now = denseBytes.get();
            if (now + size > denseRoom) {
                return false;
            }
            if (denseBytes.compareAndSet(now, now + size)) {
                return true;
            }
        }
    }

    /** At most once a second: the blobs fetched whole that nobody read for {@link #DENSE_IDLE_NANOS} no longer count. */
    private void walkIdle(long now) {
        long last = lastIdleWalk.get();
        if (now - last < 1_000_000_000L || !lastIdleWalk.compareAndSet(last, now)) {
            return;
        }
        for (Access o : blobs.asMap().values()) {
            if (o.counted.get() && now - o.lastReadNanos > DENSE_IDLE_NANOS) {
                uncount(o);
            }
        }
    }

    /** Takes a blob's bytes off {@link #denseBytes} if they count there (once). */
    private void uncount(Access a) {
        if (a != null && a.counted.compareAndSet(true, false)) {
            denseBytes.addAndGet(-a.countedBytes);
        }
    }

    /** Bytes of the blobs fetched whole for random reads that count against the cache's room (tests). */
    long denseBytes() {
        return denseBytes.get();
    }

    /** Whether the blob's lookups are many a block they touched ({@link #LOOKUP_SPARSE_MIN}). */
    private static boolean lookupsDense(Access a) {
        return a.missedLookups >= LOOKUP_SPARSE_MIN && a.lookupBlocks != null
                && a.missedLookups >= (long) LOOKUP_PER_BLOCK * a.lookupBlocks.cardinality();
    }

    /**
     * Whether the blob's missed seeks make it densely read at random: enough of them by count
     * and by bytes, a blob small enough, and not a Parquet file whose column chunks are known (a
     * query reads some chunks, never all: each read fetches what it reads).
     */
    private boolean dense(Access a, BlobRef blob, BlockHashList list, ColumnChunks chunks) {
        return a.missedSeeks >= DENSE_MIN_SEEKS
                && (long) a.missedSeeks * DENSE_BLOCKS_PER_SEEK >= list.blockCount()
                && a.missedSeekBytes * DENSE_BYTES_FRACTION >= blob.size()
                && blob.size() <= denseMaxBlobBytes
                && !chunks.known();
    }

    /**
     * The one place read-ahead's reach is bounded: the block past which stream {@code s} may not
     * read ahead. The blob's end; in a Parquet file with known chunks, the end of the column chunk
     * the stream is in (between chunks, the start of the next), since a query reads the chunks of
     * the columns it needs and skips the rest; nothing past what was read while the stream is
     * less than {@link #READ_AROUND_BYTES} into the chunk after the one it began in (the kernel's
     * read-around past a chunk's end goes that far: reading ahead to that chunk's end fetched
     * 3 MB a chunk no one wanted); but a stream that went without a gap through
     * {@link #SCAN_CHUNKS} chunks past where it began, and {@link #SCAN_MIN_BYTES}, is a scan and
     * is read ahead as advised
     * (bounding it made {@code dd} of a Parquet file stop every GET at a chunk's end: 125 GETs
     * instead of 26, and slower).
     */
    private static int limit(Stream s, ColumnChunks chunks, BlockHashList list, int last) {
        int all = list.blockCount();
        if (!chunks.known()) {
            return all;
        }
        long at = s.end - 1;
        int began = chunks.ordinal(s.runStart + RUN_START_SLACK_BYTES);
        int now = chunks.ordinal(at);
        if (now - began >= SCAN_CHUNKS && at - s.runStart >= SCAN_MIN_BYTES) {
            return all; // a scan
        }
        if (now > began && at - chunks.start(now - 1) < READ_AROUND_BYTES) {
            return last + 1; // maybe only the kernel's read-around past the chunk it began in
        }
        long end = chunks.regionEnd(at);
        return end == Long.MAX_VALUE ? all : (int) Math.min(all, (end - 1) / list.blockSize() + 1);
    }

    /**
     * A scan of the shard before {@code blob} reached its end ({@link #SCAN_ENDS}) with a window
     * of {@code window} blocks: {@code blob} gets a stream at its start with that window and its
     * first window read ahead (as a scan of the two shards end to end would have it; half a
     * window left the reader waiting where it ended, 32 MiB in), so that the scan's first read of it continues the stream
     * instead of seeking (the window grows and is topped up from there as for any stream). A blob
     * read before (an earlier epoch) gets it in place of its least recently used stream (its
     * streams of then are no sign of a reader now: measured, a check for a stream near its start
     * found the last epoch's and left two shard starts of three unprimed); nothing is done when
     * it is primed already and not read since.
     *
     * @return the blocks {@code [0, n)} to fetch ahead; 0 when none are to be
     */
    int prime(BlobRef blob, BlockHashList list, int window) {
        int bs = list.blockSize();
        int maxWindow = maxWindowBlocks(bs);
        int w = Math.max(1, Math.min(window, maxWindow));
        int blocks = Math.min(list.blockCount(), w);
        if (!followScans) {
            return 0; // a cache this small keeps no window of the next shard
        }
        // A blob tracked only by its priming may be evicted from the tracker (8,192 blobs) before
        // its first read: that read then seeks, and waits for the blocks already in flight.
        Access a = blobs.getIfPresent(blob.id());
        if (a == null) {
            Access fresh = new Access();
            fresh.primed = true;
            a = blobs.asMap().putIfAbsent(blob.id(), fresh);
            if (a == null) {
                a = fresh;
            }
        }
        synchronized (a) {
            Stream oldest = a.streams[0];
            for (Stream t : a.streams) {
                if (t.window > 0 && t.end == 0) {
                    return 0; // primed already, and not read since (the other worker's stream said SCAN_ENDS too)
                }
                if (t.lastUse < oldest.lastUse) {
                    oldest = t;
                }
            }
            oldest.end = 0;
            oldest.runStart = 0;
            oldest.began = 0;
            oldest.grew = true;
            oldest.window = w;
            oldest.scheduledUntil = blocks;
            oldest.scanEnded = false;
            oldest.lastUse = ++a.clock;
        }
        return blocks;
    }

    /**
     * The caller of {@link #onRead} could fetch the blocks it was advised only up to
     * {@code upTo} (the read-ahead budget was used up): a later read of the stream asks again
     * from there.
     */
    void scheduled(BlobId blob, int to, int upTo) {
        if (upTo >= to) {
            return;
        }
        Access a = blobs.getIfPresent(blob);
        if (a == null) {
            return;
        }
        synchronized (a) {
            // The stream that topped up (or was primed) just now: the newest of those with that
            // end (the review: a stream of the last epoch with the same end was lowered in its
            // place, and the refused blocks were never asked for again).
            Stream lowered = null;
            for (Stream t : a.streams) {
                if (t.scheduledUntil == to && (lowered == null || t.lastUse > lowered.lastUse)) {
                    lowered = t;
                }
            }
            if (lowered != null) {
                lowered.scheduledUntil = upTo;
            }
        }
    }

    /**
     * Whether a read at {@code offset} of the archive member ending at {@code memberEnd} is better
     * served by the blob's blocks than by fetching the member on its own ({@link MemberReads}):
     * it continues one of the blob's sequential streams (read-ahead brings those blocks), or the
     * blob is being fetched whole (dense). A stream that ends exactly at the member's end last
     * read this very member (fetched on its own, then evicted or damaged): reading it again is no
     * continuation. A {@code lookup} continues a stream only where it ended exactly (see
     * {@link #onRead(BlobRef, BlockHashList, long, int, boolean, int, boolean)}), and follows the
     * blocks once the blob's lookups are dense ({@link #LOOKUP_SPARSE_MIN}). Records nothing:
     * the read is recorded by {@link #onRead} once it is decided.
     */
    boolean followsBlocks(BlobRef blob, BlockHashList list, long offset, long memberEnd, boolean lookup) {
        if (lookup && blob.size() < BlobMember.LOOKUP_MIN_BLOB_BYTES) {
            return true;
        }
        Access a = blobs.getIfPresent(blob.id());
        if (a == null) {
            return false;
        }
        int bs = list.blockSize();
        long gap = lookup ? 0 : Math.min(FORWARD_GAP_BYTES, bs);
        long slack = lookup ? 0 : Math.min(BACKWARD_SLACK_BYTES, bs);
        synchronized (a) {
            if (a.dense || lookup && lookupsDense(a)) {
                return true;
            }
            for (Stream t : a.streams) {
                if (t.end != memberEnd && continues(t, offset, gap, slack, bs, followScans)) {
                    return true;
                }
            }
        }
        return false;
    }
}
