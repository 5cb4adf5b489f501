package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.warpdata.manifest.BlobId;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** DiskBlocks on its own: the free-space floor under concurrent writers. */
class DiskBlocksTest {
    private static final int BS = 64 * 1024;
    private static final long ON_DISK = BlockFile.headerLength(BS) + BS;

    @TempDir
    Path dir;

    /**
     * The race that let concurrent fetches overshoot the floor by a block: writer A asks for the
     * free space, writer B then reserves, writes, renames its block into place and gives its
     * reservation back, and only then does A look at the reservations in flight. Counting B's
     * block neither in the free space A saw nor in the reservations A saw, A used to write too.
     */
    @Test
    void writerFinishingWhileAnotherChecksFreeSpaceIsStillCountedAgainstTheFloor() throws Exception {
        long fsSize = 100 * ON_DISK;
        long floor = fsSize - ON_DISK - ON_DISK / 2; // room for one block, not two
        byte[] data = TestBlobs.bytes(BS, 1);
        BlobId blob = BlobId.of(data);
        BlockKey keyA = new BlockKey(blob, BS, 0);
        BlockKey keyB = new BlockKey(blob, BS, 1);
        AtomicReference<DiskBlocks> blocks = new AtomicReference<>();
        AtomicReference<Thread> writerB = new AtomicReference<>();
        Thread writerA = Thread.currentThread();
        DiskSpace space = TestSpace.of(() -> {
            long usable = fsSize - bytesOnDisk();
            if (Thread.currentThread() == writerA && writerB.get() == null) {
                // A has sampled the free space: now B writes a whole block, then A goes on.
                Thread b = new Thread(() -> blocks.get().put(keyB, blob, data, 0, BS, null));
                writerB.set(b);
                b.start();
                awaitDoneOrBlocked(b);
            }
            return usable;
        }, fsSize);
        DiskBlocks disk = new DiskBlocks(dir, 64L << 20, floor, 16, new ReadMetrics(), space);
        blocks.set(disk);
        try {
            disk.put(keyA, blob, data, 0, BS, null);
            writerB.get().join(TimeUnit.SECONDS.toMillis(10));
            assertThat(writerB.get().isAlive()).isFalse();
            assertThat(bytesOnDisk()).isLessThanOrEqualTo(fsSize - floor);
            // At most one fits. Not exactly one: B, short of room, may evict A's block as it lands
            // and still find A's reservation pending (it is given back just after the rename),
            // and then skip its own write; which happens depends on the scheduler.
            assertThat(disk.blockCount()).isLessThanOrEqualTo(1);
        } finally {
            disk.close();
        }
    }

    /**
     * Session 45: an order plan starting asks whether the disk can keep anything before any
     * write was skipped (its first walk queues its whole horizon at once): not when there is no
     * room for a 1 MiB block even with all it holds evicted, nor when {@code v1/} is gone.
     */
    /**
     * A small file is written through a buffer as long as it (64 KiB), not a block's 1 MiB and
     * header: a shuffled epoch of 14 KB members made 6.5 new 1 MiB direct buffers a second once more
     * than four of its writes were under way (the pool kept four), each resident until a
     * collection freed it.
     */
    @Test
    void smallFilesAreWrittenThroughBuffersAsLongAsThem() throws Exception {
        java.lang.management.BufferPoolMXBean direct = java.lang.management.ManagementFactory
                .getPlatformMXBeans(java.lang.management.BufferPoolMXBean.class).stream()
                .filter(b -> b.getName().equals("direct")).findFirst().orElseThrow();
        int writers = 8;
        DiskBlocks disk = new DiskBlocks(dir, 64L << 20, 0, 16, new ReadMetrics(), DiskSpace.of(dir));
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(writers);
        try {
            long before = direct.getTotalCapacity();
            List<java.util.concurrent.Future<Boolean>> puts = new java.util.ArrayList<>();
            for (int i = 0; i < 400; i++) {
                byte[] data = TestBlobs.bytes(14_000, 100 + i);
                BlobId blob = BlobId.of(data);
                puts.add(pool.submit(() -> disk.put(new BlockKey(blob, data.length, 0), blob, data, 0, data.length, null)));
            }
            for (java.util.concurrent.Future<Boolean> f : puts) {
                assertThat(f.get(30, TimeUnit.SECONDS)).isTrue();
            }
            assertThat(disk.blockCount()).isEqualTo(400);
            // At most one buffer a writer, each of 64 KiB; one block-sized buffer alone would be 1 MiB + 4 KiB.
            assertThat(direct.getTotalCapacity() - before).isLessThanOrEqualTo(writers * 64L * 1024);
        } finally {
            pool.shutdownNow();
            disk.close();
        }
    }

    @Test
    void aDiskWithNoRoomEvenWithAllEvictedKeepsNothingNow() throws IOException {
        AtomicLong usable = new AtomicLong(1L << 30);
        DiskSpace space = TestSpace.of(usable::get, 2L << 30);
        DiskBlocks disk = new DiskBlocks(dir, 64L << 20, 0, 16, new ReadMetrics(), space);
        try {
            assertThat(disk.keepsNothingNow()).as("room").isFalse();
            usable.set(512 << 10);
            assertThat(disk.keepsNothingNow()).as("no room for a 1 MiB block, nothing to evict").isTrue();
            usable.set(1L << 30);
            byte[] data = TestBlobs.bytes(24 * BS, 13);
            BlobId blob = BlobId.of(data);
            for (int i = 0; i < 24; i++) {
                disk.put(new BlockKey(blob, BS, i), blob, data, i * BS, BS, null);
            }
            assertThat(disk.sizeBytes()).isGreaterThan(1L << 20);
            usable.set(0);
            assertThat(disk.keepsNothingNow()).as("a full disk, but blocks to evict: room is made for a write").isFalse();
            try (Stream<Path> files = Files.walk(dir.resolve(CacheDirectory.FORMAT_DIR))) {
                for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.delete(f);
                }
            }
            usable.set(1L << 30);
            assertThat(disk.keepsNothingNow()).as("v1/ deleted").isTrue();
        } finally {
            disk.close();
        }
    }

    @Test
    void blockWithNoRoomAboveTheFloorIsCountedAsSkippedAndCachedOnceSpaceReturns() {
        AtomicLong usable = new AtomicLong(ON_DISK / 2);
        DiskSpace space = TestSpace.of(usable::get, 100 * ON_DISK);
        ReadMetrics metrics = new ReadMetrics();
        byte[] data = TestBlobs.bytes(BS, 2);
        BlobId blob = BlobId.of(data);
        DiskBlocks disk = new DiskBlocks(dir, 64L << 20, 0, 16, metrics, space);
        try {
            disk.put(new BlockKey(blob, BS, 0), blob, data, 0, BS, null);
            assertThat(disk.blockCount()).isZero();
            assertThat(metrics.cacheWritesSkipped.sum()).isEqualTo(1);

            usable.set(10 * ON_DISK);
            disk.put(new BlockKey(blob, BS, 0), blob, data, 0, BS, null);
            assertThat(disk.blockCount()).isEqualTo(1);
            assertThat(metrics.cacheWritesSkipped.sum()).isEqualTo(1);
        } finally {
            disk.close();
        }
    }

    @Test
    void cacheDirectoryDeletedUnderTheCacheSkipsTheWriteWithoutThrowing() throws IOException {
        ReadMetrics metrics = new ReadMetrics();
        byte[] data = TestBlobs.bytes(BS, 3);
        BlobId blob = BlobId.of(data);
        // The disk behind the memory tier that keeps what it could not write (as the cache composes them).
        Tiers disk = new Tiers(new DiskBlocks(dir, 64L << 20, 0, 16, metrics, null));
        try {
            try (Stream<Path> all = Files.walk(dir)) {
                all.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
            BlockKey key = new BlockKey(blob, BS, 0);
            disk.put(key, blob, data, 0, BS, null);
            assertThat(disk.blockCount()).isZero();
            assertThat(metrics.cacheWritesSkipped.sum()).isEqualTo(1);
            // Kept in memory: the next reads of the block are served without a fetch.
            assertThat(disk.contains(key)).isTrue();
            assertThat(disk.disk().contains(key)).as("not on disk").isFalse();
            java.nio.ByteBuffer out = java.nio.ByteBuffer.allocate(1000);
            assertThat(disk.get(key, 5000, out, 0, 1000)).isTrue();
            assertThat(out.array()).isEqualTo(java.util.Arrays.copyOfRange(data, 5000, 6000));
            disk.gc(0);
            assertThat(disk.contains(key)).as("gc to 0 empties memory too").isFalse();
        } finally {
            disk.close();
        }
    }

    /**
     * {@code rm -rf} of the cache under a running warpd: the failed write makes the directory
     * again and forgets the blocks that went with it, so caching resumes (it used to stay off for
     * good, with the size and block count of the deleted blocks still reported).
     */
    @Test
    void aDeletedCacheDirectoryIsMadeAgainAndCachingResumes() throws IOException, InterruptedException {
        ReadMetrics metrics = new ReadMetrics();
        byte[] data = TestBlobs.bytes(3 * BS, 4);
        BlobId blob = BlobId.of(data);
        DiskBlocks disk = new DiskBlocks(dir, 64L << 20, 0, 16, metrics, null);
        try {
            disk.put(new BlockKey(blob, BS, 0), blob, data, 0, BS, null);
            assertThat(disk.blockCount()).isEqualTo(1);
            try (Stream<Path> all = Files.walk(dir.resolve(CacheDirectory.FORMAT_DIR))) {
                all.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
            disk.put(new BlockKey(blob, BS, 1), blob, data, BS, BS, null);
            assertThat(metrics.cacheWritesSkipped.sum()).as("the write that found it gone").isEqualTo(1);
            assertThat(Files.exists(dir.resolve(CacheDirectory.FORMAT_DIR))).as("not made again at once: an rm may be under way")
                    .isFalse();
            Thread.sleep(DiskBlocks.REMAKE_AFTER_NANOS / 1_000_000 + 1_100);
            disk.put(new BlockKey(blob, BS, 1), blob, data, BS, BS, null);
            assertThat(metrics.cacheWritesSkipped.sum()).as("the write that found it still gone").isEqualTo(2);
            assertThat(disk.blockCount()).as("the deleted block is forgotten").isZero();
            assertThat(disk.sizeBytes()).isZero();
            assertThat(Files.isDirectory(dir.resolve(CacheDirectory.FORMAT_DIR).resolve("blocks"))).isTrue();
            for (String folder : java.util.List.of("", "blocks", "lists", "tmp")) {
                assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(
                        dir.resolve(CacheDirectory.FORMAT_DIR).resolve(folder)))).as("v1/%s its owner's only", folder)
                        .isEqualTo("rwx------");
            }

            disk.put(new BlockKey(blob, BS, 2), blob, data, 2 * BS, BS, null);
            assertThat(disk.blockCount()).as("caching resumed").isEqualTo(1);
            java.nio.ByteBuffer out = java.nio.ByteBuffer.allocate(1000);
            assertThat(disk.get(new BlockKey(blob, BS, 2), 100, out, 0, 1000)).isTrue();
            assertThat(out.array()).isEqualTo(java.util.Arrays.copyOfRange(data, 2 * BS + 100, 2 * BS + 1100));
            assertThat(metrics.cacheWritesSkipped.sum()).isEqualTo(2);
        } finally {
            disk.close();
        }
    }

    /**
     * {@code rm -rf v1/} under a running warpd, and a second warpd started on the directory
     * before the first made it again (audit 31): the second takes a lock of its own; the first,
     * whose lock file is gone, writes nothing more there (both used to write and evict each
     * other's blocks).
     */
    @Test
    void aDirectoryAnotherWarpdTookOverIsWrittenNoMore() throws IOException, InterruptedException {
        ReadMetrics metrics = new ReadMetrics();
        byte[] data = TestBlobs.bytes(3 * BS, 5);
        BlobId blob = BlobId.of(data);
        DiskBlocks first = new DiskBlocks(dir, 64L << 20, 0, 16, metrics, null);
        DiskBlocks second = null;
        try {
            first.put(new BlockKey(blob, BS, 0), blob, data, 0, BS, null);
            try (Stream<Path> all = Files.walk(dir.resolve(CacheDirectory.FORMAT_DIR))) {
                all.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
            second = new DiskBlocks(dir, 64L << 20, 0, 16, new ReadMetrics(), null);
            Thread.sleep(1_100);
            first.put(new BlockKey(blob, BS, 1), blob, data, BS, BS, null);
            assertThat(first.contains(new BlockKey(blob, BS, 1))).as("the first warpd keeps off the disk").isFalse();
            second.put(new BlockKey(blob, BS, 2), blob, data, 2 * BS, BS, null);
            try (Stream<Path> files = Files.walk(dir.resolve(CacheDirectory.FORMAT_DIR).resolve("blocks"))) {
                assertThat(files.filter(Files::isRegularFile).count()).as("only the second's block").isEqualTo(1);
            }
        } finally {
            first.close();
            if (second != null) {
                second.close();
            }
        }
    }

    @Test
    void aDiskOutOfInodesEvictsBlocksAndKeepsCaching() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
                "mounts a tmpfs: root only");
        Path disk = Files.createDirectories(dir.resolve("inodes"));
        // Bytes for hundreds of blocks, inodes for a few dozen files (audit 31: out of inodes, warpd cached
        // nothing more until an operator stepped in, its byte limit far away).
        assertThat(new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=64m,nr_inodes=48", "tmpfs", disk.toString())
                .inheritIO().start().waitFor()).isZero();
        ReadMetrics metrics = new ReadMetrics();
        DiskBlocks cache = null;
        try {
            cache = new DiskBlocks(disk.resolve("cache"), 64L << 20, 0, 16, metrics, null);
            byte[] data = TestBlobs.bytes(120 * BS, 9);
            BlobId blob = BlobId.of(data);
            for (int i = 0; i < 120; i++) {
                putAndReadBack(cache, blob, data, i);
            }
            assertThat(metrics.evictions.sum()).as("room was made by evicting").isPositive();
            assertThat(cache.blockCount()).isLessThan(48).isPositive();
        } finally {
            if (cache != null) {
                cache.close();
            }
            new ProcessBuilder("umount", disk.toString()).inheritIO().start().waitFor();
        }
    }

    /**
     * Audit 35: a user freeing space ran {@code rm -rf CACHE/v1/blocks/*} under a running warpd;
     * the shard folders it had made once were not made again, and every block of those shards was
     * served without being cached, for good, until a restart.
     */
    @Test
    void blockFoldersDeletedUnderARunningCacheAreMadeAgainAndCachingGoesOn() throws Exception {
        ReadMetrics metrics = new ReadMetrics();
        DiskBlocks cache = new DiskBlocks(dir, 64L << 20, 0, 16, metrics, null);
        try {
            byte[] data = TestBlobs.bytes(4 * BS, 11);
            BlobId blob = BlobId.of(data);
            cache.put(new BlockKey(blob, BS, 0), blob, data, 0, BS, null);
            Path blocks = dir.resolve(CacheDirectory.FORMAT_DIR).resolve("blocks");
            try (Stream<Path> shards = Files.list(blocks)) {
                for (Path shard : shards.toList()) {
                    try (Stream<Path> files = Files.walk(shard)) {
                        for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                            Files.delete(f);
                        }
                    }
                }
            }
            assertThat(blocks).isEmptyDirectory();
            leftAlone(blocks); // the user's rm is over: the folders are made again at the next write
            // The deleted block is a miss, forgotten quietly: not a damaged block (no warning, not counted).
            BlockKey gone = new BlockKey(blob, BS, 0);
            assertThat(cache.get(gone, 0, java.nio.ByteBuffer.allocate(BS), 0, BS)).isFalse();
            assertThat(cache.contains(gone)).isFalse();
            assertThat(metrics.cacheCorruptBlocks.sum()).isZero();
            for (int i = 1; i < 4; i++) {
                putAndReadBack(cache, blob, data, i);
            }
            assertThat(metrics.cacheWritesSkipped.sum()).as("no write skipped").isZero();
        } finally {
            cache.close();
        }
    }

    /**
     * Session 44's CI: an {@code rm -rf} of the cache directory under a running warpd stopped with
     * "v1/blocks: Directory not empty", as a write made a block folder again in {@code blocks/}
     * after the rm had listed it. A block folder is made again only once {@code blocks/} has been
     * left alone 5 s; warpd's own folders made meanwhile do not count as a change.
     */
    @Test
    void blockFoldersAreNotMadeAgainWhileTheirFolderIsBeingDeletedFrom() throws Exception {
        ReadMetrics metrics = new ReadMetrics();
        DiskBlocks cache = new DiskBlocks(dir, 64L << 20, 0, 16, metrics, null);
        try {
            // Three blobs in three block folders.
            java.util.List<byte[]> datas = new java.util.ArrayList<>();
            java.util.Set<String> folders = new java.util.HashSet<>();
            for (int seed = 20; datas.size() < 3; seed++) {
                byte[] d = TestBlobs.bytes(2 * BS, seed);
                if (folders.add(BlobId.of(d).hex().substring(0, 2))) {
                    datas.add(d);
                }
            }
            for (byte[] d : datas) {
                putAndReadBack(cache, BlobId.of(d), d, 0);
            }
            Path blocks = dir.resolve(CacheDirectory.FORMAT_DIR).resolve("blocks");
            try (Stream<Path> shards = Files.list(blocks)) {
                for (Path shard : shards.toList()) {
                    try (Stream<Path> files = Files.walk(shard)) {
                        for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                            Files.delete(f);
                        }
                    }
                }
            }
            // An rm is (as far as warpd can tell) still under way: the write is skipped, no folder made.
            BlobId first = BlobId.of(datas.get(0));
            cache.put(new BlockKey(first, BS, 1), first, datas.get(0), BS, BS, null);
            assertThat(metrics.cacheWritesSkipped.sum()).as("the write that found its folder gone").isEqualTo(1);
            assertThat(blocks).as("nothing made in it: the rm's rmdir would succeed").isEmptyDirectory();
            // Left alone 5 s: made again; the next folders too, at once, though blocks/ just changed (warpd's own change).
            leftAlone(blocks);
            for (byte[] d : datas) {
                putAndReadBack(cache, BlobId.of(d), d, 1);
            }
            assertThat(metrics.cacheWritesSkipped.sum()).as("no write skipped once left alone").isEqualTo(1);
            try (Stream<Path> shards = Files.list(blocks)) {
                assertThat(shards.map(f -> f.getFileName().toString())).containsExactlyInAnyOrderElementsOf(folders);
            }
        } finally {
            cache.close();
        }
    }

    /** Sets {@code blocks/}'s modification time past the wait, as if the user's deletion ended that long ago. */
    private static void leftAlone(Path blocks) throws IOException {
        Files.setLastModifiedTime(blocks, java.nio.file.attribute.FileTime.fromMillis(
                System.currentTimeMillis() - CacheDirectory.SHARD_REMAKE_QUIET_MILLIS - 1_000));
    }

    /**
     * Audit 51: a cache full of blocks read once evicted each block read ahead as it was written
     * (W-TinyLFU admits a block only if it was asked for more often than the one it pushes out,
     * and nobody has asked for a block read ahead yet), and its reader then fetched it again. A
     * block read ahead is held until its first read, within the bound; then it competes as any.
     */
    @Test
    void blocksReadAheadAreKeptUntilReadInACacheFullOfBlocksReadOnce() throws IOException {
        ReadMetrics metrics = new ReadMetrics();
        long limit = 64 * ON_DISK;
        byte[] data = TestBlobs.bytes(240 * BS, 12);
        BlobId blob = BlobId.of(data);
        DiskBlocks disk = new DiskBlocks(dir, limit, 0, 16, metrics, null);
        try {
            java.nio.ByteBuffer out = java.nio.ByteBuffer.allocate(BS);
            for (int i = 0; i < 64; i++) {
                putAndReadBack(disk, blob, data, i); // a file read once, the cache full of it
            }
            // Read ahead: 8 blocks past where a sequential reader is, each block then read in two
            // halves (it is held until a read reaches its end).
            int kept = 0;
            for (int i = 64; i < 192; i++) {
                readAhead(disk, blob, data, i);
                int next = i - 8;
                if (next >= 64) {
                    BlockKey k = new BlockKey(blob, BS, next);
                    boolean first = disk.get(k, 0, out.clear(), 0, BS / 2);
                    assertThat(disk.pinned(k)).as("held after its first half").isTrue();
                    kept += first && disk.get(k, BS / 2, out.clear(), 0, BS / 2) ? 1 : 0;
                    assertThat(disk.pinned(k)).as("not held once read to its end").isFalse();
                }
            }
            assertThat(kept).as("blocks read ahead still there when read").isEqualTo(120);
            assertThat(metrics.prefetchWastedBytes.sum()).isZero();
            assertThat(disk.pinnedBytes()).as("the 8 not read yet").isEqualTo(8 * ON_DISK);
            assertThat(disk.sizeBytes()).as("held blocks count as held, within the limit").isLessThanOrEqualTo(limit);
            assertThat(bytesOnDisk()).isLessThanOrEqualTo(limit);
            // Read, they give their room back: the cache fills to its limit again (the review: a
            // reserve left high kept it under its limit for good).
            for (int i = 184; i < 192; i++) {
                assertThat(disk.get(new BlockKey(blob, BS, i), 0, out.clear(), 0, BS)).isTrue();
            }
            assertThat(disk.pinnedBytes()).isZero();
            for (int i = 216; i < 240; i++) {
                disk.put(new BlockKey(blob, BS, i), blob, data, i * BS, BS, null); // kept or not, as TinyLFU says
            }
            assertThat(disk.sizeBytes()).as("full again but for the reserve: the most held at once, 9 blocks")
                    .isGreaterThanOrEqualTo(limit - reserve(limit, 9 * ON_DISK)).isLessThanOrEqualTo(limit);

            // The bound is a quarter of the cache, 16 blocks: 24 more read ahead and not read let
            // the oldest go first.
            for (int i = 192; i < 216; i++) {
                readAhead(disk, blob, data, i);
            }
            assertThat(disk.pinnedBytes()).isEqualTo(16 * ON_DISK);
            for (int i = 184; i < 200; i++) {
                assertThat(disk.pinned(new BlockKey(blob, BS, i))).as("block %d, among the oldest", i).isFalse();
            }
            for (int i = 200; i < 216; i++) {
                assertThat(disk.pinned(new BlockKey(blob, BS, i))).as("block %d, among the newest", i).isTrue();
            }
            assertThat(disk.sizeBytes()).isLessThanOrEqualTo(limit);
            assertThat(bytesOnDisk()).isLessThanOrEqualTo(limit);

            // gc keeps the held blocks while the others make enough room, and lets them go when not.
            disk.gc(limit / 2);
            assertThat(disk.sizeBytes()).isLessThanOrEqualTo(limit / 2);
            assertThat(disk.pinnedBytes()).as("held through a gc the others satisfy").isEqualTo(16 * ON_DISK);
            assertThat(disk.gc(0)).as("gc lets the held blocks go too").isPositive();
            assertThat(disk.sizeBytes()).isZero();
            assertThat(disk.pinnedBytes()).isZero();
            assertThat(disk.blockCount()).isZero();
            assertThat(bytesOnDisk()).isZero();
            // And after it the cache holds its whole limit again.
            for (int i = 0; i < 64; i++) {
                putAndReadBack(disk, blob, data, i);
            }
            assertThat(disk.sizeBytes()).isGreaterThan(limit - 2 * ON_DISK);
        } finally {
            disk.close();
        }
    }

    /**
     * Passes over a dataset half again the cache's size keep part of it, whether each block is
     * read in one piece or eight and whether it was read ahead: the last three of six passes
     * fetch at most 55% of the blocks a pass (34-51% here; a third is the least any policy can),
     * and 90% with read-ahead past what may be held (86%). Counted a use a piece, a block read
     * in eight pieces looked eight times as used, and a block held as read ahead counted two uses
     * (placed, and weighed again once read) against one for a block kept from the last pass: the
     * last passes fetched all of the blocks read in eight pieces, 51-100% with 8 blocks read
     * ahead, and 79-136% with 64 (blocks read ahead evicted unread and fetched again).
     */
    @Test
    void passesOverADatasetLargerThanTheCacheKeepPartOfItHoweverItIsRead() throws IOException {
        // Pieces a block, blocks read ahead (up to 50 may be held), most fetched a pass.
        Object[][] ways = {{8, 0, 0.55}, {1, 8, 0.55}, {8, 8, 0.55}, {8, 64, 0.9}};
        for (Object[] way : ways) {
            int pieces = (int) way[0];
            int ahead = (int) way[1];
            ReadMetrics metrics = new ReadMetrics();
            DiskBlocks disk = new DiskBlocks(dir.resolve(pieces + "-" + ahead), 200 * ON_DISK, 0, 16, metrics, null);
            try {
                double[] fetched = passes(disk, 300, 6, pieces, ahead);
                double last3 = (fetched[3] + fetched[4] + fetched[5]) / 3;
                assertThat(last3).as("%d pieces, %d ahead: fetched a pass %s", pieces, ahead,
                        Arrays.toString(fetched)).isLessThanOrEqualTo((double) way[2]);
                if (ahead > 0) {
                    assertThat(metrics.prefetchHitBlocks.sum()).as("reads served by read-ahead").isPositive();
                }
                if (ahead > 0 && ahead <= 50) {
                    assertThat(metrics.prefetchWastedBytes.sum()).as("read ahead and evicted unread").isZero();
                }
                assertThat(disk.pinnedBytes()).isZero();
                assertThat(disk.sizeBytes()).isLessThanOrEqualTo(200 * ON_DISK);
            } finally {
                disk.close();
            }
        }
    }

    /**
     * What counts as a use, block by block: the pieces of one read count once; a block placed
     * counted its read to come, held or not, let go unread or not (the review: let go unread it
     * counted that read again, three uses against one for a block kept from the last pass).
     */
    @Test
    void aBlockCountsOneUseAReadHoweverItWasPlaced() throws IOException {
        long limit = 64 * ON_DISK; // up to 16 held
        byte[] data = TestBlobs.bytes(40 * BS, 18);
        BlobId blob = BlobId.of(data);
        DiskBlocks disk = new DiskBlocks(dir, limit, 0, 16, new ReadMetrics(), null);
        try {
            // Held, read in 8 pieces: placing counted; the reads add nothing, a read next pass one.
            readAhead(disk, blob, data, 0);
            assertThat(disk.pinned(new BlockKey(blob, BS, 0))).isTrue();
            assertThat(readInPieces(disk, blob, 0)).isEqualTo(0);
            assertThat(readInPieces(disk, blob, 0)).as("read again from its start").isEqualTo(1);

            // Fetched for a reader that took its first piece from the fetch: the rest of its read
            // adds nothing; a read from the start later is a use.
            disk.put(new BlockKey(blob, BS, 1), blob, data, BS, BS, null);
            long before = disk.uses();
            assertThat(readPieces(disk, blob, 1, 1, 8)).isZero();
            assertThat(readInPieces(disk, blob, 1)).isEqualTo(1);

            // Let go unread past the bound (17 held for 16): the one let go counts its read to come
            // at once, and that read, in 8 pieces, adds nothing.
            for (int i = 2; i < 19; i++) {
                readAhead(disk, blob, data, i);
            }
            assertThat(disk.pinned(new BlockKey(blob, BS, 2))).as("the oldest, let go").isFalse();
            assertThat(disk.uses() - before).isEqualTo(2);
            assertThat(readInPieces(disk, blob, 2)).isEqualTo(0);

            // Let go after its first piece was read: its read goes on, counting nothing.
            BlockKey third = new BlockKey(blob, BS, 3);
            readPieces(disk, blob, 3, 0, 1);
            for (int i = 19; i < 21; i++) {
                readAhead(disk, blob, data, i);
            }
            assertThat(disk.pinned(third)).as("let go mid-read").isFalse();
            assertThat(readPieces(disk, blob, 3, 1, 8)).isZero();
        } finally {
            disk.close();
        }
    }

    /** Reads block {@code i} of {@code blob} in 8 pieces from its start; returns the uses that counted. */
    private static long readInPieces(DiskBlocks disk, BlobId blob, int i) {
        return readPieces(disk, blob, i, 0, 8);
    }

    /** Reads pieces {@code from} to {@code to - 1} of 8 of block {@code i} of {@code blob}; returns the uses that counted. */
    private static long readPieces(DiskBlocks disk, BlobId blob, int i, int from, int to) {
        long before = disk.uses();
        java.nio.ByteBuffer out = java.nio.ByteBuffer.allocate(BS);
        for (int p = from; p < to; p++) {
            assertThat(disk.get(new BlockKey(blob, BS, i), p * BS / 8, out.clear(), 0, BS / 8)).isTrue();
        }
        return disk.uses() - before;
    }

    /**
     * Reads blocks 0 to {@code blocks - 1} in order {@code passes} times, each in {@code pieces}
     * reads, with the next {@code ahead} blocks read ahead (put with a credit, as the fetch does,
     * when the reader reaches the block before them) and a block missing when read fetched (put)
     * once; returns the blocks put each pass over {@code blocks}.
     */
    private static double[] passes(DiskBlocks disk, int blocks, int passes, int pieces, int ahead) {
        byte[] data = TestBlobs.bytes(BS, 15);
        BlobId list = BlobId.of(data);
        ByteBuffer out = ByteBuffer.allocate(BS);
        double[] fetched = new double[passes];
        int piece = BS / pieces;
        for (int p = 0; p < passes; p++) {
            int puts = 0;
            for (int i = 0; i < blocks; i++) {
                for (int j = i == 0 ? 1 : Math.max(1, ahead); j <= ahead && i + j < blocks; j++) {
                    BlockKey k = passKey(i + j);
                    if (!disk.contains(k)) {
                        disk.put(k, list, data, 0, BS, new AtomicBoolean());
                        puts++;
                    }
                }
                BlockKey k = passKey(i);
                boolean got = false;
                for (int q = 0; q < pieces; q++) {
                    if (!disk.get(k, q * piece, out.clear(), 0, piece) && !got) {
                        disk.put(k, list, data, 0, BS, null); // the reader has the rest from its fetch
                        puts++;
                        got = true;
                    }
                }
            }
            fetched[p] = (double) puts / blocks;
        }
        return fetched;
    }

    /** Block {@code i} of the passes: 64 blocks a blob. */
    private static BlockKey passKey(int i) {
        return new BlockKey(blobNumber(1000 + i / 64), BS, i % 64);
    }

    /**
     * A held block whose file is deleted under warpd is a miss and no longer counted as held; the
     * reserve stays (the most held at once), so the cache fills to its limit less that.
     */
    @Test
    void aHeldBlockGoneFromTheDiskGivesItsRoomBack() throws IOException {
        long limit = 64 * ON_DISK;
        byte[] data = TestBlobs.bytes(96 * BS, 14);
        BlobId blob = BlobId.of(data);
        DiskBlocks disk = new DiskBlocks(dir, limit, 0, 16, new ReadMetrics(), null);
        try {
            for (int i = 0; i < 16; i++) {
                readAhead(disk, blob, data, i);
            }
            assertThat(disk.pinnedBytes()).isEqualTo(16 * ON_DISK);
            try (Stream<Path> all = Files.walk(dir.resolve(CacheDirectory.FORMAT_DIR).resolve("blocks"))) {
                all.filter(Files::isRegularFile).forEach(f -> f.toFile().delete());
            }
            java.nio.ByteBuffer out = java.nio.ByteBuffer.allocate(BS);
            for (int i = 0; i < 16; i++) {
                assertThat(disk.get(new BlockKey(blob, BS, i), 0, out.clear(), 0, BS)).as("gone: a miss").isFalse();
            }
            assertThat(disk.pinnedBytes()).isZero();
            for (int i = 16; i < 96; i++) {
                disk.put(new BlockKey(blob, BS, i), blob, data, i * BS, BS, null);
            }
            assertThat(disk.sizeBytes()).as("the cache fills to its limit but for the reserve, the most held at once")
                    .isGreaterThanOrEqualTo(limit - reserve(limit, 16 * ON_DISK)).isLessThanOrEqualTo(limit);
        } finally {
            disk.close();
        }
    }

    /**
     * What the index's bound leaves for held blocks once {@code mostHeld} bytes were held at once:
     * that, rounded up to a step (it is not lowered again but by gc).
     */
    private static long reserve(long limit, long mostHeld) {
        long step = step(limit);
        return (mostHeld + step - 1) / step * step;
    }

    /** The step the index's bound moves by, for a cache of {@code limit}. */
    private static long step(long limit) {
        return Math.min(limit / DiskBlocks.PIN_FRACTION, DiskBlocks.PIN_MAX_BYTES) / DiskBlocks.PIN_STEPS;
    }

    private static void readAhead(DiskBlocks disk, BlobId blob, byte[] data, int i) {
        disk.put(new BlockKey(blob, BS, i), blob, data, i * BS, BS, new java.util.concurrent.atomic.AtomicBoolean());
    }

    /**
     * The queue of pinned blocks stays about as long as what is pinned: a block read is dropped
     * from its head, and one pinned and never read, with thousands read after it, is let go once
     * the queue is full (the queue grew by a key a block read ahead, for as long as warpd ran).
     */
    @Test
    void theQueueOfBlocksReadAheadStaysShort() throws IOException {
        long limit = 64 * ON_DISK;
        byte[] data = TestBlobs.bytes(BS, 13);
        DiskBlocks disk = new DiskBlocks(dir, limit, 0, 16, new ReadMetrics(), null);
        try {
            java.nio.ByteBuffer out = java.nio.ByteBuffer.allocate(BS);
            for (int i = 0; i < 3000; i++) {
                BlockKey key = new BlockKey(blobNumber(i), BS, 0);
                disk.put(key, BlobId.of(data), data, 0, BS, new java.util.concurrent.atomic.AtomicBoolean());
                assertThat(disk.get(key, 0, out.clear(), 0, BS)).isTrue();
            }
            assertThat(disk.pinQueueLength()).as("each read block dropped").isLessThanOrEqualTo(1);

            BlockKey neverRead = new BlockKey(blobNumber(-1), BS, 0);
            disk.put(neverRead, BlobId.of(data), data, 0, BS, new java.util.concurrent.atomic.AtomicBoolean());
            for (int i = 3000; i < 6000; i++) {
                BlockKey key = new BlockKey(blobNumber(i), BS, 0);
                disk.put(key, BlobId.of(data), data, 0, BS, new java.util.concurrent.atomic.AtomicBoolean());
                assertThat(disk.get(key, 0, out.clear(), 0, BS)).isTrue();
            }
            assertThat(disk.pinned(neverRead)).as("let go once the queue was full behind it").isFalse();
            assertThat(disk.pinQueueLength()).as("and the queue drained").isLessThanOrEqualTo(2);
        } finally {
            disk.close();
        }
    }

    private static BlobId blobNumber(int i) {
        return BlobId.of(("blob " + i).getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    /** Puts block {@code i} of {@code data} and checks that it is kept and reads back as it is. */
    private static void putAndReadBack(DiskBlocks cache, BlobId blob, byte[] data, int i) {
        BlockKey key = new BlockKey(blob, BS, i);
        cache.put(key, blob, data, i * BS, BS, null);
        assertThat(cache.contains(key)).as("block %d is kept", i).isTrue();
        java.nio.ByteBuffer back = java.nio.ByteBuffer.allocate(BS);
        assertThat(cache.get(key, 0, back, 0, BS)).isTrue();
        assertThat(back.array()).isEqualTo(java.util.Arrays.copyOfRange(data, i * BS, (i + 1) * BS));
    }

    /** Waits until {@code t} has finished or is blocked (e.g. waiting for a lock the caller holds). */
    private static void awaitDoneOrBlocked(Thread t) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (t.isAlive() && System.nanoTime() < until) {
            Thread.State s = t.getState();
            if (s == Thread.State.BLOCKED || s == Thread.State.WAITING) {
                return;
            }
            Thread.onSpinWait();
        }
    }

    private long bytesOnDisk() {
        Path blocks = dir.resolve(CacheDirectory.FORMAT_DIR).resolve("blocks");
        if (!Files.isDirectory(blocks)) {
            return 0;
        }
        try (Stream<Path> s = Files.walk(blocks)) {
            return s.filter(Files::isRegularFile).mapToLong(p -> {
                try {
                    return Files.size(p);
                } catch (IOException e) {
                    return 0; // deleted while we looked
                }
            }).sum();
        } catch (IOException | UncheckedIOException e) {
            throw new AssertionError(e);
        }
    }
}
