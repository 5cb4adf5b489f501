package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReadAheadTest {
    private static final int MIB = 1 << 20;

    /** Records what read-ahead asks for and grants all of it. */
    private final List<int[]> scheduled = new ArrayList<>();
    private final Suspects suspects = new Suspects();
    private final ReadAhead readAhead = new ReadAhead(suspects);

    /** What the read executor does with a read's advice: fetches [from, to) up to what {@code grant} allows, and says so. */
    private static int read(ReadAhead ra, java.util.function.IntBinaryOperator grant, BlobRef blob, BlockHashList list,
                            long off, int len, boolean missed) {
        ReadAhead.Advice a = ra.onRead(blob, list, off, len, missed, Integer.MAX_VALUE);
        if (a.fetchAhead()) {
            ra.scheduled(blob.id(), a.to(), grant.applyAsInt(a.from(), a.to()));
        }
        return a.flags();
    }

    private int onRead(BlobRef blob, BlockHashList list, long off, int len, boolean missed) {
        return read(readAhead, (from, to) -> {
            scheduled.add(new int[] {from, to});
            return to;
        }, blob, list, off, len, missed);
    }

    private boolean onRead(BlobRef blob, BlockHashList list, long off, int len) {
        return (onRead(blob, list, off, len, false) & ReadAhead.FIRST) != 0;
    }

    private int scheduledBlocks() {
        return scheduled.stream().mapToInt(r -> r[1] - r[0]).sum();
    }

    @Test
    void aMemberThatContinuesAStreamFollowsTheBlocksButARereadOfTheLastMemberDoesNot() {
        BlockHashList list = TestBlobs.sizesOnly(100, MIB);
        BlobRef blob = TestBlobs.ref(list, 12);
        long member = 10L * MIB + 512;
        assertThat(readAhead.followsBlocks(blob, list, member, member + 30_000, false)).as("never read").isFalse();
        onRead(blob, list, member, 30_000, true);
        long next = member + 30_000 + 512;
        assertThat(readAhead.followsBlocks(blob, list, next, next + 20_000, false)).as("the next member of a scan").isTrue();
        assertThat(readAhead.followsBlocks(blob, list, member, member + 30_000, false)).as("the same member again").isFalse();
        assertThat(readAhead.followsBlocks(blob, list, 40L * MIB, 40L * MIB + 1000, false)).as("far away").isFalse();
        assertThat(scheduled).as("asking records nothing").isEmpty();
    }

    /**
     * Tensors looked up at random (1 KiB each, 250 of a file's 5,000) often land within a scan's
     * 16 KiB gap of the last one: as lookups they open no read-ahead window; the next tensor in
     * file order, starting exactly where the last ended, still continues the stream.
     */
    @Test
    void aLookupContinuesAStreamOnlyWhereItEndedExactly() {
        BlockHashList list = TestBlobs.sizesOnly(128, MIB);
        BlobRef blob = TestBlobs.ref(list, 14);
        long tensor = 5L * MIB + 8_192;
        readAhead.onRead(blob, list, tensor, 1024, false, Integer.MAX_VALUE, true);
        long near = tensor + 1024 + 9 * 1024; // nine tensors on
        assertThat(readAhead.followsBlocks(blob, list, near, near + 1024, true)).as("a lookup near the end").isFalse();
        assertThat(readAhead.followsBlocks(blob, list, near, near + 1024, false)).as("a member there would").isTrue();
        ReadAhead.Advice a = readAhead.onRead(blob, list, near, 1024, false, Integer.MAX_VALUE, true);
        assertThat(a.fetchAhead()).as("no window opened by a near lookup").isFalse();
        long next = near + 1024;
        assertThat(readAhead.followsBlocks(blob, list, next, next + 1024, true)).as("the next tensor in file order").isTrue();
        assertThat(readAhead.onRead(blob, list, next, 1024, false, Integer.MAX_VALUE, true).fetchAhead()).isTrue();
    }

    /**
     * Lookups missing the cache make their blob dense only once they have read half of it (at
     * most twice what was read fetched), where members' seeks need an eighth of the blocks and
     * 1/64 of the bytes: 1,000 random tensors of 1 KiB had a 21 MiB file fetched whole.
     */
    @Test
    void lookupsMakeABlobDenseOnlyOnceTheyHaveReadHalfOfIt() {
        BlockHashList list = TestBlobs.sizesOnly(8, MIB);
        BlobRef blob = TestBlobs.ref(list, 15);
        java.util.Random rnd = new java.util.Random(26);
        long read = 0;
        int flags = 0;
        while ((read + 60_000) * 2 < 8L * MIB) {
            long at = (long) rnd.nextInt(8 * MIB / 65_536) * 65_536 + 4096;
            flags = readAhead.onRead(blob, list, at, 60_000, true, Integer.MAX_VALUE, true).flags();
            assertThat(flags & ReadAhead.DENSE_RANDOM).as("after %d bytes", read).isZero();
            read += 60_000;
        }
        for (int i = 0; i < 3 && (flags & ReadAhead.DENSE_RANDOM) == 0; i++) {
            flags = readAhead.onRead(blob, list, (long) (i + 1) * MIB + 100_000, 60_000, true, Integer.MAX_VALUE, true)
                    .flags();
        }
        assertThat(flags & ReadAhead.DENSE_RANDOM).as("half of it read").isNotZero();
        // Members: far sooner.
        BlobRef other = TestBlobs.ref(list, 16);
        int memberFlags = 0;
        for (int i = 0; i < ReadAhead.DENSE_MIN_SEEKS && (memberFlags & ReadAhead.DENSE_RANDOM) == 0; i++) {
            memberFlags = readAhead.onRead(other, list, (long) i * MIB + 4096, 200_000, true, Integer.MAX_VALUE, false)
                    .flags();
        }
        assertThat(memberFlags & ReadAhead.DENSE_RANDOM).isNotZero();
    }

    /**
     * Lookups spread over a blob's blocks (one a block) stay on their own; once they are twice as
     * many as the blocks they touched (tensors read at random from a small file) the blocks serve
     * them: a GET then brings the tensors read next.
     */
    @Test
    void lookupsFollowTheBlocksOnceTheyAreManyABlock() {
        BlockHashList list = TestBlobs.sizesOnly(1024, MIB);
        BlobRef big = TestBlobs.ref(list, 17);
        for (int i = 0; i < 100; i++) {
            readAhead.onRead(big, list, (long) i * 7 * MIB + 4096, 1024, true, Integer.MAX_VALUE, true);
        }
        assertThat(readAhead.followsBlocks(big, list, 900L * MIB, 900L * MIB + 1024, true))
                .as("100 lookups in 100 blocks: sparse").isFalse();
        BlockHashList small = TestBlobs.sizesOnly(128, MIB);
        BlobRef file = TestBlobs.ref(small, 18);
        for (int i = 0; i < ReadAhead.LOOKUP_SPARSE_MIN - 1; i++) {
            readAhead.onRead(file, small, (long) (i % 4) * MIB + 8192 + i * 4096L, 1024, true, Integer.MAX_VALUE, true);
        }
        assertThat(readAhead.followsBlocks(file, small, 3L * MIB, 3L * MIB + 1024, true)).as("too few yet").isFalse();
        readAhead.onRead(file, small, 2L * MIB + 500_000, 1024, true, Integer.MAX_VALUE, true);
        assertThat(readAhead.followsBlocks(file, small, 3L * MIB, 3L * MIB + 1024, true))
                .as("8 lookups in 4 blocks").isTrue();
        assertThat(readAhead.followsBlocks(file, small, 3L * MIB, 3L * MIB + 1024, false))
                .as("a member read is no lookup").isFalse();
        BlockHashList tiny = TestBlobs.sizesOnly(21, MIB);
        assertThat(readAhead.followsBlocks(TestBlobs.ref(tiny, 19), tiny, 0, 1024, true))
                .as("a blob under 64 MiB: its blocks, from the first lookup").isTrue();
    }

    @Test
    void aDenseBlobFollowsTheBlocksEverywhere() {
        BlockHashList list = TestBlobs.sizesOnly(64, MIB);
        BlobRef blob = TestBlobs.ref(list, 13);
        for (int i = 0; i < ReadAhead.DENSE_MIN_SEEKS; i++) {
            onRead(blob, list, (long) i * 8 * MIB, 200_000, true);
        }
        assertThat(readAhead.followsBlocks(blob, list, 63L * MIB, 63L * MIB + 1000, false)).isTrue();
    }

    /**
     * A cache that cannot hold the shards read at random until their members are read does not
     * fetch them whole: a 96 MiB shard read densely at random in a 256 MiB cache is fetched block
     * by block; in a large cache it is fetched whole.
     */
    @Test
    void noBlobLargerThanAnEighthOfTheCacheIsFetchedWhole() {
        BlockHashList list = TestBlobs.sizesOnly(96, MIB);
        BlobRef blob = TestBlobs.ref(list, 22);
        ReadAhead small = new ReadAhead(new Suspects(), new ParquetLayouts(null), 256L * MIB);
        ReadAhead large = new ReadAhead(new Suspects(), new ParquetLayouts(null), 100L << 30);
        int denseSmall = 0;
        int denseLarge = 0;
        for (int i = 0; i < 40; i++) {
            long off = (long) (i * 37 % 96) * MIB + 300_000;
            denseSmall += read(small, (f, t) -> t, blob, list, off, 200_000, true) & ReadAhead.DENSE_RANDOM;
            denseLarge += read(large, (f, t) -> t, blob, list, off, 200_000, true) & ReadAhead.DENSE_RANDOM;
        }
        assertThat(denseLarge).as("a large cache fetches the shard whole").isEqualTo(ReadAhead.DENSE_RANDOM);
        assertThat(denseSmall).as("a 256 MiB cache does not fetch a 96 MiB shard whole").isZero();
    }

    /**
     * A window is never more than the cache holds of blocks read ahead and not yet read, less the
     * block being read, counted at their weight on disk (4 KiB of header each): with 25 MiB held
     * (a 100 MiB disk cache) a scan's window stops at 23 blocks of 1 MiB, and its read-ahead never
     * runs more than that past the reader; with 256 MiB it reaches the full 64 (16 of 4 MiB); a
     * cache that holds nothing out of eviction (memory) keeps 64 (audit 52, F2: a 64 MiB window
     * in a 150 MB cache had its oldest blocks evicted unread).
     */
    @Test
    void aWindowIsAtMostWhatTheCacheHoldsOfBlocksReadAhead() {
        BlockHashList list = TestBlobs.sizesOnly(400, MIB);
        BlobRef blob = TestBlobs.ref(list, 23);
        assertThat(largestLead(withHeldRoom(25L * MIB), blob, list)).as("25 MiB held").isEqualTo(new int[] {23, 23});
        assertThat(largestLead(withHeldRoom(256L * MIB), blob, list)).as("256 MiB held").isEqualTo(new int[] {64, 64});
        assertThat(largestLead(withHeldRoom(Long.MAX_VALUE), blob, list)).as("memory").isEqualTo(new int[] {64, 64});
        assertThat(withHeldRoom(256L * MIB).maxWindowBlocks(4 * MIB)).as("4 MiB blocks").isEqualTo(16);
        assertThat(withHeldRoom(MIB).maxWindowBlocks(MIB)).as("less than a block held: one block").isEqualTo(1);
        assertThat(withHeldRoom(64L * MIB).maxWindowBlocks(MIB)).as("a 256 MiB cache: 64 MiB held, headers and all")
                .isEqualTo(62);
    }

    private static ReadAhead withHeldRoom(long bytes) {
        return new ReadAhead(new Suspects(), new ParquetLayouts(null), 100L << 30, bytes);
    }

    /** A scan of {@code blob} in 128 KiB reads, all read-ahead granted: its largest window and how far past the read it reached. */
    private static int[] largestLead(ReadAhead ra, BlobRef blob, BlockHashList list) {
        int window = 0;
        int lead = 0;
        for (long off = 0; off < 300L * MIB; off += 128 * 1024) {
            ReadAhead.Advice a = ra.onRead(blob, list, off, 128 * 1024, false, Integer.MAX_VALUE);
            window = Math.max(window, a.window());
            if (a.fetchAhead()) {
                ra.scheduled(blob.id(), a.to(), a.to());
                lead = Math.max(lead, a.to() - (int) (off / MIB) - 1);
            }
        }
        return new int[] {window, lead};
    }

    @Test
    void firstReadOfABlobSchedulesNothingAndIsReportedAsFirstTouch() {
        BlockHashList list = TestBlobs.sizesOnly(100, MIB);
        BlobRef blob = TestBlobs.ref(list, 1);
        assertThat(onRead(blob, list, 0, 128 * 1024)).isTrue();
        assertThat(onRead(blob, list, 50L * MIB, 4096)).isFalse();
        assertThat(scheduled).isEmpty();
    }

    @Test
    void verificationFailureHoldsBackReadAheadUntilAGetVerifiesThenRestartsSmall() {
        BlockHashList list = TestBlobs.sizesOnly(400, MIB);
        BlobRef blob = TestBlobs.ref(list, 11);
        for (long off = 0; off < 20L * MIB; off += 128 * 1024) {
            onRead(blob, list, off, 128 * 1024);
        }
        assertThat(scheduled).isNotEmpty();
        suspects.failed(blob.id());
        assertThat(suspects.suspect(blob.id())).isTrue();
        scheduled.clear();
        for (long off = 20L * MIB; off < 60L * MIB; off += 128 * 1024) {
            onRead(blob, list, off, 128 * 1024);
        }
        assertThat(scheduled).as("nothing read ahead of a blob that fails verification").isEmpty();

        suspects.verified(blob.id());
        assertThat(suspects.suspect(blob.id())).isFalse();
        onRead(blob, list, 60L * MIB, 128 * 1024);
        assertThat(scheduled).hasSize(1);
        assertThat(scheduled.get(0)).as("the window starts over at two blocks").containsExactly(61, 63);
    }

    @Test
    void atTheFullWindowTopUpsAreExactlyHalfAWindowSoGetsStayWhole() {
        BlockHashList list = TestBlobs.sizesOnly(400, MIB);
        BlobRef blob = TestBlobs.ref(list, 9);
        for (long off = 0; off < 300L * MIB; off += 128 * 1024) {
            onRead(blob, list, off, 128 * 1024);
        }
        // Past the ramp (windows 2, 4, ..., 64), every top-up is 32 blocks: four 8-block runs.
        List<int[]> steady = scheduled.stream().filter(r -> r[0] >= 100).toList();
        assertThat(steady).isNotEmpty();
        assertThat(steady).allSatisfy(r -> assertThat(r[1] - r[0]).isEqualTo(32));
    }

    @Test
    void sequentialReadsOpenTheWindowAtTwoBlocksAndDoubleItPerBlockUpTo64MiB() {
        BlockHashList list = TestBlobs.sizesOnly(400, MIB);
        BlobRef blob = TestBlobs.ref(list, 2);
        onRead(blob, list, 0, 128 * 1024);
        onRead(blob, list, 128 * 1024, 128 * 1024);
        assertThat(scheduled).hasSize(1);
        assertThat(scheduled.get(0)).containsExactly(1, 3);
        for (long off = 256 * 1024; off < 200L * MIB; off += 128 * 1024) {
            onRead(blob, list, off, 128 * 1024);
        }
        int maxAhead = 0;
        int maxRun = 0;
        for (int[] r : scheduled) {
            maxRun = Math.max(maxRun, r[1] - r[0]);
        }
        maxAhead = scheduled.get(scheduled.size() - 1)[1] - 200;
        assertThat(maxRun).as("largest top-up").isLessThanOrEqualTo(64);
        assertThat(maxAhead).as("blocks ahead of the reader at 200 MiB").isBetween(32, 64);
        // Every block from 1 on was asked for exactly once.
        assertThat(scheduled.get(0)[0]).isEqualTo(1);
        for (int i = 1; i < scheduled.size(); i++) {
            assertThat(scheduled.get(i)[0]).isEqualTo(scheduled.get(i - 1)[1]);
        }
    }

    @Test
    void smallMembersWithTarHeadersBetweenThemCountAsSequential() {
        BlockHashList list = TestBlobs.sizesOnly(64, MIB);
        BlobRef blob = TestBlobs.ref(list, 3);
        long off = 512;
        for (int i = 0; i < 200; i++) {
            onRead(blob, list, off, 90_000);
            off += 90_000 + 1024; // next member's data after its 512-byte header and padding
        }
        assertThat(scheduledBlocks()).isGreaterThanOrEqualTo(16);
    }

    /**
     * Records of a block read at random, each in eight 128 KiB reads (a loader of 1 MiB samples
     * from a big file), stop opening windows once the blob has shown it: each record's second read
     * continued its stream and opened 2 blocks nobody read (200 records: 400 blocks). A scan of
     * the same blob afterwards reads nothing ahead until it is 1 MiB past its seek, then does.
     */
    @Test
    void recordsReadAtRandomInPiecesStopOpeningWindowsButAScanStillReadsAhead() {
        BlockHashList list = TestBlobs.sizesOnly(2000, MIB);
        BlobRef blob = TestBlobs.ref(list, 16);
        java.util.Random rnd = new java.util.Random(16);
        for (int r = 0; r < 200; r++) {
            long record = (long) rnd.nextInt(1900) * MIB;
            for (int p = 0; p < 8; p++) {
                onRead(blob, list, record + p * 128 * 1024, 128 * 1024);
            }
        }
        int records = scheduledBlocks();
        assertThat(records).as("blocks read ahead for 200 records").isBetween(1, 2 * (ReadAhead.SHORT_RUNS_MIN
                + ReadAhead.STREAMS_PER_BLOB + 1));
        // A lookup (a tensor) is not held back: the next one in file order opens its window.
        long tensor = 1940L * MIB + 4096;
        readAhead.onRead(blob, list, tensor, 1024, false, Integer.MAX_VALUE, true);
        assertThat(readAhead.onRead(blob, list, tensor + 1024, 1024, false, Integer.MAX_VALUE, true).fetchAhead())
                .as("a lookup continued").isTrue();
        int scanFrom = scheduledBlocks();
        long off = 1950L * MIB;
        for (; off < 1950L * MIB + MIB; off += 128 * 1024) {
            onRead(blob, list, off, 128 * 1024);
        }
        assertThat(scheduledBlocks()).as("nothing ahead within the scan's first MiB").isEqualTo(scanFrom);
        for (; off < 1970L * MIB; off += 128 * 1024) {
            onRead(blob, list, off, 128 * 1024);
        }
        assertThat(scheduled.get(scheduled.size() - 1)[1]).as("the scan's read-ahead reaches past 1980 MiB")
                .isGreaterThan(1980);
        assertThat(scheduledBlocks() - scanFrom).as("blocks the scan read ahead").isGreaterThanOrEqualTo(16);
    }

    /**
     * Unaligned records of 1 MB (two blocks each) are held back too, and a fresh one's second read
     * then opens nothing; records of 1.5 MiB, more than a run may be, keep opening windows.
     */
    @Test
    void shortRunsAreThoseOfAtMostOneMiB() {
        for (int size : new int[] {1_000_000, 3 * MIB / 2}) {
            scheduled.clear();
            BlockHashList list = TestBlobs.sizesOnly(2000, MIB);
            BlobRef blob = TestBlobs.ref(list, size);
            ReadAhead fresh = new ReadAhead(suspects);
            java.util.function.IntBinaryOperator grant = (from, to) -> {
                scheduled.add(new int[] {from, to});
                return to;
            };
            java.util.Random rnd = new java.util.Random(17);
            for (int r = 0; r < 200; r++) {
                long record = (long) rnd.nextInt(1_900_000_000);
                for (int p = 0; p < size; p += 128 * 1024) {
                    read(fresh, grant, blob, list, record + p, Math.min(128 * 1024, size - p), false);
                }
            }
            long next = 1_950_000_000L;
            fresh.onRead(blob, list, next, 128 * 1024, false, Integer.MAX_VALUE);
            boolean opens = fresh.onRead(blob, list, next + 128 * 1024, 128 * 1024, false, Integer.MAX_VALUE)
                    .fetchAhead();
            if (size < MIB) {
                // Until then a record across two blocks grew its window to 4 (without the rule: ~800).
                assertThat(scheduledBlocks()).as("1 MB records").isLessThanOrEqualTo(4 * (ReadAhead.SHORT_RUNS_MIN
                        + ReadAhead.STREAMS_PER_BLOB + 1));
                assertThat(opens).as("a fresh 1 MB record's second read").isFalse();
            } else {
                assertThat(opens).as("a fresh 1.5 MiB record's second read").isTrue();
            }
        }
    }

    /**
     * DataLoader workers reading a shard in order, each batch under a block and a stream of its
     * own (more workers than streams kept), read what one another's windows read ahead: those
     * windows are not short, and read-ahead goes on (the review: they counted as short runs).
     */
    @Test
    void workersReadingInOrderInSmallBatchesKeepTheirReadAhead() {
        BlockHashList list = TestBlobs.sizesOnly(400, MIB);
        BlobRef blob = TestBlobs.ref(list, 19);
        readBatchesInOrder(blob, list, 0, 50);
        int early = scheduled.size();
        readBatchesInOrder(blob, list, 50, 100);
        assertThat(scheduled.size()).as("read-ahead still asked for in rounds 50-99").isGreaterThan(early);
        // 198 as before the rule; 8 when such windows counted as short runs.
        assertThat(scheduledBlocks()).as("blocks of the 375 read ahead").isGreaterThanOrEqualTo(150);
    }

    /**
     * Rounds {@code from} to {@code to} of six workers each reading a 640 KB batch, the batches
     * one after another in the blob, their 128 KiB reads interleaved.
     */
    private void readBatchesInOrder(BlobRef blob, BlockHashList list, int from, int to) {
        int workers = 6;
        int batch = 640 * 1024;
        for (int round = from; round < to; round++) {
            for (int p = 0; p < batch; p += 128 * 1024) {
                for (int w = 0; w < workers; w++) {
                    long start = ((long) round * workers + w) * batch;
                    onRead(blob, list, start + p, 128 * 1024);
                }
            }
        }
    }

    @Test
    void randomReadsScheduleNothing() {
        BlockHashList list = TestBlobs.sizesOnly(1000, MIB);
        BlobRef blob = TestBlobs.ref(list, 4);
        java.util.Random rnd = new java.util.Random(3);
        for (int i = 0; i < 200; i++) {
            onRead(blob, list, (long) rnd.nextInt(1000) * MIB + rnd.nextInt(MIB - 4096), 4096);
        }
        assertThat(scheduledBlocks()).isLessThanOrEqualTo(4);
    }

    @Test
    void aSeekStartsOverWithNoReadAhead() {
        BlockHashList list = TestBlobs.sizesOnly(400, MIB);
        BlobRef blob = TestBlobs.ref(list, 5);
        for (long off = 0; off < 20L * MIB; off += 128 * 1024) {
            onRead(blob, list, off, 128 * 1024);
        }
        int before = scheduled.size();
        onRead(blob, list, 300L * MIB, 128 * 1024);
        assertThat(scheduled).hasSize(before);
        onRead(blob, list, 300L * MIB + 128 * 1024, 128 * 1024);
        assertThat(scheduled.get(scheduled.size() - 1)).containsExactly(301, 303);
    }

    @Test
    void interleavedScansOfOneBlobKeepTheirOwnWindows() {
        BlockHashList list = TestBlobs.sizesOnly(400, MIB);
        BlobRef blob = TestBlobs.ref(list, 6);
        long a = 0;
        long b = 200L * MIB;
        for (int i = 0; i < 80; i++) {
            onRead(blob, list, a, 128 * 1024);
            onRead(blob, list, b, 128 * 1024);
            a += 128 * 1024;
            b += 128 * 1024;
        }
        assertThat(scheduled.stream().anyMatch(r -> r[0] < 200)).isTrue();
        assertThat(scheduled.stream().anyMatch(r -> r[0] > 200)).isTrue();
        assertThat(scheduledBlocks()).as("both streams read ahead").isGreaterThan(30);
    }

    @Test
    void dataLoaderWorkersTakingBatchesInTurnKeepOneFullWindowAheadOfThem() {
        // Two workers, batches of 32 members of 128 KiB with a 1 KiB tar header each: worker w
        // reads batches w, w + 2, w + 4, ..., the two reading members in a random interleaving.
        // Each worker's next batch starts 4 MB past its last one, inside the scan's read-ahead.
        // Runs of 4 blocks, as on a link of 25 MB/s a connection (ConnectionRate).
        BlockHashList list = TestBlobs.sizesOnly(400, MIB);
        BlobRef blob = TestBlobs.ref(list, 12);
        java.util.Random rnd = new java.util.Random(1);
        int member = 128 * 1024;
        int stride = member + 1024;
        int batch = 32;
        int[] next = {0, 1};
        int[] pos = {0, 0};
        long furthest = 0;
        int highest = 0;
        int advised = 0;
        int leastAhead = Integer.MAX_VALUE;
        while (furthest < 320L * MIB) {
            int w = rnd.nextInt(2);
            long off = ((long) next[w] * batch + pos[w]) * stride + 1024;
            ReadAhead.Advice a = readAhead.onRead(blob, list, off, member, false, 4);
            if (a.fetchAhead()) {
                highest = Math.max(highest, a.to());
                advised += a.to() - a.from();
            }
            furthest = Math.max(furthest, off + member);
            if (furthest > 100L * MIB && furthest < 300L * MIB) { // past the ramp, before the blob's end
                leastAhead = Math.min(leastAhead, highest - (int) (furthest / MIB));
            }
            if (++pos[w] == batch) {
                pos[w] = 0;
                next[w] += 2;
            }
        }
        // The scan keeps its window, less one top-up, ahead of its furthest reader: with a stream
        // begun at each batch it fell to 12-22 blocks (a link's worth of GETs is ~57 MB here).
        assertThat(leastAhead).as("blocks read ahead of the furthest worker, at the least").isGreaterThanOrEqualTo(56);
        // The trailing worker's own stream asks again for some blocks already asked for (each
        // asked for costs a look in the in-flight map); a stream a batch asked for each 6-7 times.
        assertThat(advised).as("blocks advised").isLessThanOrEqualTo(2 * list.blockCount());
    }

    @Test
    void aScanWhoseReadAheadReachesTheBlobsEndSaysSoOnceAndAShortRunDoesNot() {
        BlockHashList list = TestBlobs.sizesOnly(24, MIB);
        BlobRef scanned = TestBlobs.ref(list, 13);
        BlobRef glanced = TestBlobs.ref(list, 14);
        int ends = 0;
        for (long off = 0; off < 24L * MIB; off += 128 * 1024) {
            ReadAhead.Advice a = readAhead.onRead(scanned, list, off, 128 * 1024, true, 4);
            if ((a.flags() & ReadAhead.SCAN_ENDS) != 0) {
                ends++;
                assertThat(a.to()).isEqualTo(24);
                assertThat(a.window()).isGreaterThanOrEqualTo(ReadAhead.SCAN_ENDS_MIN_WINDOW_BLOCKS);
            }
        }
        assertThat(ends).isEqualTo(1);
        // The last two blocks read in order: a window of 2 and 4 reaches the end, but this is no scan.
        for (long off = 22L * MIB; off < 24L * MIB; off += 128 * 1024) {
            assertThat(readAhead.onRead(glanced, list, off, 128 * 1024, true, 4).flags() & ReadAhead.SCAN_ENDS).isZero();
        }
    }

    @Test
    void aShuffledPassOverAShardNeverSaysItsScanEnded() {
        // 240 members of 100 KB in a 24-block shard, every one read once in random order: random
        // reads landing in a small window must not grow it into a scan's (the review: 82 seeds of
        // 200 said SCAN_ENDS when any open window took reads inside its read-ahead).
        BlockHashList list = TestBlobs.sizesOnly(24, MIB);
        for (int seed = 0; seed < 200; seed++) {
            BlobRef blob = TestBlobs.ref(list, 1000 + seed);
            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < 240; i++) {
                order.add(i);
            }
            java.util.Collections.shuffle(order, new java.util.Random(seed));
            for (int i : order) {
                int flags = readAhead.onRead(blob, list, 512 + i * 100_512L, 100_000, true, 4).flags();
                assertThat(flags & ReadAhead.SCAN_ENDS).as("seed %d", seed).isZero();
            }
        }
    }

    @Test
    void aPrimedBlobsFirstReadContinuesItsStreamAndIsStillItsFirstTouch() {
        BlockHashList list = TestBlobs.sizesOnly(100, MIB);
        BlobRef next = TestBlobs.ref(list, 15);
        assertThat(readAhead.prime(next, list, 64)).as("the scan's window").isEqualTo(64);
        assertThat(readAhead.prime(next, list, 64)).as("once").isZero();
        ReadAhead.Advice first = readAhead.onRead(next, list, 512, 100_000, true, 4);
        assertThat(first.flags() & ReadAhead.FIRST).isNotZero();
        // It continues the primed stream, whose window is the scan's: topped up past the 64 primed
        // blocks as the reader goes on, and the primed blocks are not asked for again.
        assertThat(first.fetchAhead()).isFalse();
        int highest = 0;
        for (long off = 512 + 100_000; off < 8L * MIB; off += 100_512) {
            ReadAhead.Advice a = readAhead.onRead(next, list, off, 100_000, false, 4);
            if (a.fetchAhead()) {
                assertThat(a.from()).isGreaterThanOrEqualTo(64);
                highest = Math.max(highest, a.to());
            }
        }
        assertThat(highest).isGreaterThan(64);
        // A blob scanned to its end before (the last epoch) is primed again, and its next scan
        // says SCAN_ENDS again.
        BlobRef scanned = TestBlobs.ref(list, 16);
        int ends = 0;
        for (long off = 0; off < 100L * MIB; off += 128 * 1024) {
            ends += readAhead.onRead(scanned, list, off, 128 * 1024, false, 4).flags() & ReadAhead.SCAN_ENDS;
        }
        assertThat(ends).isEqualTo(ReadAhead.SCAN_ENDS);
        assertThat(readAhead.prime(scanned, list, 64)).isEqualTo(64);
        ReadAhead.Advice again = readAhead.onRead(scanned, list, 512, 100_000, false, 4);
        assertThat(again.flags() & ReadAhead.FIRST).as("read before").isZero();
        assertThat(again.fetchAhead()).as("continues the primed stream").isFalse();
        for (long off = 512 + 100_000; off < 100L * MIB; off += 100_512) {
            ends += readAhead.onRead(scanned, list, off, 100_000, false, 4).flags() & ReadAhead.SCAN_ENDS;
        }
        assertThat(ends).as("the second scan reaches the end too").isEqualTo(2 * ReadAhead.SCAN_ENDS);
    }

    @Test
    void aCacheOfLessThanEightWindowsFollowsNoScanAcrossShardsOrReaders() {
        BlockHashList list = TestBlobs.sizesOnly(100, MIB);
        ReadAhead big = new ReadAhead(suspects, new ParquetLayouts(null), 512L * MIB);
        assertThat(big.prime(TestBlobs.ref(list, 17), list, 64)).as("an eighth of 512 MiB").isEqualTo(64);
        ReadAhead small = new ReadAhead(suspects, new ParquetLayouts(null), 511L * MIB);
        assertThat(small.prime(TestBlobs.ref(list, 18), list, 64)).isZero();
        // Nor does a read 4 MB ahead inside a scan's read-ahead continue it there: it is a seek.
        BlobRef blob = TestBlobs.ref(list, 19);
        for (long off = 0; off < 16L * MIB; off += 128 * 1024) {
            small.onRead(blob, list, off, 128 * 1024, false, 4);
        }
        assertThat(small.onRead(blob, list, 20L * MIB, 128 * 1024, false, 4).fetchAhead()).isFalse();
        assertThat(small.followsBlocks(blob, list, 24L * MIB, 24L * MIB + 100_000, false)).isFalse();
        for (long off = 0; off < 16L * MIB; off += 128 * 1024) {
            big.onRead(blob, list, off, 128 * 1024, false, 4);
        }
        assertThat(big.followsBlocks(blob, list, 24L * MIB, 24L * MIB + 100_000, false)).isTrue();
    }

    @Test
    void aPrimingTheBudgetCutShortLowersThePrimedStreamOnlyAndItsReadsAskAgainFromThere() {
        BlockHashList list = TestBlobs.sizesOnly(64, MIB);
        BlobRef blob = TestBlobs.ref(list, 20);
        // The last epoch's scan: its stream ends at the blob's end, scheduled up to block 64.
        for (long off = 0; off < 64L * MIB; off += 128 * 1024) {
            readAhead.onRead(blob, list, off, 128 * 1024, false, 4);
        }
        assertThat(readAhead.prime(blob, list, 64)).isEqualTo(64);
        readAhead.scheduled(blob.id(), 64, 10); // the budget took 10 blocks of the 64
        ReadAhead.Advice first = readAhead.onRead(blob, list, 512, 100_000, false, 4);
        assertThat(first.fetchAhead()).isTrue();
        assertThat(first.from()).as("asked again from where the budget stopped").isEqualTo(10);
        // The last epoch's stream was left alone: reading on at its end asks for nothing.
        assertThat(readAhead.onRead(blob, list, 64L * MIB - 4096, 4096, false, 4).fetchAhead()).isFalse();
    }

    @Test
    void aTopUpTheBudgetCutShortLowersTheStreamThatToppedUpNotAnotherWithTheSameEnd() {
        BlockHashList list = TestBlobs.sizesOnly(64, MIB);
        BlobRef blob = TestBlobs.ref(list, 21);
        for (long off = 0; off < 64L * MIB; off += 128 * 1024) { // an old stream scheduled to 64
            readAhead.onRead(blob, list, off, 128 * 1024, false, 4);
        }
        // A new scan from the start: the top-up that reaches the end is refused whole by the budget.
        int refusedAt = -1;
        long off = 256 * 1024;
        for (; off < 40L * MIB && refusedAt < 0; off += 128 * 1024) {
            ReadAhead.Advice a = readAhead.onRead(blob, list, off, 128 * 1024, false, 4);
            if (a.fetchAhead() && a.to() == 64) {
                readAhead.scheduled(blob.id(), a.to(), a.from());
                refusedAt = a.from();
            }
        }
        assertThat(refusedAt).isPositive();
        // Its next read asks again for what was refused (had the old stream been lowered in its
        // place, the new one would still count the refused blocks as scheduled).
        ReadAhead.Advice again = readAhead.onRead(blob, list, off, 128 * 1024, false, 4);
        assertThat(again.fetchAhead()).isTrue();
        assertThat(again.from()).isEqualTo(refusedAt);
    }

    @Test
    void budgetRefusalIsRetriedByALaterRead() {
        List<int[]> asked = new ArrayList<>();
        ReadAhead stingy = new ReadAhead(new Suspects());
        java.util.function.IntBinaryOperator none = (from, to) -> {
            asked.add(new int[] {from, to});
            return from; // nothing scheduled: budget used up
        };
        BlockHashList list = TestBlobs.sizesOnly(100, MIB);
        BlobRef blob = TestBlobs.ref(list, 7);
        read(stingy, none, blob, list, 0, 4096, false);
        read(stingy, none, blob, list, 4096, 4096, false);
        read(stingy, none, blob, list, 8192, 4096, false);
        assertThat(asked).hasSize(2);
        assertThat(asked.get(1)[0]).isEqualTo(1);
    }

    @Test
    void aBlobReadDenselyAtRandomIsSignalledOnceAfterAnEighthOfItsBlocksMissedAtRandom() {
        BlockHashList list = TestBlobs.sizesOnly(96, MIB);
        BlobRef blob = TestBlobs.ref(list, 21);
        List<Integer> blocks = new ArrayList<>(java.util.stream.IntStream.range(0, 96).boxed().toList());
        java.util.Collections.shuffle(blocks, new java.util.Random(5));
        int signalledAt = -1;
        int signals = 0;
        for (int i = 1; i <= 40; i++) {
            // An image of 200 KB in a block not read yet: a seek that missed.
            long off = (long) blocks.get(i - 1) * MIB + 300_000;
            if ((onRead(blob, list, off, 200_000, true) & ReadAhead.DENSE_RANDOM) != 0) {
                signals++;
                signalledAt = signalledAt < 0 ? i : signalledAt;
            }
        }
        // 96 blocks / 8 = 12 seeks, which read 2.4 MB: more than 1/64 of the blob.
        assertThat(signalledAt).isEqualTo(12);
        assertThat(signals).isEqualTo(1);
        assertThat(scheduled).as("random reads schedule no read-ahead").isEmpty();
    }

    /**
     * A shuffled epoch reads every shard at random at once: ten shards of 130 MiB through a cache
     * of 1,100 MiB (844 MiB kept, 256 held for read-ahead) are fetched whole only as far as they
     * fit together, six of them; once those have gone unread for a minute, another may.
     */
    @Test
    void shardsReadAtRandomTogetherAreFetchedWholeOnlyAsFarAsTheCacheKeepsThem() {
        long[] now = {0};
        ReadAhead ra = new ReadAhead(new Suspects(), new ParquetLayouts(null), 1100L * MIB, 256L * MIB, () -> now[0]);
        BlockHashList list = TestBlobs.sizesOnly(130, MIB);
        List<BlobRef> shards = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            shards.add(TestBlobs.ref(list, 60 + i));
        }
        java.util.Random rnd = new java.util.Random(61);
        List<BlobRef> dense = new ArrayList<>();
        for (int i = 0; i < 20_000; i++) {
            BlobRef shard = shards.get(rnd.nextInt(10));
            if (readAt(ra, shard, list, rnd)) {
                dense.add(shard);
            }
            now[0] += 1_000_000L; // a read a millisecond
        }
        assertThat(dense).as("six of 130 MiB fit 844 MiB").hasSize(6);
        assertThat(ra.denseBytes()).isEqualTo(6 * 130L * MIB);
        for (int i = 0; i < 20_000; i++) {
            assertThat(readAt(ra, shards.get(rnd.nextInt(10)), list, rnd)).as("none more while all are read").isFalse();
            now[0] += 10_000_000L;
        }

        // The six go unread for a minute, the other four read on: room for another.
        List<BlobRef> others = shards.stream().filter(b -> !dense.contains(b)).toList();
        int more = 0;
        long lastReadOfTheSix = now[0];
        for (int i = 0; i < 2_000; i++) {
            now[0] += 1_000_000_000L;
            if (readAt(ra, others.get(rnd.nextInt(4)), list, rnd)) {
                more++;
                assertThat(now[0] - lastReadOfTheSix).as("after the minute").isGreaterThan(ReadAhead.DENSE_IDLE_NANOS);
            }
        }
        assertThat(more).as("4 x 130 MiB fit once the six are idle").isEqualTo(4);
        assertThat(ra.denseBytes()).isEqualTo(4 * 130L * MIB);
    }

    /** A read of 10 KB at random in {@code shard} that missed; whether it made the shard dense. */
    private static boolean readAt(ReadAhead ra, BlobRef shard, BlockHashList list, java.util.Random rnd) {
        long off = (long) rnd.nextInt((int) list.blobSize() - 20_000);
        return (read(ra, (f, t) -> t, shard, list, off, 10_000, true) & ReadAhead.DENSE_RANDOM) != 0;
    }

    @Test
    void seeksThatHitTheCacheOrFewSeeksOnABigBlobAreNotDense() {
        BlockHashList list = TestBlobs.sizesOnly(96, MIB);
        BlobRef blob = TestBlobs.ref(list, 22);
        for (int i = 0; i < 40; i++) {
            assertThat(onRead(blob, list, (long) (i * 37 % 96) * MIB + 5000, 4096, false) & ReadAhead.DENSE_RANDOM)
                    .as("cached seeks").isZero();
        }
        BlockHashList big = TestBlobs.sizesOnly(1024, MIB);
        BlobRef parquet = TestBlobs.ref(big, 23);
        for (int i = 0; i < 100; i++) {
            // A query reading 100 column chunks of a 1 GiB file: under an eighth of its blocks.
            assertThat(onRead(parquet, big, (long) (i * 10) * MIB + 5000, 4096, true) & ReadAhead.DENSE_RANDOM)
                    .as("sparse seeks").isZero();
        }
    }

    @Test
    void smallMembersSampledFromAMillionAreNeverFetchedWhole() {
        // ImageNet-sized sample of a 1.28M-member set: 10 tar shards of 128,100 members, each a
        // 512-byte header and a 64-320 byte body padded to 512 (126 MiB a shard); 2,000 members
        // read at random, each a seek that missed. About 200 seeks a shard: far above one per 8
        // blocks, but 40 KB read of 126 MiB: fetching the shards whole would cost 1.3 GB.
        BlockHashList list = TestBlobs.sizesOnly(126, MIB);
        List<BlobRef> shards = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            shards.add(TestBlobs.ref(list, 40 + i));
        }
        java.util.Random rnd = new java.util.Random(26);
        int dense = 0;
        for (int i = 0; i < 2_000; i++) {
            int member = rnd.nextInt(1_281_000);
            long off = (long) (member % 128_100) * 1024 + 512;
            dense += onRead(shards.get(member / 128_100), list, off, 64 + rnd.nextInt(257), true) & ReadAhead.DENSE_RANDOM;
        }
        assertThat(dense).as("no shard fetched whole").isZero();
    }

    /** Eight column chunks of 3 MiB and a bit, from offset 4, in a 26 MiB Parquet blob of 1 MiB blocks. */
    private static long[][] eightChunks() {
        long[] starts = new long[8];
        long[] ends = new long[8];
        long at = 4;
        for (int i = 0; i < 8; i++) {
            starts[i] = at;
            at += 3L * MIB + 1000;
            ends[i] = at;
        }
        return new long[][] {starts, ends};
    }

    private BlobRef parquet(BlockHashList list, int seed, ReadAhead ra, ParquetLayouts layouts) {
        BlobRef blob = TestBlobs.ref(list, seed);
        long[][] c = eightChunks();
        layouts.learned(blob.id(), ColumnChunks.of(c[0], c[1], 8));
        return blob;
    }

    @Test
    void aQueryReadingOneColumnChunkReadsAheadNoFurtherThanItsEnd() {
        ParquetLayouts layouts = new ParquetLayouts(null);
        ReadAhead ra = new ReadAhead(suspects, layouts, Long.MAX_VALUE);
        BlockHashList list = TestBlobs.sizesOnly(26, MIB);
        BlobRef blob = parquet(list, 50, ra, layouts);
        long[][] c = eightChunks();
        int chunkEndBlock = (int) ((c[1][3] - 1) / MIB) + 1;
        // As the kernel asks: from the page the chunk starts in (inside chunk 2), and 1.2 MB
        // past the chunk's end (its read-around), in 128 KiB reads.
        long readEnd = c[1][3] + 1_200_000;
        for (long off = c[0][3] & ~4095L; off < readEnd; off += 128 * 1024) {
            read(ra, (from, to) -> {
                scheduled.add(new int[] {from, to});
                return to;
            }, blob, list, off, 128 * 1024, true);
        }
        int readEndBlock = (int) ((readEnd + 128 * 1024 - 1) / MIB) + 1;
        assertThat(scheduled).as("read ahead within the chunk").isNotEmpty();
        assertThat(scheduled).as("up to the chunk's end, then only what the kernel read")
                .allSatisfy(r -> assertThat(r[1]).isLessThanOrEqualTo(Math.max(chunkEndBlock, readEndBlock)));
        assertThat(scheduled.stream().filter(r -> r[1] > chunkEndBlock).mapToInt(r -> r[1] - r[0]).sum())
                .as("blocks read ahead past the chunk's end").isLessThanOrEqualTo(1);

        // The same reads of a blob whose layout is not known run ahead into the next columns.
        List<int[]> unbounded = new ArrayList<>();
        ReadAhead plain = new ReadAhead(new Suspects());
        BlobRef other = TestBlobs.ref(list, 51);
        for (long off = c[0][3]; off < c[1][3]; off += 128 * 1024) {
            read(plain, (from, to) -> {
                unbounded.add(new int[] {from, to});
                return to;
            }, other, list, off, 128 * 1024, true);
        }
        assertThat(unbounded.stream().mapToInt(r -> r[1]).max().orElse(0)).isGreaterThan(chunkEndBlock);
    }

    @Test
    void aQuerySkippingAColumnIsNoScan() {
        ParquetLayouts layouts = new ParquetLayouts(null);
        ReadAhead ra = new ReadAhead(suspects, layouts, Long.MAX_VALUE);
        BlockHashList list = TestBlobs.sizesOnly(4, MIB);
        BlobRef blob = TestBlobs.ref(list, 52);
        // Columns 0 and 2 of a row group; column 1 (100 KB) is skipped: a gap inside FORWARD_GAP_BYTES.
        layouts.learned(blob.id(), ColumnChunks.of(new long[] {4, 900_004, 1_000_004}, new long[] {900_004, 1_000_004, 1_900_004}, 3));
        java.util.function.IntBinaryOperator grant = (from, to) -> {
            scheduled.add(new int[] {from, to});
            return to;
        };
        for (long off = 4; off < 900_004; off += 64 * 1024) {
            read(ra, grant, blob, list, off, (int) Math.min(64 * 1024, 900_004 - off), true);
        }
        for (long off = 1_000_004; off < 1_900_004; off += 64 * 1024) {
            read(ra, grant, blob, list, off, (int) Math.min(64 * 1024, 1_900_004 - off), true);
        }
        assertThat(scheduled).allSatisfy(r -> assertThat(r[1]).as("never past column 2's block").isLessThanOrEqualTo(2));
    }

    @Test
    void aScanThroughTheChunksIsReadAheadAsAnyBlob() {
        // dd of a Parquet file whose footer was read before: once it has gone through a whole
        // chunk into the next, two past where it began, chunk ends no longer cut its GETs.
        ParquetLayouts layouts = new ParquetLayouts(null);
        ReadAhead ra = new ReadAhead(suspects, layouts, Long.MAX_VALUE);
        BlockHashList list = TestBlobs.sizesOnly(26, MIB);
        BlobRef blob = parquet(list, 53, ra, layouts);
        List<int[]> plainRuns = new ArrayList<>();
        ReadAhead plain = new ReadAhead(new Suspects());
        BlobRef other = TestBlobs.ref(list, 54);
        for (long off = 0; off < 26L * MIB; off += 128 * 1024) {
            read(ra, (from, to) -> {
                scheduled.add(new int[] {from, to});
                return to;
            }, blob, list, off, 128 * 1024, true);
            read(plain, (from, to) -> {
                plainRuns.add(new int[] {from, to});
                return to;
            }, other, list, off, 128 * 1024, true);
        }
        long[][] c = eightChunks();
        int chunk2End = (int) (c[1][2] / MIB);
        assertThat(scheduled).as("a GET runs across a chunk's end").anyMatch(r -> r[0] <= chunk2End && r[1] > chunk2End + 1);
        assertThat(scheduled.size()).as("at most the first two chunks' ends cut a range").isLessThanOrEqualTo(plainRuns.size() + 2);
        // All of it is read ahead but the first READ_AROUND_BYTES of chunks 1 and 2, read on demand.
        assertThat(scheduledBlocks()).isGreaterThanOrEqualTo(plainRuns.stream().mapToInt(r -> r[1] - r[0]).sum()
                - 2 * (int) (ReadAhead.READ_AROUND_BYTES / MIB));
        assertThat(scheduled.get(scheduled.size() - 1)[1]).as("up to the end").isEqualTo(26);
    }

    @Test
    void aParquetFileWithKnownChunksIsNeverFetchedWhole() {
        ParquetLayouts layouts = new ParquetLayouts(null);
        ReadAhead ra = new ReadAhead(suspects, layouts, Long.MAX_VALUE);
        BlockHashList list = TestBlobs.sizesOnly(26, MIB);
        BlobRef blob = parquet(list, 55, ra, layouts);
        ReadAhead plain = new ReadAhead(new Suspects());
        BlobRef other = TestBlobs.ref(list, 56);
        int denseKnown = 0;
        int densePlain = 0;
        for (int i = 0; i < 26; i++) {
            // Every block once at random, 300 KB each: dense by every count.
            long off = (long) ((i * 11) % 26) * MIB + 1000;
            denseKnown += read(ra, (f, t) -> t, blob, list, off, 300_000, true) & ReadAhead.DENSE_RANDOM;
            densePlain += read(plain, (f, t) -> t, other, list, off, 300_000, true) & ReadAhead.DENSE_RANDOM;
        }
        assertThat(denseKnown).isZero();
        assertThat(densePlain).isEqualTo(ReadAhead.DENSE_RANDOM);
    }

    @Test
    void aQueryReadingAdjacentColumnsIsNoScan() {
        // Row group 0 of the bench's table (DuckDB, snappy): id, ts, category, value, qty, flag,
        // note. The group-by reads ts, category and value, one after another; the kernel reads
        // 1.2 MB further. The 4 MB note column after them is not read ahead.
        ParquetLayouts layouts = new ParquetLayouts(null);
        ReadAhead ra = new ReadAhead(suspects, layouts, Long.MAX_VALUE);
        BlockHashList list = TestBlobs.sizesOnly(13, MIB);
        BlobRef blob = TestBlobs.ref(list, 57);
        long[] starts = {4, 492_569, 1_235_812, 1_328_706, 2_073_444, 2_181_904, 2_197_300};
        long[] ends = {492_569, 1_235_812, 1_328_706, 2_073_444, 2_181_904, 2_197_300, 6_203_096};
        layouts.learned(blob.id(), ColumnChunks.of(starts, ends, 7));
        long readEnd = ends[3] + 1_200_000;
        for (long off = starts[1] & ~4095L; off < readEnd; off += 128 * 1024) {
            read(ra, (from, to) -> {
                scheduled.add(new int[] {from, to});
                return to;
            }, blob, list, off, 128 * 1024, true);
        }
        int readEndBlock = (int) ((readEnd + 128 * 1024 - 1) / MIB) + 1;
        assertThat(scheduled).as("nothing read ahead into the note column beyond what the kernel read")
                .allSatisfy(r -> assertThat(r[1]).isLessThanOrEqualTo(readEndBlock));
    }

    @Test
    void aRandomReadNearAStreamThatIsNotReadAheadYetIsASeek() {
        BlockHashList list = TestBlobs.sizesOnly(20, MIB);
        BlobRef blob = TestBlobs.ref(list, 58);
        long member = 5L * MIB + 512;
        onRead(blob, list, member, 200, true);
        // Another small member picked at random, 100 KB further: no scan, nothing read ahead.
        onRead(blob, list, member + 100_000, 200, true);
        assertThat(scheduled).isEmpty();
        assertThat(readAhead.followsBlocks(blob, list, member + 200_000, member + 200_200, false)).isFalse();
        // The next member after a tar header: a scan, read ahead.
        assertThat(readAhead.followsBlocks(blob, list, member + 100_200 + 512, member + 100_200 + 712, false)).isTrue();
        onRead(blob, list, member + 100_200 + 512, 200, true);
        assertThat(scheduled).hasSize(1);
    }
}
