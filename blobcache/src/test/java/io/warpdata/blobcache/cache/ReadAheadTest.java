package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.warpdata.manifest.BlobId;
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

    /** A list in its binary form with dummy hashes: read-ahead only looks at sizes. */
    private static BlockHashList list(int blocks, int blockSize) {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(20 + 32 * blocks);
        b.put("WBHL".getBytes(java.nio.charset.StandardCharsets.US_ASCII)).putInt(1).putInt(blockSize)
                .putLong((long) blocks * blockSize);
        return BlockHashList.parse(b.array(), "test");
    }

    private static BlobRef ref(BlockHashList list, int seed) {
        byte[] id = new byte[32];
        id[0] = (byte) seed;
        return new BlobRef(BlobId.fromDigest(id), list.blobSize(), list.id());
    }

    private int scheduledBlocks() {
        return scheduled.stream().mapToInt(r -> r[1] - r[0]).sum();
    }

    @Test
    void aMemberThatContinuesAStreamFollowsTheBlocksButARereadOfTheLastMemberDoesNot() {
        BlockHashList list = list(100, MIB);
        BlobRef blob = ref(list, 12);
        long member = 10L * MIB + 512;
        assertThat(readAhead.followsBlocks(blob, list, member, member + 30_000)).as("never read").isFalse();
        onRead(blob, list, member, 30_000, true);
        long next = member + 30_000 + 512;
        assertThat(readAhead.followsBlocks(blob, list, next, next + 20_000)).as("the next member of a scan").isTrue();
        assertThat(readAhead.followsBlocks(blob, list, member, member + 30_000)).as("the same member again").isFalse();
        assertThat(readAhead.followsBlocks(blob, list, 40L * MIB, 40L * MIB + 1000)).as("far away").isFalse();
        assertThat(scheduled).as("asking records nothing").isEmpty();
    }

    @Test
    void aDenseBlobFollowsTheBlocksEverywhere() {
        BlockHashList list = list(64, MIB);
        BlobRef blob = ref(list, 13);
        for (int i = 0; i < ReadAhead.DENSE_MIN_SEEKS; i++) {
            onRead(blob, list, (long) i * 8 * MIB, 1000, true);
        }
        assertThat(readAhead.followsBlocks(blob, list, 63L * MIB, 63L * MIB + 1000)).isTrue();
    }

    @Test
    void firstReadOfABlobSchedulesNothingAndIsReportedAsFirstTouch() {
        BlockHashList list = list(100, MIB);
        BlobRef blob = ref(list, 1);
        assertThat(onRead(blob, list, 0, 128 * 1024)).isTrue();
        assertThat(onRead(blob, list, 50L * MIB, 4096)).isFalse();
        assertThat(scheduled).isEmpty();
    }

    @Test
    void verificationFailureHoldsBackReadAheadUntilAGetVerifiesThenRestartsSmall() {
        BlockHashList list = list(400, MIB);
        BlobRef blob = ref(list, 11);
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
        BlockHashList list = list(400, MIB);
        BlobRef blob = ref(list, 9);
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
        BlockHashList list = list(400, MIB);
        BlobRef blob = ref(list, 2);
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
        BlockHashList list = list(64, MIB);
        BlobRef blob = ref(list, 3);
        long off = 512;
        for (int i = 0; i < 200; i++) {
            onRead(blob, list, off, 90_000);
            off += 90_000 + 1024; // next member's data after its 512-byte header and padding
        }
        assertThat(scheduledBlocks()).isGreaterThanOrEqualTo(16);
    }

    @Test
    void randomReadsScheduleNothing() {
        BlockHashList list = list(1000, MIB);
        BlobRef blob = ref(list, 4);
        java.util.Random rnd = new java.util.Random(3);
        for (int i = 0; i < 200; i++) {
            onRead(blob, list, (long) rnd.nextInt(1000) * MIB + rnd.nextInt(MIB - 4096), 4096);
        }
        assertThat(scheduledBlocks()).isLessThanOrEqualTo(4);
    }

    @Test
    void aSeekStartsOverWithNoReadAhead() {
        BlockHashList list = list(400, MIB);
        BlobRef blob = ref(list, 5);
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
        BlockHashList list = list(400, MIB);
        BlobRef blob = ref(list, 6);
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
    void budgetRefusalIsRetriedByALaterRead() {
        List<int[]> asked = new ArrayList<>();
        ReadAhead stingy = new ReadAhead(new Suspects());
        java.util.function.IntBinaryOperator none = (from, to) -> {
            asked.add(new int[] {from, to});
            return from; // nothing scheduled: budget used up
        };
        BlockHashList list = list(100, MIB);
        BlobRef blob = ref(list, 7);
        read(stingy, none, blob, list, 0, 4096, false);
        read(stingy, none, blob, list, 4096, 4096, false);
        read(stingy, none, blob, list, 8192, 4096, false);
        assertThat(asked).hasSize(2);
        assertThat(asked.get(1)[0]).isEqualTo(1);
    }

    @Test
    void aBlobReadDenselyAtRandomIsSignalledOnceAfterAnEighthOfItsBlocksMissedAtRandom() {
        BlockHashList list = list(96, MIB);
        BlobRef blob = ref(list, 21);
        List<Integer> blocks = new ArrayList<>(java.util.stream.IntStream.range(0, 96).boxed().toList());
        java.util.Collections.shuffle(blocks, new java.util.Random(5));
        int signalledAt = -1;
        int signals = 0;
        for (int i = 1; i <= 40; i++) {
            // A member of 40 KB in a block not read yet: a seek that missed.
            long off = (long) blocks.get(i - 1) * MIB + 300_000;
            if ((onRead(blob, list, off, 40_000, true) & ReadAhead.DENSE_RANDOM) != 0) {
                signals++;
                signalledAt = signalledAt < 0 ? i : signalledAt;
            }
        }
        // 96 blocks / 8 = 12 seeks.
        assertThat(signalledAt).isEqualTo(12);
        assertThat(signals).isEqualTo(1);
        assertThat(scheduled).as("random reads schedule no read-ahead").isEmpty();
    }

    @Test
    void seeksThatHitTheCacheOrFewSeeksOnABigBlobAreNotDense() {
        BlockHashList list = list(96, MIB);
        BlobRef blob = ref(list, 22);
        for (int i = 0; i < 40; i++) {
            assertThat(onRead(blob, list, (long) (i * 37 % 96) * MIB + 5000, 4096, false) & ReadAhead.DENSE_RANDOM)
                    .as("cached seeks").isZero();
        }
        BlockHashList big = list(1024, MIB);
        BlobRef parquet = ref(big, 23);
        for (int i = 0; i < 100; i++) {
            // A query reading 100 column chunks of a 1 GiB file: under an eighth of its blocks.
            assertThat(onRead(parquet, big, (long) (i * 10) * MIB + 5000, 4096, true) & ReadAhead.DENSE_RANDOM)
                    .as("sparse seeks").isZero();
        }
    }
}
