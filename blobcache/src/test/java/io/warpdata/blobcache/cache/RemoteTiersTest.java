package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;
import io.warpdata.store.BlobStore;
import io.warpdata.store.FaultStore;
import io.warpdata.store.FaultStore.Call;
import io.warpdata.store.InMemoryBlobStore;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Remote tiers ({@link RemoteTier}, the slot issue 25's mirrors plug into): untrusted, tried in
 * order between the local tiers and the store, every byte checked before a reader sees it; a
 * tier that fails or serves a wrong byte falls through to the next, then to the store, within
 * the same read. Fakes here serve the store's own bytes, broken on purpose.
 */
class RemoteTiersTest {
    private static final int MIB = BlockHashList.DEFAULT_BLOCK_SIZE;
    private static final RetryPolicy FAST =
            new RetryPolicy(Duration.ofMillis(1), Duration.ofMillis(10), Duration.ofSeconds(10));

    @TempDir
    Path dir;

    private final InMemoryBlobStore memory = new InMemoryBlobStore();
    private final FaultStore store = new FaultStore(memory);
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private final List<BlockCache> caches = new ArrayList<>();

    /** A mirror over the store's keys: serves them right, flips a byte, or fails; counts its reads. */
    private static final class FakeMirror implements RemoteTier {
        enum Kind { GOOD, CORRUPT, FAILING, MISSING }

        final String name;
        final Kind kind;
        final BlobStore origin;
        final AtomicInteger reads = new AtomicInteger();
        final List<long[]> ranges = java.util.Collections.synchronizedList(new ArrayList<>());
        final List<String> rejected = java.util.Collections.synchronizedList(new ArrayList<>());

        FakeMirror(String name, Kind kind, BlobStore origin) {
            this.name = name;
            this.kind = kind;
            this.origin = origin;
        }

        @Override
        public String describe() {
            return name;
        }

        @Override
        public void rejected(String key, long offset, int len, int blockSize) {
            rejected.add(key + "@" + offset);
        }

        @Override
        public boolean read(String key, long offset, byte[] dst, int dstOff, int len, int blockSize) {
            reads.incrementAndGet();
            ranges.add(new long[] {offset, len, blockSize});
            if (kind == Kind.FAILING) {
                throw new IllegalStateException("HTTP 502 from " + name + " (injected)");
            }
            if (kind == Kind.MISSING) {
                return false;
            }
            origin.read(key, offset, dst, dstOff, len);
            if (kind == Kind.CORRUPT) {
                for (int i = 0; i < len; i++) {
                    dst[dstOff + i] ^= 1;
                }
            }
            return true;
        }
    }

    /** A mirror that also serves whole objects (hash lists): right, or with every byte flipped. */
    private static final class ObjectsMirror implements RemoteTier {
        final String name;
        final boolean corrupt;
        final BlobStore origin;
        final List<String> gets = java.util.Collections.synchronizedList(new ArrayList<>());
        final List<String> rejected = java.util.Collections.synchronizedList(new ArrayList<>());

        ObjectsMirror(String name, boolean corrupt, BlobStore origin) {
            this.name = name;
            this.corrupt = corrupt;
            this.origin = origin;
        }

        @Override
        public String describe() {
            return name;
        }

        @Override
        public void rejected(String key, long offset, int len, int blockSize) {
            rejected.add(key + "@" + offset);
        }

        @Override
        public boolean read(String key, long offset, byte[] dst, int dstOff, int len, int blockSize) {
            origin.read(key, offset, dst, dstOff, len);
            if (corrupt) {
                dst[dstOff] ^= 1;
            }
            return true;
        }

        @Override
        public java.util.Optional<byte[]> get(String key, int maxBytes) {
            gets.add(key);
            byte[] b = origin.get(key, maxBytes);
            if (corrupt) {
                b[b.length / 2] ^= 1;
            }
            return java.util.Optional.of(b);
        }
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        caches.forEach(BlockCache::close);
        pool.shutdownNow();
        pool.awaitTermination(10, TimeUnit.SECONDS);
    }

    private BlockCache open(List<RemoteTier> remotes) {
        CacheConfig cfg = CacheConfig.defaults(dir).withMinFreeBytes(0).withMaxBytes(256L << 20).withRetry(FAST);
        BlockCache c = new BlockCache(store, cfg, pool, null, null, OrderPrefetcher.MAX_PLAN_BYTES, remotes);
        caches.add(c);
        return c;
    }

    private static RemoteTierStats tier(BlockCache c, String name) {
        return c.remoteTiers().stream().filter(t -> t.name().equals(name)).findFirst().orElseThrow();
    }

    private static byte[] read(BlockCache c, BlobRef blob, long offset, int len) {
        byte[] out = new byte[len];
        assertThat(c.read(blob, offset, out, 0, len)).isEqualTo(len);
        return out;
    }

    @Test
    void aFailingThenACorruptMirrorFallThroughToTheStoreAndNoWrongByteIsServed() {
        byte[] data = TestBlobs.bytes(3 * MIB + 5000, 1);
        BlobRef blob = TestBlobs.put(memory, data, MIB);
        FakeMirror dead = new FakeMirror("http://dead/warp", FakeMirror.Kind.FAILING, memory);
        FakeMirror poisoned = new FakeMirror("http://poisoned/warp", FakeMirror.Kind.CORRUPT, memory);
        BlockCache c = open(List.of(dead, poisoned));

        assertThat(read(c, blob, 0, data.length)).isEqualTo(data);
        assertThat(read(c, blob, 0, data.length)).as("and what was cached is right too").isEqualTo(data);
        // Fetches let in while the dead tier was still up fail on it; a fetch that starts after
        // it went down skips it (how many of the first blob's fetches were already in flight is a
        // race, so a second blob, read after, is what shows the skip).
        byte[] more = TestBlobs.bytes(MIB + 17, 7);
        BlobRef after = TestBlobs.put(memory, more, MIB);
        assertThat(read(c, after, 0, more.length)).isEqualTo(more);

        assertThat(dead.reads.get()).isPositive();
        assertThat(poisoned.reads.get()).isPositive();
        assertThat(store.bytes(Call.READ)).as("the store served every block").isGreaterThanOrEqualTo(data.length);
        assertThat(c.remoteTiers()).extracting(RemoteTierStats::name).containsExactly("http://dead/warp", "http://poisoned/warp");
        assertThat(tier(c, "http://dead/warp").errors()).isEqualTo(dead.reads.get());
        assertThat(tier(c, "http://dead/warp").state()).isEqualTo("down");
        assertThat(tier(c, "http://dead/warp").skipped()).isPositive();
        assertThat(tier(c, "http://poisoned/warp").verificationFailures()).isEqualTo(poisoned.reads.get());
        assertThat(tier(c, "http://poisoned/warp").bytesServed()).isZero();
        assertThat(c.metrics().verificationFailures.sum()).as("a poisoned tier is visible").isPositive();
        assertThat(poisoned.rejected).as("the poisoned tier is told which copies failed, to write over them")
                .hasSize(poisoned.reads.get()).allMatch(r -> r.startsWith(io.warpdata.store.StoreLayout.blob(blob.id()) + "@"));
        assertThat(dead.rejected).isEmpty();
    }

    @Test
    void aGoodMirrorAfterACorruptOneServesEveryBlockAndTheStoreNone() {
        byte[] data = TestBlobs.bytes(2 * MIB + 77, 2);
        BlobRef blob = TestBlobs.put(memory, data, MIB);
        FakeMirror poisoned = new FakeMirror("poisoned", FakeMirror.Kind.CORRUPT, memory);
        FakeMirror good = new FakeMirror("good", FakeMirror.Kind.GOOD, memory);
        BlockCache c = open(List.of(poisoned, good));

        assertThat(read(c, blob, 0, data.length)).isEqualTo(data);

        assertThat(store.calls(Call.READ)).as("no ranged GET of the blob reached the store").isZero();
        assertThat(tier(c, "good").bytesServed()).isEqualTo(data.length);
        assertThat(tier(c, "poisoned").verificationFailures()).isPositive();
        assertThat(c.metrics().missBytes.sum()).as("served by a fetch: a miss of the local tiers").isEqualTo(data.length);
    }

    @Test
    void aMemberFetchedOnItsOwnIsCheckedAgainstItsHashAndFallsThrough() {
        byte[] shard = TestBlobs.bytes(8 * MIB, 3);
        BlobRef blob = TestBlobs.put(memory, shard, MIB);
        long at = 5L * MIB + 300;
        byte[] content = Arrays.copyOfRange(shard, (int) at, (int) at + 30_000);
        BlobMember m = new BlobMember(blob, at, content.length, BlobId.of(content));
        FakeMirror poisoned = new FakeMirror("poisoned", FakeMirror.Kind.CORRUPT, memory);
        BlockCache c = open(List.of(poisoned));

        byte[] out = new byte[content.length];
        assertThat(c.readMember(m, 0, ByteBuffer.wrap(out))).isEqualTo(content.length);

        assertThat(out).isEqualTo(content);
        assertThat(c.metrics().memberFetches.sum()).isEqualTo(1);
        assertThat(tier(c, "poisoned").verificationFailures()).isEqualTo(1);
        assertThat(store.bytes(Call.READ)).as("the store served exactly the member").isEqualTo(content.length);
        assertThat(poisoned.ranges.getFirst()).as("the tier was asked for the whole block holding it")
                .containsExactly(5L * MIB, MIB, MIB);
    }

    @Test
    void anIndexReadWholeComesFromAGoodMirrorVerifiedAgainstItsId() {
        byte[] index = TestBlobs.bytes(200_000, 4);
        BlobRef blob = TestBlobs.put(memory, index, MIB);
        FakeMirror dead = new FakeMirror("dead", FakeMirror.Kind.FAILING, memory);
        FakeMirror poisoned = new FakeMirror("poisoned", FakeMirror.Kind.CORRUPT, memory);
        FakeMirror good = new FakeMirror("good", FakeMirror.Kind.GOOD, memory);
        BlockCache c = open(List.of(dead, poisoned, good));

        assertThat(c.readIndex(blob)).isEqualTo(index);

        assertThat(tier(c, "dead").errors()).isEqualTo(1);
        assertThat(tier(c, "poisoned").verificationFailures()).isEqualTo(1);
        assertThat(tier(c, "good").bytesServed()).isEqualTo(index.length);
    }

    @Test
    void withNoRemoteTierNothingChanges() {
        byte[] data = TestBlobs.bytes(MIB + 1, 5);
        BlobRef blob = TestBlobs.put(memory, data, MIB);
        BlockCache c = open(List.of());
        assertThat(read(c, blob, 0, data.length)).isEqualTo(data);
        assertThat(c.remoteTiers()).isEmpty();
        assertThat(store.bytes(Call.READ)).isEqualTo(data.length);
    }

    @Test
    void aMemberIsAskedOfATierAsTheWholeBlocksHoldingIt() {
        byte[] shard = TestBlobs.bytes(8 * MIB + 123, 6);
        BlobRef blob = TestBlobs.put(memory, shard, MIB);
        long at = 8L * MIB + 10;
        byte[] content = Arrays.copyOfRange(shard, (int) at, (int) at + 100);
        BlobMember m = new BlobMember(blob, at, content.length, BlobId.of(content));
        FakeMirror good = new FakeMirror("good", FakeMirror.Kind.GOOD, memory);
        BlockCache c = open(List.of(good));

        byte[] out = new byte[content.length];
        assertThat(c.readMember(m, 0, ByteBuffer.wrap(out))).isEqualTo(content.length);

        assertThat(out).isEqualTo(content);
        assertThat(good.ranges).hasSize(1);
        long[] r = good.ranges.getFirst();
        assertThat(r[0]).as("starts on a block boundary").isEqualTo(8L * MIB);
        assertThat(r[1]).as("ends at the end of the blob").isEqualTo(123);
        assertThat(r[2]).isEqualTo(MIB);
        assertThat(store.calls(Call.READ)).isZero();
        assertThat(tier(c, "good").bytesServed()).as("counted as asked of the tier").isEqualTo(123);
    }

    /**
     * audit 26: a shuffled pass over 3,000 files of 16 KB asked one node's mirror for 110 MB for a
     * 55 MB shard (block 0 13 times): the blocks a mirror serves around a member read on its own
     * were dropped once the member was cut out of them, and fetched again for its neighbours
     * until the shard was read densely, whole. They are kept, verified as blocks, and the
     * shard's other members are read from them.
     */
    @Test
    void theBlocksAMirrorServesAroundAMemberAreKeptAndItsNeighboursReadFromThem() {
        byte[] shard = TestBlobs.bytes(32 * MIB, 8);
        BlobRef blob = TestBlobs.put(memory, shard, MIB);
        FakeMirror good = new FakeMirror("good", FakeMirror.Kind.GOOD, memory);
        BlockCache c = open(List.of(good));

        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < 32 * MIB / 20_000 - 1; i++) {
            order.add(i);
        }
        java.util.Collections.shuffle(order, new java.util.Random(26));
        for (int i : order) {
            long at = 100L + i * 20_000L; // members of 16 KB, 1,677 of them, read in a shuffled order
            byte[] content = Arrays.copyOfRange(shard, (int) at, (int) at + 16_000);
            BlobMember m = new BlobMember(blob, at, content.length, BlobId.of(content));
            byte[] out = new byte[content.length];
            assertThat(c.readMember(m, 0, ByteBuffer.wrap(out))).isEqualTo(content.length);
            assertThat(out).as("member %d", i).isEqualTo(content);
        }
        long served = tier(c, "good").bytesServed();
        long block0 = good.ranges.stream().filter(r -> r[0] == 0).count();
        assertThat(served).as("bytes the mirror served for a shard of 32 MiB read whole (block 0 asked %d times)", block0)
                .isLessThanOrEqualTo(32L * MIB + 2 * MIB);
        assertThat(store.calls(Call.READ)).as("the store served nothing").isZero();
    }

    @Test
    void aMissIsNotAFailureAndLeavesTheTierUp() {
        byte[] data = TestBlobs.bytes(2 * MIB, 7);
        BlobRef blob = TestBlobs.put(memory, data, MIB);
        FakeMirror empty = new FakeMirror("empty", FakeMirror.Kind.MISSING, memory);
        BlockCache c = open(List.of(empty));

        assertThat(read(c, blob, 0, MIB)).isEqualTo(Arrays.copyOf(data, MIB));
        assertThat(read(c, blob, MIB, MIB)).isEqualTo(Arrays.copyOfRange(data, MIB, 2 * MIB));

        assertThat(empty.reads.get()).as("asked on every fetch: a miss is no reason to back off").isEqualTo(2);
        RemoteTierStats t = tier(c, "empty");
        assertThat(t.state()).isEqualTo("up");
        assertThat(t.misses()).as("the two blocks and the blob's hash list").isEqualTo(3);
        assertThat(t.errors()).isZero();
        assertThat(t.hitRatio()).isZero();
    }

    @Test
    void aFailingTierIsSkippedForTheBackoffThenProbedOnceAndUsedAgain() {
        AtomicLong now = new AtomicLong();
        AtomicInteger failuresLeft = new AtomicInteger(1);
        byte[] data = TestBlobs.bytes(MIB, 8);
        BlobRef blob = TestBlobs.put(memory, data, MIB);
        AtomicInteger asked = new AtomicInteger();
        RemoteTier flaky = new RemoteTier() {
            @Override
            public String describe() {
                return "flaky";
            }

            @Override
            public boolean read(String key, long offset, byte[] dst, int dstOff, int len, int blockSize) {
                asked.incrementAndGet();
                if (failuresLeft.getAndDecrement() > 0) {
                    throw new RemoteTier.Failure("flaky did not answer within 2000 ms", true, null);
                }
                memory.read(key, offset, dst, dstOff, len);
                return true;
            }
        };
        Remotes remotes = new Remotes(List.of(flaky), new ReadMetrics(), Duration.ofSeconds(30), now::get);
        String key = io.warpdata.store.StoreLayout.blob(blob.id());
        byte[] dst = new byte[MIB];
        Remotes.Check right = (d, o, l) -> Arrays.equals(d, o, o + l, data, 0, l);

        assertThat(remotes.read(key, 0, dst, 0, MIB, MIB, MIB, right, inAMinute())).as("timed out").isFalse();
        assertThat(remotes.read(key, 0, dst, 0, MIB, MIB, MIB, right, inAMinute())).as("skipped").isFalse();
        now.addAndGet(Duration.ofSeconds(29).toNanos());
        assertThat(remotes.read(key, 0, dst, 0, MIB, MIB, MIB, right, inAMinute())).as("still skipped").isFalse();
        assertThat(asked.get()).as("one timeout per backoff, not one per read").isEqualTo(1);
        RemoteTierStats down = remotes.snapshot().getFirst();
        assertThat(down.state()).isEqualTo("down");
        assertThat(down.timeouts()).isEqualTo(1);
        assertThat(down.skipped()).isEqualTo(2);

        now.addAndGet(Duration.ofSeconds(2).toNanos());
        assertThat(remotes.read(key, 0, dst, 0, MIB, MIB, MIB, right, inAMinute())).as("probed once after the backoff").isTrue();
        assertThat(dst).isEqualTo(data);
        assertThat(asked.get()).isEqualTo(2);
        assertThat(remotes.snapshot().getFirst().state()).isEqualTo("up");
        assertThat(remotes.snapshot().getFirst().bytesServed()).isEqualTo(MIB);
    }

    /**
     * Two mirrors hanging for a raised --mirror-timeout of 30 s took a read's whole 60 s and it
     * failed with EIO before reaching the store. A tier is asked only while its timeout and the
     * store's reserve are left: the slow one is skipped and the read goes on to the store in time.
     */
    @Test
    void aTierWhoseTimeoutWouldLeaveTheStoreTooLittleOfTheReadIsSkipped() {
        List<String> asked = new ArrayList<>();
        RemoteTier quick = hanging("quick", Duration.ofSeconds(2), asked);
        RemoteTier slow = hanging("slow", Duration.ofSeconds(30), asked);
        Remotes remotes = new Remotes(List.of(quick, slow), new ReadMetrics(), Duration.ofSeconds(30), System::nanoTime);
        byte[] dst = new byte[MIB];
        Remotes.Check any = (d, o, l) -> true;

        long fortySecondsLeft = System.nanoTime() + Duration.ofSeconds(40).toNanos();
        assertThat(remotes.read("k", 0, dst, 0, MIB, MIB, MIB, any, fortySecondsLeft)).as("read the store").isFalse();
        assertThat(asked).as("30 s of the slow one would leave the store 10 s").containsExactly("quick");
        assertThat(remotes.snapshot().get(1).skipped()).isEqualTo(1);
        assertThat(remotes.snapshot().get(1).state()).as("skipped for this read, not taken down").isEqualTo("up");

        asked.clear();
        assertThat(remotes.get("k", MIB, b -> true, System.nanoTime() + Duration.ofSeconds(2).toNanos())).isEmpty();
        assertThat(asked).as("2 s left: the store keeps them").isEmpty();
    }

    /** A mirror answering 404 to everything (a wrong BASE) stayed up at 0% hits without a word. */
    @Test
    void aMirrorThatNeverHoldsAnythingIsDoubtedAloudOnceAndStaysUp() {
        RemoteTier empty = new RemoteTier() {
            @Override
            public String describe() {
                return "http://cache:8080/wrong-base";
            }

            @Override
            public boolean read(String key, long offset, byte[] dst, int dstOff, int len, int blockSize) {
                return false;
            }
        };
        Remotes remotes = new Remotes(List.of(empty), new ReadMetrics(), Duration.ofSeconds(30), System::nanoTime);
        java.io.ByteArrayOutputStream log = new java.io.ByteArrayOutputStream();
        java.io.PrintStream err = System.err;
        System.setErr(new java.io.PrintStream(log, true));
        try {
            for (int i = 0; i < 2 * RemoteTierStats.NEVER_HELD; i++) {
                assertThat(remotes.read("k" + i, 0, new byte[16], 0, 16, 16, 16, (d, o, l) -> true, inAMinute())).isFalse();
            }
        } finally {
            System.setErr(err);
        }
        String said = log.toString(java.nio.charset.StandardCharsets.UTF_8);
        assertThat(said).contains("mirror http://cache:8080/wrong-base has answered 'not there' to all of its first "
                + RemoteTierStats.NEVER_HELD);
        assertThat(said.split("answered 'not there'", -1)).as("said once").hasSize(2);
        assertThat(remotes.snapshot().getFirst().state()).isEqualTo("up");
    }

    private static RemoteTier hanging(String name, Duration timeout, List<String> asked) {
        return new RemoteTier() {
            @Override
            public String describe() {
                return name;
            }

            @Override
            public Duration timeout() {
                return timeout;
            }

            @Override
            public boolean read(String key, long offset, byte[] dst, int dstOff, int len, int blockSize) {
                asked.add(name);
                throw new RemoteTier.Failure(name + " did not answer within " + timeout.toMillis() + " ms", true, null);
            }

            @Override
            public java.util.Optional<byte[]> get(String key, int maxBytes) {
                asked.add(name);
                throw new RemoteTier.Failure(name + " did not answer", true, null);
            }
        };
    }

    private static long inAMinute() {
        return System.nanoTime() + Duration.ofSeconds(60).toNanos();
    }

    @Test
    void bytesVerifiedFromTheStoreAreOfferedOnlyToTiersWarpdFills() {
        byte[] data = TestBlobs.bytes(2 * MIB + 10, 9);
        BlobRef blob = TestBlobs.put(memory, data, MIB);
        List<long[]> offered = java.util.Collections.synchronizedList(new ArrayList<>());
        FakeMirror http = new FakeMirror("http", FakeMirror.Kind.MISSING, memory);
        RemoteTier s3 = new RemoteTier() {
            @Override
            public String describe() {
                return "s3";
            }

            @Override
            public boolean read(String key, long offset, byte[] dst, int dstOff, int len, int blockSize) {
                return false;
            }

            @Override
            public boolean fillable() {
                return true;
            }

            @Override
            public void fill(String key, long offset, byte[] verified, int off, int len, int blockSize) {
                assertThat(Arrays.equals(verified, off, off + len, data, (int) offset, (int) offset + len)).isTrue();
                offered.add(new long[] {offset, len});
            }
        };
        BlockCache c = open(List.of(http, s3));

        assertThat(read(c, blob, 0, data.length)).isEqualTo(data);

        // The fetch thread offers a run after handing its blocks to the readers: wait for it.
        long until = System.nanoTime() + java.time.Duration.ofSeconds(10).toNanos();
        while (offered.stream().mapToLong(r -> r[1]).sum() < data.length && System.nanoTime() < until) {
            java.util.concurrent.locks.LockSupport.parkNanos(2_000_000);
        }
        assertThat(offered.stream().mapToLong(r -> r[1]).sum()).as("every byte fetched from the store is offered")
                .isEqualTo(data.length);
        assertThat(offered).allSatisfy(r -> assertThat(r[0] % MIB).isZero());
    }

    @Test
    void aBlockHashListComesFromAGoodMirrorVerifiedAgainstItsIdAndTheStoreServesNothing() {
        byte[] data = TestBlobs.bytes(3 * MIB + 11, 12);
        BlobRef blob = TestBlobs.put(memory, data, MIB);
        ObjectsMirror poisoned = new ObjectsMirror("poisoned", true, memory);
        ObjectsMirror good = new ObjectsMirror("good", false, memory);
        BlockCache c = open(List.of(poisoned, good));

        assertThat(read(c, blob, 0, data.length)).isEqualTo(data);

        String listKey = io.warpdata.store.StoreLayout.blob(blob.blocks());
        assertThat(good.gets).as("the hash list was asked of the mirrors").contains(listKey);
        assertThat(c.metrics().getsIssued.sum()).as("no GET of any kind reached the store").isZero();
        assertThat(store.calls(Call.READ, Call.GET)).as("no ranged or whole GET reached the store").isZero();
        assertThat(tier(c, "poisoned").verificationFailures()).as("its hash list failed its id").isPositive();
    }

    @Test
    void aPoisonedHashListFromAMirrorIsNeverUsed() {
        byte[] data = TestBlobs.bytes(2 * MIB + 5, 13);
        BlobRef blob = TestBlobs.put(memory, data, MIB);
        ObjectsMirror poisoned = new ObjectsMirror("poisoned", true, memory);
        BlockCache c = open(List.of(poisoned));

        assertThat(read(c, blob, 0, data.length)).isEqualTo(data);

        assertThat(poisoned.gets).containsExactly(io.warpdata.store.StoreLayout.blob(blob.blocks()));
        assertThat(poisoned.rejected).containsExactly(io.warpdata.store.StoreLayout.blob(blob.blocks()) + "@-1");
        assertThat(tier(c, "poisoned").verificationFailures()).isEqualTo(1);
        assertThat(tier(c, "poisoned").state()).isEqualTo("down");
        assertThat(c.metrics().getsIssued.sum()).as("the list and the blocks came from the store").isPositive();
    }
}
