package io.warpdata.vfs;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import io.warpdata.blobcache.cache.BlobMember;
import io.warpdata.blobcache.cache.BlobReader;
import io.warpdata.blobcache.cache.BlockVerificationException;
import io.warpdata.blobcache.cache.MemberVerificationException;
import io.warpdata.store.StoreException;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.MemberIndex;
import io.warpdata.manifest.ManifestCorruptedException;
import io.warpdata.manifest.TensorHashes;
import io.warpdata.manifest.TensorHeaders;
import io.warpdata.manifest.formats.SafetensorsException;
import io.warpdata.manifest.formats.SafetensorsHeader;
import io.warpdata.manifest.formats.TensorPaths;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The {@link TensorFolder}s of safetensors members, made from their headers, which are read
 * through the verified block cache like any member bytes (the first read of a file's header is
 * one ranged GET of the block that holds it, usually the file's first), and kept per member:
 * a folder is looked up many times while a loader opens its tensors.
 */
final class TensorFolders {
    private static final Logger LOG = LoggerFactory.getLogger(TensorFolders.class);
    /**
     * Heap a kept tensor takes beside its path's characters and its hash ({@link TensorFolder#heapBytes}):
     * its place and length in the shard, its NPY header's index, its listing entry and its path's
     * String. Measured: 92 bytes a tensor (126-138 with hashes) for paths of 20-23 characters. The
     * folder used to keep a content object, a name and a listing entry per tensor, 900 bytes
     * with the node each listed file took (audit 36), and two files of 120,000 tensors did not
     * fit the budget together (audit 40).
     */
    static final int BYTES_PER_TENSOR = 80;
    /** Heap a header byte may cost while its folder is made ({@link TensorPaths#HEAP_PER_HEADER_BYTE}). */
    static final int HEAP_PER_HEADER_BYTE = TensorPaths.HEAP_PER_HEADER_BYTE;
    /**
     * Share of the heap the folders held may take, together: 3/10 (115 MiB at 384m: about a
     * million tensors of short keys). A file's header may take 1/8 of it while read (14 MiB at
     * 384m, about 200,000 tensors of short keys).
     */
    private static final int HEAP_SHARE_TENTHS = 3;
    /** How often a folder may be let go for room and made again in 10 minutes before the log says the budget is too small. */
    static final int REMADE_WARNING = 3;

    /** How long a folder waits for the others being made to finish: a minute, far longer than one takes. */
    static final long BUILD_WAIT_SECONDS = 60;

    private final BlobReader reader;
    private final long budgetBytes;
    /**
     * Heap of the folders being made, in KiB at {@link #HEAP_PER_HEADER_BYTE} a header byte:
     * together they stay within the budget (session 30's review, M2: each FUSE thread could make
     * one as large as the budget at the same time, beside the folders kept).
     */
    private final Semaphore building;
    /**
     * Folders kept, weighed by their tensors: bounded by count (256) they filled the heap when
     * files of many tensors were listed in turn (audit 36: warpd died of OutOfMemoryError at the
     * sixth of six files of 100,000 tensors).
     */
    private final Cache<Key, TensorFolder> folders;
    /** How often each folder was let go for room in the 10 minutes since the first time (for {@link #remade}). */
    private final Cache<Key, AtomicInteger> madeLately = Caffeine.newBuilder()
            .maximumSize(4096).expireAfterWrite(Duration.ofMinutes(10)).build();
    private final AtomicLong lastRemadeLog = new AtomicLong(
            System.nanoTime() - TimeUnit.MINUTES.toNanos(2));
    /** Folders being made, each by the first thread that needed it: the others wait for it. */
    private final ConcurrentHashMap<Key, CompletableFuture<TensorFolder>> making = new ConcurrentHashMap<>();
    /** Folders made from their headers, and of those let go for room (the budget), since start. */
    private final LongAdder made = new LongAdder();
    private final LongAdder letGoForRoom = new LongAdder();
    /** Folders the collector took (softly held) when the heap ran short. */
    private final LongAdder collected = new LongAdder();
    /**
     * Files in shards under 64 MiB whose tensors an order plan reads (the loader's picks told
     * ahead): their folders are read by their tensor hashes too, so that the plan fetches each
     * tensor on its own ({@link #wantHashes}). Keys as read without them; at most
     * {@link #MAX_HASHES_WANTED}, past which the file planned least recently is forgotten (read
     * through its blocks again until a plan names it again).
     */
    private final RecentKeys<Key> hashesWanted = new RecentKeys<>(MAX_HASHES_WANTED);
    /** 65,536 files, about 10 MiB of keys and entries: far more safetensors files than a plan of tensors names. */
    static final int MAX_HASHES_WANTED = 65_536;
    /** Files refused as too large, for a minute: a lookup of one is answered without its header. */
    private final Cache<Key, TensorFolderTooLargeException> refusals = Caffeine.newBuilder().maximumSize(1024)
            .expireAfterWrite(Duration.ofMinutes(1)).build();

    /**
     * A folder is its file's (the shard and where the file lies in it) as read with or without
     * the tensors' hashes: a version published without them (format 3 or before, or
     * {@code --no-tensor-hashes}) shares its files with one published with them, and the folder
     * the first made, through the blocks, served the second's tensors through 1 MiB blocks too
     * (audit 50: 30.9 MB fetched for 32 tensors of 16 KiB, against 1.27 MB).
     */
    private record Key(BlobId shard, long offset, boolean hashed) {
    }

    /**
     * Where a folder comes from: member {@code member} of an artifact. What a
     * {@link Node.TensorDir} and a {@link TensorInodes.Slot} hold, for as long as the mount lives:
     * so it holds no member index (it gets one from the index cache when the folder is made), and
     * it learns the folder's key in the cache once, so that a READ of a kept folder's file costs
     * one cache lookup (the review: three index reads and two lookups a READ).
     */
    static final class Source {
        private final TensorFolders folders;
        private final ArtifactSlot artifact;
        private final int member;
        private final Function<ArtifactSlot, MemberIndex> index;
        private volatile Key key;

        /** @param index the artifact's member index, from the index cache */
        Source(TensorFolders folders, ArtifactSlot artifact, int member, Function<ArtifactSlot, MemberIndex> index) {
            this.folders = folders;
            this.artifact = artifact;
            this.member = member;
            this.index = index;
        }

        TensorFolders folders() {
            return folders;
        }

        ArtifactSlot artifact() {
            return artifact;
        }

        int member() {
            return member;
        }

        /** The folder, kept or made again. */
        TensorFolder folder() {
            TensorFolder kept = kept();
            if (kept != null) {
                return kept;
            }
            Node.MemberDir d = new Node.MemberDir(artifact, index.apply(artifact), "");
            key = folders.key(d, member);
            return folders.folder(d, member);
        }

        /**
         * The folder if the cache keeps it now, else null (never made here: for log lines); null
         * too for one read through the blocks whose file a plan now reads by its hashes.
         */
        TensorFolder kept() {
            Key k = key;
            return k == null || !k.hashed() && folders.wanted(k) ? null : folders.folders.getIfPresent(k);
        }
    }

    TensorFolders(BlobReader reader) {
        this(reader, Runtime.getRuntime().maxMemory() / 10 * HEAP_SHARE_TENTHS);
    }

    /** @param budgetBytes heap the folders held may take together, at {@link #BYTES_PER_TENSOR} a tensor */
    TensorFolders(BlobReader reader, long budgetBytes) {
        this.reader = reader;
        this.budgetBytes = budgetBytes;
        // Fair: a large header waits its turn rather than behind a stream of small ones (the review).
        this.building = new Semaphore((int) Math.min(Integer.MAX_VALUE, Math.max(1, budgetBytes >> 10)),
                true);
        // Softly held too: what else needs the heap (a publish checking a file of 200,000 tensors'
        // header ran out of it beside a folder of 100,000, in TensorFoldersIT) gets it first.
        this.folders = Caffeine.newBuilder().maximumWeight(budgetBytes).softValues()
                .weigher((Key k, TensorFolder f) -> (int) Math.min(Integer.MAX_VALUE, f.heapBytes()))
                // Only a folder let go for room counts toward the warning: one the collector took
                // while idle (soft values) says nothing of the budget (audit 41).
                .removalListener((Key k, TensorFolder f, RemovalCause cause) -> {
                    if (cause == RemovalCause.COLLECTED) {
                        collected.increment();
                    }
                    if (cause == RemovalCause.SIZE && k != null) {
                        letGoForRoom.increment();
                        madeLately.get(k, x -> new AtomicInteger()).incrementAndGet();
                    }
                })
                .executor(Runnable::run)
                .build();
    }

    /** What the folders cost so far: stats.json's counters and Prometheus ({@link TensorFolderStats}). */
    TensorFolderStats stats() {
        long bytes = folders.policy().eviction().map(e -> e.weightedSize().orElse(0L)).orElse(0L);
        return new TensorFolderStats(made.sum(), letGoForRoom.sum(), collected.sum(), folders.estimatedSize(), bytes,
                budgetBytes);
    }

    /** Lets every folder kept go (tests: a node must not keep one). */
    void forgetAll() {
        folders.invalidateAll();
    }

    /**
     * The most a folder of {@code tensors} whose header has {@code headerBytes} can weigh: its
     * paths and NPY headers are no longer than the header's JSON, twice for characters beyond
     * Latin-1, and a hash is 32 bytes.
     */
    private static long weightBound(int tensors, long headerBytes) {
        return 4096L + (long) tensors * (BYTES_PER_TENSOR + 32 + 48) + 2 * headerBytes;
    }

    /**
     * Makes a folder of a header of {@code headerBytes} once the folders being made leave room
     * for it within the budget (a header within it, as {@link #headerFits} lets through, always
     * gets it once the others are done).
     */
    private TensorFolder whileBuilding(long headerBytes, String name, Supplier<TensorFolder> make) {
        int kib = (int) Math.max(1, Math.min(budgetBytes >> 10, headerBytes * HEAP_PER_HEADER_BYTE >> 10));
        try {
            if (!building.tryAcquire(kib, BUILD_WAIT_SECONDS, TimeUnit.SECONDS)) {
                throw new TensorFoldersBusyException(name, BUILD_WAIT_SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new io.warpdata.store.StoreUnavailableException("Interrupted while the tensor folder of " + name
                    + " waited for others being made", "Nothing to do: the read was cancelled.", e);
        }
        try {
            return make.get();
        } finally {
            building.release(kib);
        }
    }

    /** Refuses a header too long to read and parse within the budget, before it is read. */
    private void headerFits(long headerBytes, String name) {
        if (headerBytes * HEAP_PER_HEADER_BYTE > budgetBytes) {
            throw new TensorFolderTooLargeException(name, headerBytes, Runtime.getRuntime().maxMemory());
        }
    }

    /** Refuses a file whose folder might not fit the budget alone, before the folder is made. */
    private void fits(int tensors, long headerBytes, String name) {
        long bound = weightBound(tensors, headerBytes);
        if (bound > budgetBytes) {
            throw new TensorFolderTooLargeException(name, tensors, bound, budgetBytes, Runtime.getRuntime().maxMemory());
        }
    }

    /**
     * The tensor folder of member {@code i} of {@code d} (a {@code .safetensors} file).
     *
     * @throws StoreException if its header cannot be read, or breaks the format (the store
     *         holds something other than what was checked at publish)
     */
    TensorFolder folder(Node.MemberDir d, int i) {
        BlobRef shard = d.artifact().shards().get(d.index().shard(i));
        long offset = d.index().offset(i);
        long size = d.index().length(i);
        Key key = key(d, i);
        TensorFolderTooLargeException refused = refusals.getIfPresent(key);
        if (refused != null) {
            throw refused;
        }
        TensorFolder kept = folders.getIfPresent(key);
        if (kept != null) {
            return kept;
        }
        // Made outside the cache's compute: a folder waiting for others being made (up to a
        // minute) held the lock of its bin of the cache's map, which every resize of the map, and
        // every folder hashed to that bin, then waited for (the review of session 30's M2).
        CompletableFuture<TensorFolder> mine = new CompletableFuture<>();
        CompletableFuture<TensorFolder> other = making.putIfAbsent(key, mine);
        if (other != null) {
            return joined(other);
        }
        try {
            // Made and put by another thread between the miss above and this thread's turn.
            TensorFolder made = folders.getIfPresent(key);
            if (made != null) {
                mine.complete(made);
                return made;
            }
            made = make(d, i, shard, offset, size, key.hashed());
            this.made.increment();
            remade(key, d, i, made);
            folders.put(key, made);
            mine.complete(made);
            return made;
        } catch (TensorFolderTooLargeException e) {
            // Remembered: each lookup of the folder would read and parse its header again to refuse it.
            refusals.put(key, e);
            mine.completeExceptionally(e);
            throw e;
        } catch (RuntimeException | Error e) {
            mine.completeExceptionally(e);
            throw e;
        } finally {
            making.remove(key, mine);
        }
    }

    /**
     * Says in the log, once a minute, when a folder is made again after it was let go for room
     * more than {@link #REMADE_WARNING} times in 10 minutes: the folders a reader goes between do
     * not fit their share of the heap together, and each lookup may cost a header's read and parse
     * (audit 40: a loader reading two large files at random ran 130 times slower, and nothing
     * said why).
     */
    private void remade(Key key, Node.MemberDir d, int i, TensorFolder made) {
        AtomicInteger letGo = madeLately.getIfPresent(key);
        int n = letGo == null ? 0 : letGo.get();
        if (n > REMADE_WARNING) {
            long now = System.nanoTime();
            long last = lastRemadeLog.get();
            if (now - last >= TimeUnit.MINUTES.toNanos(1) && lastRemadeLog.compareAndSet(last, now)) {
                LOG.warn("The .tensors/ folder of {} ({} tensors, {} KiB) was let go for room and made again from its"
                        + " header {} times in 10 minutes: the folders read lately do not fit warpd's {} MiB for them (3/10"
                        + " of its heap) together, and each lookup may read a header again. Give warpd a larger heap"
                        + " (WARP_HEAP), or read the tensors from the .safetensors files (numpy.memmap, safetensors'"
                        + " safe_open)", d.version().describe() + "/" + d.artifactName() + "/" + d.index().path(i),
                        made.fileCount(), made.heapBytes() >> 10, n, budgetBytes >> 20);
            }
        }
    }

    /** How often the folder of member {@code i} of {@code d} was let go for room lately (tests). */
    int timesLetGo(Node.MemberDir d, int i) {
        AtomicInteger n = madeLately.getIfPresent(key(d, i));
        return n == null ? 0 : n.get();
    }

    /**
     * The cache's key of the folder of member {@code i} of {@code d}: its shard, its offset there,
     * and whether its tensors are read by their hashes: the artifact has them, and the shard is
     * one of 64 MiB or more ({@link BlobMember#LOOKUP_MIN_BLOB_BYTES}) or an order plan reads the
     * file ({@link #wantHashes}). A smaller shard's file is read through its blocks otherwise:
     * its random reads are served by the blocks anyway, and its header by the first of them,
     * so its hashes and deflated header would be fetched for nothing.
     */
    private Key key(Node.MemberDir d, int i) {
        BlobRef shard = d.artifact().shards().get(d.index().shard(i));
        Key plain = new Key(shard.id(), d.index().offset(i), false);
        boolean hashed = d.artifact().tensorHashes() != null
                && (shard.size() >= BlobMember.LOOKUP_MIN_BLOB_BYTES || wanted(plain));
        return hashed ? new Key(plain.shard(), plain.offset(), true) : plain;
    }

    /**
     * An order plan reads tensors of member {@code i} of {@code d}: its folder is read by its
     * tensor hashes from now on, even in a shard under 64 MiB, so that the plan can fetch each
     * tensor on its own (and its reader find it by its hash), and its header comes from the
     * deflated headers rather than the shard's first block. Called before the folder is looked
     * up; a folder already made through the blocks is let go.
     */
    void wantHashes(Node.MemberDir d, int i) {
        BlobRef shard = d.artifact().shards().get(d.index().shard(i));
        if (d.artifact().tensorHashes() == null || shard.size() >= BlobMember.LOOKUP_MIN_BLOB_BYTES) {
            return;
        }
        Key plain = new Key(shard.id(), d.index().offset(i), false);
        if (hashesWanted.add(plain)) {
            folders.invalidate(plain);
        }
    }

    /** Whether an order plan named the file of {@code plain} (a key as read without hashes) lately. */
    private boolean wanted(Key plain) {
        return hashesWanted.contains(plain);
    }

    /** The folder another thread is making (one header read for the lookups of a folder at once), or what it threw. */
    private static TensorFolder joined(CompletableFuture<TensorFolder> other) {
        try {
            return other.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw e;
        }
    }

    private TensorFolder make(Node.MemberDir d, int i, BlobRef shard, long offset, long size, boolean byHashes) {
        String name = d.version().describe() + "/" + d.artifactName() + "/" + d.index().path(i);
        BlobRef hashes = d.artifact().tensorHashes();
        if (!byHashes) {
            return throughBlocks(shard, offset, size, name);
        }
        Found found;
        try {
            found = entry(hashes, d.index().hash(i), name);
        } catch (BlockVerificationException | MemberVerificationException e) {
            return hashesUnreadable(shard, offset, size, name, e);
        }
        if (found == null) {
            return throughBlocks(shard, offset, size, name);
        }
        TensorHashes.Entry entry = found.entry();
        // By their hashes (a shard of 64 MiB or more, or a file a plan reads): the header and
        // the tensors' hashes as ranges of their own, each checked against its hash: about their
        // bytes, not the blocks around them (and the blocks read ahead of them).
        if (entry.headerLength() > size - 8 || entry.headerLength() > SafetensorsHeader.MAX_HEADER_BYTES) {
            throw new StoreException("The tensor hashes of " + name + " give it a header of " + entry.headerLength()
                    + " bytes, in a file of " + size, "Publish the dataset again.", null);
        }
        headerFits(entry.headerLength(), name);
        fits(entry.tensors(), entry.headerLength(), name); // the hash list's length is the tensor count: known before the header is read
        try {
            BlobRef headers = d.artifact().tensorHeaders();
            return whileBuilding(entry.headerLength(), name, () -> hashed(shard, offset, size, name, hashes, found,
                    headers));
        } catch (HashesUnreadable e) {
            // Outside whileBuilding: the blocks' folder waits for its own share of the budget.
            return hashesUnreadable(shard, offset, size, name, (RuntimeException) e.getCause());
        }
    }

    /** The tensor hashes failed their verification: {@link #make} reads the folder through the blocks instead. */
    private static final class HashesUnreadable extends RuntimeException {
        HashesUnreadable(RuntimeException cause) {
            super(cause.getMessage(), cause, false, false);
        }
    }

    /**
     * The folder of a file with tensor hashes, its header and tensor hashes read as ranges of
     * their own: the header from the artifact's deflated headers when it has them (about a
     * ninth of its bytes), else from the file.
     */
    private TensorFolder hashed(BlobRef shard, long offset, long size, String name, BlobRef hashes, Found found,
                                BlobRef headers) {
        TensorHashes.Entry entry = found.entry();
        List<BlobId> tensorHashes;
        try {
            tensorHashes = TensorHashes.hashes(
                    readLookup(BlobMember.lookup(hashes, entry.hashesAt(), entry.hashesLength(), entry.hashes())));
        } catch (BlockVerificationException | MemberVerificationException e) {
            throw new HashesUnreadable(e);
        }
        byte[] json = headers == null ? null : deflatedHeader(headers, found, name);
        if (json == null) {
            json = readLookup(BlobMember.lookup(shard, offset + 8, entry.headerLength(), entry.header()));
        }
        SafetensorsHeader header = parsed(json, size, name);
        fits(header.tensors().size(), entry.headerLength(), name);
        if (tensorHashes.size() != header.tensors().size()) {
            throw new StoreException("The tensor hashes of " + name + " name " + tensorHashes.size()
                    + " tensors; its header has " + header.tensors().size(), "Publish the dataset again.", null);
        }
        return TensorFolder.of(shard, offset, header, tensorHashes);
    }

    /**
     * The tensor hashes came wrong from the store: the shard's own blocks, with their own hashes,
     * still vouch for its tensors (audit 36: one bad byte in the hash blob made all 4,103 tensors
     * of an intact shard EIO). If those fail too, their error carries this one.
     */
    private TensorFolder hashesUnreadable(BlobRef shard, long offset, long size, String name, RuntimeException e) {
        LOG.warn("The tensor hashes of {} cannot be read ({}): its tensors are read through the blocks of their file"
                + " instead", name, e.getMessage());
        try {
            return throughBlocks(shard, offset, size, name);
        } catch (RuntimeException also) {
            also.addSuppressed(e);
            throw also;
        }
    }

    /** The folder read through the shard's blocks: its header, and each tensor as a slice of them. */
    private TensorFolder throughBlocks(BlobRef shard, long offset, long size, String name) {
        byte[] first8 = read(shard, offset, 8);
        long n;
        try {
            n = SafetensorsHeader.headerLength(first8, size, name);
        } catch (SafetensorsException e) {
            throw differs(e);
        }
        headerFits(n, name);
        return whileBuilding(n, name, () -> {
            SafetensorsHeader header = parsed(read(shard, offset + 8, (int) n), size, name);
            fits(header.tensors().size(), n, name);
            return TensorFolder.of(shard, offset, header);
        });
    }

    private static SafetensorsHeader parsed(byte[] json, long size, String name) {
        try {
            return SafetensorsHeader.parse(json, size, name);
        } catch (SafetensorsException e) {
            throw differs(e);
        }
    }

    /** A header that breaks the format though it passed publish's check: the store's copy differs. */
    private static StoreException differs(SafetensorsException e) {
        return new StoreException(e.getMessage() + " (it passed the check at publish: the store's copy differs)",
                "Publish the dataset again; the file itself reads as it is.", e);
    }

    /**
     * A member's header from the artifact's {@link TensorHeaders}: its entry (the tensor hash
     * entry's place), its deflated bytes fetched on their own and checked against their hash,
     * inflated to exactly the header's length and hash as the tensor hashes give them. Null if
     * any of that fails (logged): the header is then read from the file itself, whose bytes
     * the tensor hashes vouch for on their own.
     */
    private byte[] deflatedHeader(BlobRef headers, Found found, String name) {
        String source = "tensor headers " + headers.id() + " (of " + name + ")";
        TensorHashes.Entry e = found.entry();
        try {
            int n = TensorHeaders.count(read(headers, 0, TensorHeaders.HEAD_BYTES), headers.size(), source);
            if (n != found.count()) {
                throw new ManifestCorruptedException(source, "count", n + " entries, where the tensor hashes have "
                        + found.count());
            }
            TensorHeaders.Entry z = TensorHeaders.entry(read(headers, TensorHeaders.entryAt(found.index()),
                    TensorHeaders.ENTRY_BYTES), n, headers.size(), source);
            if (!z.member().equals(e.member())) {
                throw new ManifestCorruptedException(source, "entry " + found.index(), "is member " + z.member()
                        + "'s, where the tensor hashes' is " + e.member() + "'s");
            }
            // Deflated JSON is never much longer than the JSON: a longer one is not fetched.
            if (z.length() > e.headerLength() + e.headerLength() / 8 + 1024) {
                throw new ManifestCorruptedException(source, "entry " + found.index(), "a deflated header of "
                        + z.length() + " bytes for a header of " + e.headerLength());
            }
            byte[] deflated = readLookup(BlobMember.lookup(headers, z.at(), z.length(), z.hash()));
            return TensorHeaders.inflate(deflated, e.headerLength(), e.header(), source);
        } catch (ManifestCorruptedException | BlockVerificationException | MemberVerificationException bad) {
            LOG.warn("The deflated header of {} cannot be read ({}): it is read from the file instead", name,
                    bad.getMessage());
            return null;
        } catch (io.warpdata.store.StoreUnavailableException down) {
            throw down; // the file's header would wait for the same store
        } catch (StoreException missing) {
            // Gone from the store, not cached in local mode, short: the file's own header may be there.
            LOG.warn("The deflated header of {} cannot be fetched ({}): it is read from the file instead", name,
                    missing.getMessage());
            return null;
        }
    }

    /** A member's entry in the tensor hashes: its place among their {@code count}. */
    private record Found(TensorHashes.Entry entry, int index, int count) {
    }

    /**
     * The entry of the member whose SHA-256 is {@code member} in an artifact's tensor hashes
     * (entries sorted by it: a binary search, each step one entry read through the blob's
     * blocks), or null if it has none (a file publish could not parse is read as before).
     */
    private Found entry(BlobRef hashes, BlobId member, String name) {
        String source = "tensor hashes " + hashes.id() + " (of " + name + ")";
        int count = TensorHashes.count(read(hashes, 0, TensorHashes.HEAD_BYTES), hashes.size(), source);
        byte[] want = member.digest();
        int lo = 0;
        int hi = count - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            byte[] e = read(hashes, TensorHashes.entryAt(mid), TensorHashes.ENTRY_BYTES);
            int c = java.util.Arrays.compareUnsigned(e, 0, 32, want, 0, 32);
            if (c == 0) {
                return new Found(TensorHashes.entry(e, count, hashes.size(), source), mid, count);
            }
            if (c < 0) {
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return null;
    }

    private byte[] readLookup(BlobMember range) {
        byte[] out = new byte[Math.toIntExact(range.length())];
        int got = reader.readMember(range, 0, ByteBuffer.wrap(out));
        if (got != out.length) {
            throw WarpTree.shortRead("bytes [" + range.offset() + ", +" + range.length() + ") of blob " + range.blob().id(),
                    got, out.length);
        }
        return out;
    }

    private byte[] read(BlobRef blob, long offset, int len) {
        byte[] out = new byte[len];
        int got = reader.read(blob, offset, ByteBuffer.wrap(out));
        if (got != len) {
            throw WarpTree.shortRead("blob " + blob.id() + " at " + offset, got, len);
        }
        return out;
    }
}
