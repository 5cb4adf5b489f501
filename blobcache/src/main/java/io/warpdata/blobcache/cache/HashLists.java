package io.warpdata.blobcache.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.warpdata.store.StoreLayout;
import io.warpdata.store.StoreUnavailableException;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;
import io.warpdata.manifest.ManifestCorruptedException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Block hash lists of blobs: derived when the blob is one block (the list is then [the blob's
 * id], checked against the list's id like a fetched one), else fetched whole from the first
 * mirror that serves them, else from the store (and then offered to the S3 tiers warpd fills), checked against their own id
 * ({@link BlobRef#blocks()}), parsed, and kept in a bounded memory cache (and, when a directory
 * is given, on disk so that the cache keeps working offline and {@code verify} can re-hash
 * blocks). One fetch per list however many readers want it; no lock is held while fetching.
 */
final class HashLists {
    private static final Logger LOG = LoggerFactory.getLogger(HashLists.class);

    private final BlockFetcher fetcher;
    private final Executor loader;
    private final Path dir;
    private final Path tmpDir;
    /** The directory's writes (closed: nothing more is saved), or null with no directory. */
    private final WriteGate writes;
    private final Cache<BlobId, BlockHashList> memory;
    private final ConcurrentHashMap<BlobId, CompletableFuture<BlockHashList>> inflight = new ConcurrentHashMap<>();

    /**
     * Lists kept in memory only, loaded in the calling thread.
     *
     * @param maxBytes bound on the memory held by cached lists (32 bytes per block)
     */
    HashLists(BlockFetcher fetcher, long maxBytes) {
        this(fetcher, null, null, null, maxBytes, null);
    }

    /**
     * @param dir      where lists are kept on disk, or null for memory only
     * @param tmpDir   where lists are written before being renamed into {@code dir}
     * @param maxBytes bound on the memory held by cached lists (32 bytes per block)
     * @param loader where loads run, so that a reader waits at most until its deadline even if
     *               the store hangs; null to load in the calling thread
     * @param writes   the cache directory's writes (a list is saved only while they are open), or
     *                 null when {@code dir} is
     */
    HashLists(BlockFetcher fetcher, Path dir, Path tmpDir, WriteGate writes, long maxBytes, Executor loader) {
        this.loader = loader;
        this.fetcher = fetcher;
        this.dir = dir;
        this.tmpDir = tmpDir;
        this.writes = writes;
        this.memory = Caffeine.newBuilder()
                .maximumWeight(maxBytes)
                .weigher((BlobId k, BlockHashList v) -> 64 + 32 * v.blockCount())
                .executor(Runnable::run)
                .build();
    }

    /**
     * The verified list of {@code blob}, fetched if needed.
     *
     * @throws ManifestCorruptedException if the stored list does not match its id (twice) or the blob
     * @throws io.warpdata.store.StoreException if it cannot be fetched by the deadline
     */
    BlockHashList get(BlobRef blob, long deadlineNanos) {
        return get(blob, deadlineNanos, true);
    }

    /**
     * As {@link #get(BlobRef, long)}; with {@code mayFetch} false (offline) a list that is not
     * cached is a {@link BlockNotCachedException}.
     */
    BlockHashList get(BlobRef blob, long deadlineNanos, boolean mayFetch) {
        BlockHashList list = memory.getIfPresent(blob.blocks());
        if (list == null) {
            list = loadOnce(blob, deadlineNanos, mayFetch);
        }
        if (list.blobSize() != blob.size()) {
            throw new ManifestCorruptedException(describe(blob), "byte_size",
                    "the block hash list says " + list.blobSize() + " bytes but the manifest says " + blob.size());
        }
        return list;
    }

    /** The list if already in memory, else null; never fetches. */
    BlockHashList getIfPresent(BlobId blocks) {
        return memory.getIfPresent(blocks);
    }

    /** Whether the list is here without asking the store: in memory, or kept on disk. */
    boolean knownHere(BlobId blocks) {
        return memory.getIfPresent(blocks) != null || (dir != null && Files.exists(dir.resolve(blocks.hex())));
    }

    /**
     * The list's load, without waiting for it: done at once if the list is in memory, else the
     * load in flight, else one started on the loader (which must be set) with {@code deadlineNanos}.
     * A failed load completes the future exceptionally; nothing is logged.
     */
    CompletableFuture<BlockHashList> loading(BlobRef blob, long deadlineNanos) {
        BlockHashList list = memory.getIfPresent(blob.blocks());
        if (list != null) {
            return CompletableFuture.completedFuture(list);
        }
        CompletableFuture<BlockHashList> mine = new CompletableFuture<>();
        CompletableFuture<BlockHashList> theirs = inflight.putIfAbsent(blob.blocks(), mine);
        if (theirs != null) {
            return theirs;
        }
        startLoad(blob, deadlineNanos, true, mine);
        return mine;
    }

    /**
     * Writes every list held in memory to disk again (the cache directory was deleted under warpd
     * and made again): blocks fetched afterwards are then served offline after a restart, which
     * needs their lists on disk. Returns how many were written.
     */
    int saveHeld() {
        if (dir == null) {
            return 0;
        }
        int saved = 0;
        for (var e : memory.asMap().entrySet()) {
            if (!Files.exists(dir.resolve(e.getKey().hex()))) {
                save(e.getKey(), e.getValue().serialize());
                saved++;
            }
        }
        return saved;
    }

    /** The list stored on disk under its id, verified, or null. */
    BlockHashList readFromDisk(BlobId blocks) {
        if (dir == null) {
            return null;
        }
        Path p = dir.resolve(blocks.hex());
        try {
            byte[] bytes = Files.readAllBytes(p);
            if (Arrays.equals(BlobId.sha256().digest(bytes), blocks.digest())) {
                return BlockHashList.parse(bytes, p.toString());
            }
            LOG.warn("Cached block hash list {} does not match its SHA-256; deleting it", p);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException | ManifestCorruptedException e) {
            LOG.warn("Cached block hash list {} is unreadable ({}); deleting it", p, e.toString());
        }
        deleteQuietly(p);
        return null;
    }

    private BlockHashList loadOnce(BlobRef blob, long deadlineNanos, boolean mayFetch) {
        CompletableFuture<BlockHashList> mine = new CompletableFuture<>();
        CompletableFuture<BlockHashList> theirs = inflight.putIfAbsent(blob.blocks(), mine);
        if (theirs != null) {
            return awaitList(theirs, blob, deadlineNanos);
        }
        if (loader != null) {
            startLoad(blob, deadlineNanos, mayFetch, mine);
            return awaitList(mine, blob, deadlineNanos);
        }
        return load(blob, deadlineNanos, mayFetch, mine);
    }

    /** Runs the load registered as {@code mine} on the loader; its outcome goes through the future. */
    private void startLoad(BlobRef blob, long deadlineNanos, boolean mayFetch, CompletableFuture<BlockHashList> mine) {
        try {
            loader.execute(() -> {
                try {
                    load(blob, deadlineNanos, mayFetch, mine);
                } catch (RuntimeException | Error e) {
                    // Delivered to the readers through the future.
                }
            });
        } catch (RuntimeException e) {
            inflight.remove(blob.blocks(), mine);
            mine.completeExceptionally(e);
        }
    }

    private BlockHashList awaitList(CompletableFuture<BlockHashList> f, BlobRef blob, long deadlineNanos) {
        try {
            return Deadlines.await(f, deadlineNanos, () -> "reading the block hash list of blob " + blob.id()
                    + " from " + fetcher.store().describe());
        } catch (StoreUnavailableException e) {
            if (!f.isDone()) {
                // Hung: let the next read try afresh rather than wait on this load.
                inflight.remove(blob.blocks(), f);
            }
            throw e;
        }
    }

    private BlockHashList load(BlobRef blob, long deadlineNanos, boolean mayFetch, CompletableFuture<BlockHashList> mine) {
        try {
            BlockHashList list = load(blob, deadlineNanos, mayFetch);
            memory.put(blob.blocks(), list);
            inflight.remove(blob.blocks(), mine);
            mine.complete(list);
            return list;
        } catch (RuntimeException | Error e) {
            // Out of the map before anyone sees the failure, so that a retry starts afresh.
            inflight.remove(blob.blocks(), mine);
            mine.completeExceptionally(e);
            throw e;
        }
    }

    private BlockHashList load(BlobRef blob, long deadlineNanos, boolean mayFetch) {
        BlockHashList onDisk = readFromDisk(blob.blocks());
        if (onDisk != null) {
            return onDisk;
        }
        BlockHashList derived = oneBlockList(blob);
        if (derived != null) {
            save(blob.blocks(), derived.serialize());
            return derived;
        }
        if (!mayFetch) {
            throw new BlockNotCachedException("The block hash list of blob " + blob.id());
        }
        String key = StoreLayout.blob(blob.blocks());
        // At most what a list for a blob of this size can be: a store that holds something
        // else at the key (5 GB) is refused after one bounded read, not read whole.
        int maxBytes = BlockHashList.maxSerializedSize(blob.size());
        byte[] mirrored = fetcher.objectFromRemotes(key, maxBytes, b -> matches(b, blob.blocks()), deadlineNanos);
        if (mirrored != null) {
            BlockHashList list = BlockHashList.parse(mirrored, describe(blob));
            save(blob.blocks(), mirrored);
            return list;
        }
        byte[] bytes = fetcher.getWithRetry(key, maxBytes, deadlineNanos);
        if (!matches(bytes, blob.blocks())) {
            bytes = fetcher.getWithRetry(key, maxBytes, deadlineNanos);
            if (!matches(bytes, blob.blocks())) {
                LOG.warn("Block hash list {} of blob {} from {} does not match its SHA-256, twice",
                        blob.blocks(), blob.id(), fetcher.store().describe());
                throw new ManifestCorruptedException(describe(blob), "$",
                        "its content fetched from " + fetcher.store().describe() + " does not match its SHA-256");
            }
        }
        BlockHashList list = BlockHashList.parse(bytes, describe(blob));
        save(blob.blocks(), bytes);
        fetcher.fillRemotesObject(key, bytes);
        return list;
    }

    /**
     * The serialized list of a blob of one default-size block, if that is the list the manifest
     * names ({@link BlockHashList#ofOneBlock}: its only hash is the blob's id), else null. Index
     * parts, small shards and small indexes are such blobs: their list costs no GET, which halves
     * the requests of a walk over a parted member index (each part is one block).
     */
    static BlockHashList oneBlockList(BlobRef blob) {
        if (blob.size() < 1 || blob.size() > BlockHashList.DEFAULT_BLOCK_SIZE) {
            return null;
        }
        BlockHashList list = BlockHashList.ofOneBlock(blob.id(), blob.size(), BlockHashList.DEFAULT_BLOCK_SIZE);
        return list.id().equals(blob.blocks()) ? list : null;
    }

    private void save(BlobId blocks, byte[] bytes) {
        if (dir == null || !writes.begin()) {
            return; // no directory, or it closed: the list is kept in memory only
        }
        Path tmp = tmpDir.resolve(blocks.hex() + "." + Thread.currentThread().threadId() + ".list.tmp");
        try {
            Files.write(tmp, bytes);
            Files.move(tmp, dir.resolve(blocks.hex()), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            // Only an optimisation: the list is refetched next time.
            LOG.warn("Could not keep block hash list {} on disk: {}", blocks, e.toString());
            deleteQuietly(tmp);
        } finally {
            writes.end();
        }
    }

    private static boolean matches(byte[] bytes, BlobId id) {
        return Arrays.equals(BlobId.sha256().digest(bytes), id.digest());
    }

    private static String describe(BlobRef blob) {
        return "block hash list " + blob.blocks() + " of blob " + blob.id();
    }

    static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException e) {
            LOG.warn("Could not delete {}: {}", p, e.toString());
        }
    }
}
