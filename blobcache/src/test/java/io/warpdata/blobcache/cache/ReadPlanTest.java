package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link ReadPlan}: each {@link Source} is chosen exactly under its conditions, in the order
 * docs/cache.md lists, over a fake of what the tiers hold (no cache, no store).
 */
class ReadPlanTest {
    private static final int MIB = 1 << 20;

    /** What the tiers hold, set by each test; records what the plan asked. */
    private static final class Held implements ReadPlan.Holdings {
        boolean memberCached;
        MemberLocator.Location located;
        boolean blocksCached;
        boolean memberInFlight;
        boolean blocksInFlight;
        boolean followsBlocks;
        boolean blockFailed;
        boolean diskKeeps = true;
        boolean plannedFile;
        CacheMode mode = CacheMode.AUTO;
        final List<String> asked = new ArrayList<>();

        @Override
        public boolean plannedFile(BlobMember m) {
            asked.add("plannedFile");
            return plannedFile;
        }

        @Override
        public boolean memberCached(BlobMember m) {
            asked.add("memberCached");
            return memberCached;
        }

        @Override
        public MemberLocator.Location located(BlobMember m) {
            asked.add("located");
            return located;
        }

        @Override
        public BlockHashList list(BlobRef blob) {
            asked.add("list");
            return LIST;
        }

        @Override
        public boolean blocksCached(BlobRef blob, BlockHashList list, long from, int n) {
            return blocksCached;
        }

        @Override
        public boolean memberInFlight(BlobMember m) {
            return memberInFlight;
        }

        @Override
        public boolean blocksInFlight(BlobMember m, BlockHashList list) {
            return blocksInFlight;
        }

        @Override
        public boolean followsBlocks(BlobMember m, BlockHashList list, long from) {
            return followsBlocks;
        }

        @Override
        public boolean blockFailed(BlobMember m, BlockHashList list) {
            asked.add("blockFailed");
            return blockFailed;
        }

        @Override
        public boolean diskKeeps() {
            return diskKeeps;
        }

        @Override
        public CacheMode mode() {
            return mode;
        }
    }

    private static final BlockHashList LIST = TestBlobs.sizesOnly(16, MIB);
    private static final BlobRef SHARD = TestBlobs.ref(LIST, 1);
    private static final BlobRef OTHER = TestBlobs.ref(LIST, 2);

    private static BlobMember member(long length) {
        return new BlobMember(SHARD, 3L * MIB + 100, length, BlobId.of(new byte[] {(byte) length, 7}));
    }

    private static MemberLocator.Location location(BlobRef blob, long offset, long length) {
        return new MemberLocator.Location(1, 2, 3, 4, blob, offset, length);
    }

    private static Source plan(BlobMember m, Held h) {
        return ReadPlan.member(m, 0, (int) Math.min(m.length(), 128 << 10), h, null);
    }

    @Test
    void aMemberCachedUnderItsHashComesFirstAndNeedsNoList() {
        Held h = new Held();
        h.memberCached = true;
        h.located = location(OTHER, 0, 30_000);
        h.blocksCached = true;
        assertThat(plan(member(30_000), h)).isInstanceOf(Source.MemberCached.class);
        assertThat(h.asked).as("not even the shard's list is asked for").containsExactly("memberCached");
    }

    @Test
    void aMemberLargerThanAMemberBlockIsNeverLookedUpUnderItsHash() {
        Held h = new Held();
        h.memberCached = true;
        assertThat(plan(member(MIB + 1), h)).isInstanceOf(Source.Blocks.class);
        assertThat(h.asked).doesNotContain("memberCached");
    }

    @Test
    void bytesLocatedInAnotherShardComeNextWithoutTheList() {
        Held h = new Held();
        h.located = location(OTHER, 5000, 30_000);
        h.blocksCached = true;
        Source s = plan(member(30_000), h);
        assertThat(s).isInstanceOf(Source.Located.class);
        assertThat(((Source.Located) s).location()).isSameAs(h.located);
        assertThat(h.asked).containsExactly("memberCached", "located");
    }

    @Test
    void aLocationOfAnotherLengthOrOfThisVeryPlaceIsNoOtherSource() {
        Held h = new Held();
        BlobMember m = member(30_000);
        h.located = location(OTHER, 5000, 29_999);
        assertThat(plan(m, h)).isInstanceOf(Source.MemberGet.class);
        h.located = location(SHARD, m.offset(), m.length());
        assertThat(plan(m, h)).isInstanceOf(Source.MemberGet.class);
    }

    @Test
    void ownBlocksAllCachedComeBeforeAnyFetch() {
        Held h = new Held();
        h.blocksCached = true;
        h.memberInFlight = true;
        assertThat(plan(member(30_000), h)).isEqualTo(new Source.OwnBlocks(LIST));
    }

    @Test
    void aSmallMemberReadAtRandomIsFetchedOnItsOwn() {
        Held h = new Held();
        assertThat(plan(member(30_000), h)).isEqualTo(new Source.MemberGet(LIST));
        assertThat(plan(member(MemberReads.MAX_FETCH_BYTES), h)).isInstanceOf(Source.MemberGet.class);
        assertThat(plan(member(MemberReads.MAX_FETCH_BYTES + 1), h)).isInstanceOf(Source.Blocks.class);
    }

    @Test
    void aMemberFetchUnderWayIsAwaitedEvenWhenTheReadLooksSequential() {
        Held h = new Held();
        h.memberInFlight = true;
        h.followsBlocks = true;
        h.blocksInFlight = true;
        assertThat(plan(member(30_000), h)).isEqualTo(new Source.AwaitMember(LIST));
    }

    /**
     * An order plan fetches files of up to 1 MiB on their own (OrderPrefetcher.MAX_FILE_BYTES): a
     * reader of one over 256 KiB waits for that fetch rather than fetching its blocks too.
     */
    @Test
    void aPlanByFilesFileOver256KiBIsFetchedOnItsOwnOrAwaitedUpTo1MiB() {
        Held h = new Held();
        h.plannedFile = true;
        assertThat(plan(member(30_000), h)).isEqualTo(new Source.MemberGet(LIST));
        assertThat(h.asked).as("asked only of a file over 256 KiB").doesNotContain("plannedFile");
        h.plannedFile = false;
        h.memberInFlight = true;
        assertThat(plan(member(300_000), h)).isEqualTo(new Source.AwaitMember(LIST));
        assertThat(plan(member(MemberReads.MEMBER_BLOCK_SIZE), h)).isEqualTo(new Source.AwaitMember(LIST));
        assertThat(plan(member(MemberReads.MEMBER_BLOCK_SIZE + 1), h)).isEqualTo(new Source.Blocks(LIST));
        h.memberInFlight = false;
        assertThat(plan(member(300_000), h)).as("not in flight: read at random, through its blocks")
                .isEqualTo(new Source.Blocks(LIST));
        h.plannedFile = true;
        assertThat(plan(member(300_000), h)).as("a file of a plan by file, its reader first: on its own")
                .isEqualTo(new Source.MemberGet(LIST));
        assertThat(plan(member(MemberReads.MEMBER_BLOCK_SIZE + 1), h)).isEqualTo(new Source.Blocks(LIST));
        h.mode = CacheMode.HYBRID;
        assertThat(plan(member(300_000), h)).isEqualTo(new Source.Blocks(LIST));
    }

    @Test
    void blocksInFlightOrASequentialReadGoToTheBlocks() {
        Held h = new Held();
        h.blocksInFlight = true;
        assertThat(plan(member(30_000), h)).isEqualTo(new Source.Blocks(LIST));
        h.blocksInFlight = false;
        h.followsBlocks = true;
        assertThat(plan(member(30_000), h)).isEqualTo(new Source.Blocks(LIST));
    }

    @Test
    void aMemberInABlockTheStoreServesWrongIsFetchedOnItsOwnEvenWhereItsBlocksWouldServeIt() {
        Held h = new Held();
        h.followsBlocks = true;
        h.blocksInFlight = true;
        h.blockFailed = true;
        assertThat(plan(member(30_000), h)).isEqualTo(new Source.MemberGet(LIST));
        h.memberInFlight = true;
        assertThat(plan(member(30_000), h)).as("one GET of it at a time").isEqualTo(new Source.AwaitMember(LIST));
        h.memberInFlight = false;
        assertThat(plan(member(MemberReads.MAX_FETCH_BYTES + 1), h)).as("too large to fetch on its own")
                .isEqualTo(new Source.Blocks(LIST));
        h.mode = CacheMode.HYBRID;
        assertThat(plan(member(30_000), h)).isEqualTo(new Source.Blocks(LIST));
    }

    @Test
    void onADiskThatKeepsNothingASequentialReadFetchesTheMemberNotItsBlock() {
        Held h = new Held();
        h.followsBlocks = true;
        h.diskKeeps = false;
        assertThat(plan(member(30_000), h)).isEqualTo(new Source.MemberGet(LIST));
        h.blocksInFlight = true; // a block on its way is still awaited, not fetched twice
        assertThat(plan(member(30_000), h)).isEqualTo(new Source.Blocks(LIST));
    }

    @Test
    void hybridAndLocalModesNeverFetchAMemberOnItsOwn() {
        for (CacheMode mode : new CacheMode[] {CacheMode.HYBRID, CacheMode.LOCAL}) {
            Held h = new Held();
            h.mode = mode;
            assertThat(plan(member(30_000), h)).as(mode.toString()).isInstanceOf(Source.Blocks.class);
        }
        Held remote = new Held();
        remote.mode = CacheMode.REMOTE;
        assertThat(plan(member(30_000), remote)).isInstanceOf(Source.MemberGet.class);
    }

    @Test
    void aSourceThatDidNotHoldTheBytesIsFollowedByTheNextOne() {
        Held h = new Held();
        h.memberCached = true;
        h.located = location(OTHER, 0, 30_000);
        h.blocksCached = true;
        BlobMember m = member(30_000);
        Source first = plan(m, h);
        assertThat(first).isInstanceOf(Source.MemberCached.class);
        Source second = ReadPlan.member(m, 0, 30_000, h, first);
        assertThat(second).isInstanceOf(Source.Located.class);
        Source third = ReadPlan.member(m, 0, 30_000, h, second);
        assertThat(third).isEqualTo(new Source.OwnBlocks(LIST));
    }

    @Test
    void sourcesAreRankedInTheDocumentedOrder() {
        assertThat(List.of(Source.MemberCached.INSTANCE, new Source.Located(null), new Source.OwnBlocks(LIST),
                new Source.AwaitMember(LIST), new Source.MemberGet(LIST), new Source.Blocks(LIST), Source.WholeBlob.INSTANCE)
                .stream().map(Source::rank).toList()).containsExactly(1, 2, 3, 4, 5, 6, 7);
    }

    @Test
    void anIndexIsReadWholeOnlyAtFirstTouchWithinItsBound() {
        BlobRef small = new BlobRef(SHARD.id(), 4 * MIB, SHARD.blocks());
        assertThat(ReadPlan.indexWhole(small, false, CacheMode.AUTO)).isTrue();
        assertThat(ReadPlan.indexWhole(small, true, CacheMode.AUTO)).as("its list is known here").isFalse();
        assertThat(ReadPlan.indexWhole(small, false, CacheMode.LOCAL)).isFalse();
        BlobRef big = new BlobRef(SHARD.id(), WholeBlobReads.MAX_BYTES + 1, SHARD.blocks());
        assertThat(ReadPlan.indexWhole(big, false, CacheMode.AUTO)).isFalse();
        assertThat(ReadPlan.indexWhole(new BlobRef(SHARD.id(), 0, SHARD.blocks()), false, CacheMode.AUTO)).isFalse();
    }
}
