/**
 * Warp's read path: the content-addressed block cache ({@link io.warpdata.blobcache.cache.BlockCache}),
 * a cache-less verified reader ({@link io.warpdata.blobcache.cache.DirectBlobReader}), and read-ahead.
 *
 * <h2>Who does what</h2>
 * {@code BlockCache} is the read path (cache hits, misses handed over, bytes copied out) and the
 * entry point of the operations; {@code FetchScheduler} decides what is fetched and when (one
 * {@code Fetch} per block in flight, demand before read-ahead, runs of missing blocks, hybrid
 * whole-blob fetches, worker and budget bounds); {@code RunFetcher} fetches one run (one ranged
 * GET, verification and hand-over as bytes stream in, then the cache writes); {@code Warmer} is
 * {@code warpctl warm}; {@code ReadAhead} tracks access per blob; {@code OrderPrefetcher} fetches
 * ahead in an order a reader announced ({@code OrderPlan}); {@code HashLists} holds block
 * hash lists; {@code DiskBlocks} / {@code MemoryBlocks} store blocks; {@code MemberReads} serves
 * archive members by their own SHA-256 and fetches small ones on their own, with
 * {@code MemberLocator} remembering where members' bytes were served from. For a first read:
 * {@code WholeBlobReads} reads a member index in one GET, {@code HashListPrefetcher} loads
 * shards' lists before reads ask for them (below).
 *
 * <h2>First touch: what a first read waits for</h2>
 * A block can be fetched only once its blob's block hash list is in (the list gives the block
 * size and each block's SHA-256), so a cold blob costs the list's round trip and then the
 * block's. Two things take the list off the path of a version's first read (docs/cache.md
 * counts the round trips):
 * <ul>
 * <li>{@link io.warpdata.blobcache.cache.BlockCache#readIndex} (member indexes): an index whose
 *     list is neither in memory nor on disk comes whole in one GET, checked against its id, the
 *     SHA-256 of all of it; its list loads alongside and its blocks are cached once it is in.
 *     Up to {@code WholeBlobReads.MAX_BYTES} = 32 MiB, the longest GET the cache makes: beyond
 *     it the transfer, not a round trip, is what the reader waits for.</li>
 * <li>{@link io.warpdata.blobcache.cache.BlockCache#prefetchHashLists}: the vfs asks for the
 *     lists of an artifact's or a table's shards (at most 64, {@code WarpTree.HASH_LISTS_PREFETCHED})
 *     when its folder is entered, so that in an artifact they load while its member index does. {@code HashListPrefetcher}
 *     runs at most {@code IN_FLIGHT} = 16 loads at once (the lists of 16 shards in one round
 *     trip; a quarter of the S3 client's 64 connections), within {@code MAX_BYTES_IN_FLIGHT} =
 *     64 MiB of what their lists could take (the bound each is fetched with; a blob whose list
 *     could take more is never prefetched), keeps {@code QUEUED} = 1024 waiting (the oldest
 *     dropped), and stops for {@code PAUSE} = 5 s when a load finds the store not answering.
 *     Loads go through {@code HashLists}, so a read that needs a list being prefetched waits for
 *     that load, and one whose list is still queued loads it itself: a read never waits for the
 *     queue.</li>
 * </ul>
 *
 * <h2>Blocks and verification</h2>
 * A blob is read in the fixed blocks of its {@link io.warpdata.manifest.BlockHashList} (1 MiB by
 * default). Every block fetched from the store is checked against its SHA-256 before any reader
 * sees it; a mismatch is fetched once more, then the read fails with
 * {@link io.warpdata.blobcache.cache.BlockVerificationException} and one log line naming the blob.
 * Blocks on disk carry a CRC32C per 64 KiB chunk, checked on every read for the chunks the read
 * touches, so a block damaged on disk is a miss, never served. Cached blocks are keyed by
 * (blob id, block size, index): two datasets sharing a blob share its cached bytes.
 *
 * <h2>Read-ahead (prefetch)</h2>
 * Access is tracked <em>per blob</em>, not per file handle ({@code ReadAhead}). PyTorch's
 * {@code ImageFolder} opens, reads and closes thousands of small members lying one after another
 * in a tar shard; per handle each is a short read, per blob it is a sequential scan, and it gets
 * read-ahead like one.
 * <ul>
 * <li>Each blob keeps up to {@code STREAMS_PER_BLOB} = 4 streams (end offset, window). A read
 *     continues a stream when it starts at most {@code FORWARD_GAP_BYTES} = 256 KiB after the
 *     stream's end or at most {@code BACKWARD_SLACK_BYTES} = 256 KiB before it (both capped at one
 *     block). 256 KiB covers tar headers (0.5-1.5 KiB) and skipped small members, and DataLoader
 *     workers finishing neighbouring members out of order; a longer jump is a seek. Four streams
 *     let a few readers scan one shard at different places (as ZFS's zfetch does) without
 *     each one's reads looking like seeks to the others.</li>
 * <li>A read that continues no stream is a <em>seek</em>: it replaces the least recently used
 *     stream with a new one whose window is 0. Random access therefore costs no extra bytes: the
 *     window only opens once a stream is continued.</li>
 * <li>The first continuation opens the window at {@code INITIAL_WINDOW_BLOCKS} = 2 blocks (2 MiB):
 *     small enough that a short sequential run (a Parquet page, two members) wastes little, large
 *     enough to hide one GET's latency behind the reader. Each time the stream reaches a new block
 *     the window doubles, up to {@code MAX_WINDOW_BYTES} = 64 MiB: about half a second of one S3
 *     stream, enough to keep {@code maxConcurrentFetches} GETs busy for a fast reader.</li>
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
 *     (an eighth of it touched at random, reads that hit the cache do not count); it is then
 *     fetched whole in the background as hybrid mode does at first touch (runs sized as above,
 *     128 MiB of them in flight), once per tracked blob, for blobs up to 1 GiB
 *     ({@code dense_random_blobs} counts them). A query reading a few column chunks of a large
 *     Parquet file stays far below an eighth and keeps costing only what it reads.</li>
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
 * <h2>Members by their own hash (DESIGN section 6, issue 16)</h2>
 * A tar member's read ({@link io.warpdata.blobcache.cache.BlobReader#readMember}) carries, besides its
 * shard and offset, the member's SHA-256 from the member index. {@code BlockCache.readMember}
 * looks in this order:
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
 *     30 KB image costs 30 KB, not a 1 MiB block;</li>
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
 * header per file as blocks have), and on disk at most {@code DiskBlocks.MAX_MEMBERS} = 32,768
 * are kept (their index entries cost heap the byte limit does not bound; ~13 MiB at most); in
 * remote mode each entry weighs {@code MemoryBlocks.ENTRY_HEAP_BYTES} = 256 bytes more than its
 * data. The locator holds at most {@code MemberLocator.SLOTS} = 65,536 locations (~5 MiB) of
 * members up to {@code MemberLocator.MAX_LOCATED_BYTES} = 16 MiB, 4 ways per set, losing a
 * location to a newer one when its set is full. Member GETs run on the fetch executor, at most
 * {@code maxConcurrentFetches} at once (8 MiB of buffers at the default 32); readers wait for them
 * until their deadline, single flight by hash.
 * <h2>Order plans (prefetch in an announced order)</h2>
 * A reader that knows its order (the loader {@code warpctl init} writes knows each shuffled epoch
 * before its first read) hands it over as an {@code OrderPlan}; {@code OrderPrefetcher} fetches
 * the 1 MiB grains in order of first need, each with its neighbours in the shard that are needed
 * within the horizon, as one run of up to the connection's run size, queued exactly like
 * read-ahead (same queue, budget, workers; demand first). Its constants:
 * <ul>
 * <li>Horizon {@code max(MIN_AHEAD_BYTES = 256 MiB, cache limit / 8)}, at most
 *     {@code MAX_AHEAD_BYTES} = 4 GiB and half the cache (remote mode: half the memory cache):
 *     the grains needed by the next that many bytes past the reader are fetched, nothing
 *     further. 256 MiB is a second of a fast link and well past the few batches a DataLoader's
 *     workers read at once; a larger horizon coalesces more (a dataset within it is fetched in
 *     whole runs, whatever the order) but keeps blocks waiting in the cache longer. After
 *     reaching the horizon the walk waits until the reader has made room for a quarter of it, so
 *     runs go out in batches whose neighbours coalesce.</li>
 * <li>{@code MAX_PLAN_BYTES} = 64 MiB for all plans together (8 bytes per member, 12 per MiB
 *     read: an ImageNet epoch of 1.28 M members is about 12 MiB), {@code MAX_PLANS} = 16 at once
 *     (one per rank of a couple of 8-GPU jobs); the least recently followed make room.</li>
 * </ul>
 *
 * <h2>Cold-read CPU (what a miss costs, and why)</h2>
 * On a cold sequential read the machine's CPU, not the network, is the limit on a small host,
 * so every fetched byte's path is kept short. Measured with {@code FetchBench} (test scope) and
 * async-profiler on the fetch threads, a miss costs, per byte: the socket read (the kernel's copy
 * into the JDK's temporary direct buffer, then one copy into the run buffer: Java's socket API
 * and the SDK's InputStream allow no fewer), SHA-256 (the SHA-NI intrinsic: near the hardware
 * cost), CRC32C of the 64 KiB chunks, and the block file's write (one copy into a direct buffer,
 * the kernel's copy into the page cache, ext4's per-page delayed allocation), plus per GET the
 * SDK's request handling and per block a file create and rename.
 * <ul>
 * <li>Fetch buffers are pooled ({@code RunBuffers}, {@code FetchScheduler.POOLED_BUFFER_BYTES} =
 *     128 MiB of idle buffers at most): a fresh 8 MiB array per GET was zeroed by the JVM,
 *     page-faulted in by the kernel 4 KiB at a time (zeroed again) and, being a G1 humongous
 *     object, collected by collections of its own: about 16% of the fetch threads' CPU and
 *     1 GiB of allocation per GiB read. A buffer returns to the pool only when the fetch and
 *     every reader copying out of it have let go (a count per run); a reader that comes later
 *     reads the block from the cache instead.</li>
 * <li>A block file is assembled (header encoded in place, then the data) in one per-thread
 *     direct buffer and written with one {@code write}: from a heap array the JDK copies into a
 *     temporary direct buffer anyway (two of them, and a 4 KiB header allocation, for the old
 *     gathering write), so this is the only copy on the JVM side. Temp file + rename is kept
 *     (crash safety); no fsync (see {@code DiskBlocks}).</li>
 * <li>Measured but left as they are: the kernel's side of the block write (page-cache copy and
 *     ext4's per-4-KiB-page delayed allocation, about a fifth of the fetch threads' CPU) could
 *     only go with O_DIRECT, which would make every write wait for the device and send the
 *     reads that follow a cold read to disk instead of the page cache; runs of 16 MiB would halve
 *     the SDK's per-GET cost (about 3 ms of CPU per GET before its code is fully compiled) but
 *     also halve the GETs one sequential reader keeps in flight on real S3; writing blocks on
 *     other threads than the GET's would not lower the CPU per byte, which is the limit here.</li>
 * </ul>
 *
 * <h2>Modes</h2>
 * {@link io.warpdata.blobcache.cache.CacheMode}: AUTO (disk cache + read-ahead), REMOTE (bounded
 * memory only), HYBRID (AUTO, and a blob's first read queues the whole blob at low priority,
 * {@code HYBRID_RUNS_IN_FLIGHT} = 4 runs at a time), LOCAL (cached bytes only; a miss is
 * {@link io.warpdata.blobcache.cache.BlockNotCachedException}).
 */
package io.warpdata.blobcache.cache;
