package io.warpdata.daemon.publish;

import io.warpdata.store.BlobStore;
import io.warpdata.store.BlobStores;
import io.warpdata.catalog.Catalog;
import io.warpdata.store.PointerMovedException;
import io.warpdata.store.S3ProxyFixture;
import io.warpdata.store.StoreLayout;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.Column;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.Manifest;
import io.warpdata.manifest.Table;
import io.warpdata.manifest.TableShard;
import io.warpdata.manifest.VersionHash;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Publishers moving one branch at the same time (issue 14), through the same step publish and
 * view use ({@link PointerMoves}: heads read before the work, moved by compare-and-swap after),
 * against a real S3 server (S3Proxy) and the local directory store.
 *
 * <p>S3Proxy 4 enforces conditional PUTs (issue 28): {@code If-None-Match: *} atomically, so
 * eight real publishers creating a branch or latest at once are decided by the server, and
 * {@code If-Match} by a check just before the write, which the tests that put another writer
 * between Warp's read and its write exercise. Eight publishers moving an existing branch at once
 * are raced on the local store only: S3Proxy's check-then-write for {@code If-Match} would let
 * two of them through now and then, and S3 itself is not available here.
 */
class BranchRaceIT {
    private static final DatasetId ID = DatasetId.parse("race/data");
    private static S3ProxyFixture s3;

    @BeforeAll
    static void startS3() {
        s3 = S3ProxyFixture.start();
    }

    @AfterAll
    static void stopS3() {
        if (s3 != null) {
            s3.close();
        }
    }

    /** {@code n} distinct published versions (manifests only: pointers need no blob bytes). */
    private static List<VersionHash> versions(Catalog catalog, int n) {
        List<VersionHash> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            byte[] fake = ("shard " + i).getBytes(StandardCharsets.UTF_8);
            BlobRef blob = new BlobRef(BlobId.of(fake), fake.length, BlobId.of(("list " + i).getBytes(StandardCharsets.UTF_8)));
            Table t = new Table(List.of(new TableShard("part-0.parquet", blob, 1)), List.of(new Column("x", "BIGINT")));
            out.add(catalog.putVersion(Manifest.of(ID, Map.of("main", t), Map.of(), List.of(), Map.of())));
        }
        return out;
    }

    /** Both read the head, then both move: the first wins, the second is told and its version stays published. */
    private static void twoPublishersOneWinner(BlobStore store) {
        Catalog catalog = new Catalog(store);
        List<VersionHash> v = versions(catalog, 3);
        new Catalog(store).moveBranch(ID, "main-line", v.get(0), "setup", null);
        PointerMoves a = PointerMoves.begin(new Catalog(store), ID, false, Optional.of("main-line"));
        PointerMoves b = PointerMoves.begin(new Catalog(store), ID, false, Optional.of("main-line"));
        assertThat(a.finish(v.get(1), "alice")).containsExactly("branch main-line -> " + v.get(1).shortHex(12));
        assertThatThrownBy(() -> b.finish(v.get(2), "bob"))
                .isInstanceOf(PointerMovedException.class)
                .hasMessageContaining("race/data branch main-line was moved by someone else while this publish ran")
                .hasMessageContaining("version " + v.get(2).hex() + " is published all the same");
        assertThat(new Catalog(store).head(ID, "main-line").version()).contains(v.get(1));
        assertThat(new Catalog(store).versions(ID)).contains(v.get(2));

        // The same for latest (the default branch), created by the race: one of two creates it.
        PointerMoves c = PointerMoves.begin(new Catalog(store), ID, true, Optional.empty());
        PointerMoves d = PointerMoves.begin(new Catalog(store), ID, true, Optional.empty());
        assertThat(c.finish(v.get(2), "carol")).containsExactly("latest -> " + v.get(2).shortHex(12));
        assertThatThrownBy(() -> d.finish(v.get(0), "dave")).isInstanceOf(PointerMovedException.class)
                .hasMessageContaining("race/data latest was moved by someone else");
        assertThat(new Catalog(store).head(ID, null).version()).contains(v.get(2));
    }

    @Test
    void twoPublishersMovingOneBranchOnS3ExactlyOneWins() {
        try (BlobStore store = s3.openStore("it-race-two")) {
            twoPublishersOneWinner(store);
        }
    }

    @Test
    void twoPublishersMovingOneBranchOnALocalStoreExactlyOneWins(@TempDir Path dir) {
        try (BlobStore store = BlobStores.open(dir.toUri().toString(), Optional.empty())) {
            twoPublishersOneWinner(store);
        }
    }

    /** What one of the racing publishers ended with. */
    private record Outcome(VersionHash version, PublishResult result, PointerMovedException refused) {
    }

    /**
     * Eight real publishes of eight different inputs to {@code branch} (empty: latest) of one
     * dataset, each through its own S3 client: all read the head, then wait for each other
     * before uploading, so that every one of them moves the pointer from the same head.
     */
    private static List<Outcome> raceEightPublishers(String prefix, Optional<String> branch, Path work) throws Exception {
        int n = 8;
        CyclicBarrier allRead = new CyclicBarrier(n);
        List<Outcome> outcomes = Collections.synchronizedList(new ArrayList<>());
        Map<Integer, Throwable> failures = new ConcurrentHashMap<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int racer = i;
            Path src = Files.createDirectories(work.resolve("src-" + i).resolve("notes"));
            Files.writeString(src.resolve("racer.txt"), "publisher " + i + " was here\n");
            Path staging = Files.createDirectories(work.resolve("staging-" + i));
            threads.add(Thread.ofPlatform().start(() -> {
                try (BlobStore store = s3.openStore(prefix)) {
                    // The upload begins after the heads were read (Publisher: PointerMoves.begin first).
                    PublishProgress barrier = new PublishProgress() {
                        @Override
                        public void start(String task, long totalBytes) {
                            if (task.equals("upload")) {
                                try {
                                    allRead.await();
                                } catch (Exception e) {
                                    throw new IllegalStateException("the race did not start", e);
                                }
                            }
                        }
                    };
                    Publisher publisher = new Publisher(store, new Catalog(store), Clock.systemUTC(), "racer-" + racer,
                            staging, 2, barrier);
                    PublishRequest request = new PublishRequest(ID, new TreeMap<>(),
                            new TreeMap<>(Map.of("notes", List.of(src.toString()))), List.of(), branch.isEmpty(),
                            PublishRequest.DEFAULT_SHARD_SIZE, src.getParent(), branch);
                    try {
                        PublishResult result = publisher.publish(request);
                        outcomes.add(new Outcome(result.version(), result, null));
                    } catch (PointerMovedException e) {
                        outcomes.add(new Outcome(null, null, e));
                    }
                } catch (Throwable t) {
                    failures.put(racer, t);
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        assertThat(failures).isEmpty();
        return outcomes;
    }

    /** Exactly one of eight won, the seven others were told, and all eight versions are published. */
    private static void exactlyOneWon(List<Outcome> outcomes, String prefix, String pointer, String pointerKey) {
        List<Outcome> won = outcomes.stream().filter(o -> o.result() != null).toList();
        List<Outcome> lost = outcomes.stream().filter(o -> o.refused() != null).toList();
        assertThat(won).hasSize(1);
        assertThat(lost).hasSize(7);
        VersionHash winner = won.get(0).version();
        assertThat(won.get(0).result().pointersMoved()).containsExactly(pointer + " -> " + winner.shortHex(12));
        List<VersionHash> losers = new ArrayList<>();
        for (Outcome o : lost) {
            // Refused by the server's conditional PUT: every racer saw the pointer absent before it wrote.
            assertThat(o.refused()).hasMessageContaining("race/data " + pointer + " was moved by someone else while this publish ran");
            // the version made all the same, for a script: beside the message, not inside it
            String version = o.refused().details().get("version");
            assertThat(o.refused().getMessage()).contains("version " + version + " is published all the same");
            losers.add(new VersionHash(version));
        }
        try (BlobStore store = s3.openStore(prefix)) {
            Catalog catalog = new Catalog(store);
            assertThat(catalog.head(ID, pointer.equals("latest") ? null : pointer.substring("branch ".length())).version())
                    .contains(winner);
            // Nothing is lost: each loser's version is published and readable by its hash.
            assertThat(catalog.versions(ID)).containsAll(losers).contains(winner).hasSize(8);
            for (VersionHash v : losers) {
                assertThat(store.length(StoreLayout.version(ID, v))).isPresent();
            }
            assertThat(store.length(pointerKey)).isPresent();
        }
    }

    @Test
    void eightRealPublishersCreatingOneBranchOnS3ExactlyOneWins(@TempDir Path work) throws Exception {
        List<Outcome> outcomes = raceEightPublishers("it-race-branch", Optional.of("dev"), work);
        exactlyOneWon(outcomes, "it-race-branch", "branch dev", StoreLayout.branch(ID, "dev"));
    }

    @Test
    void eightRealPublishersCreatingLatestOnS3ExactlyOneWins(@TempDir Path work) throws Exception {
        List<Outcome> outcomes = raceEightPublishers("it-race-latest", Optional.empty(), work);
        exactlyOneWon(outcomes, "it-race-latest", "latest", StoreLayout.latest(ID));
    }

    /**
     * Another writer lands between Warp's read of the branch's version tag and its PUT: Warp's own
     * check passed, so it is the server that refuses the {@code If-Match} PUT (412). Only the
     * other writer's PUT reaches the server's store; a server ignoring If-Match would store both
     * (and Warp would notice only on reading the pointer back).
     */
    @Test
    void aBranchMovedBetweenReadAndWriteIsRefusedByTheServer() {
        try (BlobStore store = s3.openStore("it-race-ifmatch"); BlobStore other = s3.openStore("it-race-ifmatch")) {
            List<VersionHash> v = versions(new Catalog(store), 3);
            new Catalog(store).moveBranch(ID, "dev", v.get(0), "setup", null);
            PointerMoves mine = PointerMoves.begin(new Catalog(store), ID, false, Optional.of("dev"));
            s3.resetCounters();
            s3.faults().afterNextHead(StoreLayout.branch(ID, "dev"), () -> PointerMoves
                    .begin(new Catalog(other), ID, false, Optional.of("dev")).finish(v.get(1), "other"));
            assertThatThrownBy(() -> mine.finish(v.get(2), "me"))
                    .isInstanceOf(PointerMovedException.class)
                    .hasMessageContaining("race/data branch dev was moved by someone else while this publish ran")
                    .hasMessageContaining("version " + v.get(2).hex() + " is published all the same");
            assertThat(s3.counters().puts()).as("PUTs stored: the other writer's only").isEqualTo(1);
            assertThat(new Catalog(store).head(ID, "dev").version()).contains(v.get(1));
        } finally {
            s3.faults().clear();
        }
    }

    /** The same for creating latest: Warp saw it absent, the server refuses If-None-Match: * with 412. */
    @Test
    void latestCreatedBetweenReadAndWriteIsRefusedByTheServer() {
        try (BlobStore store = s3.openStore("it-race-ifnonematch"); BlobStore other = s3.openStore("it-race-ifnonematch")) {
            List<VersionHash> v = versions(new Catalog(store), 2);
            PointerMoves mine = PointerMoves.begin(new Catalog(store), ID, true, Optional.empty());
            s3.resetCounters();
            s3.faults().afterNextHead(StoreLayout.latest(ID), () -> PointerMoves
                    .begin(new Catalog(other), ID, true, Optional.empty()).finish(v.get(0), "other"));
            assertThatThrownBy(() -> mine.finish(v.get(1), "me"))
                    .isInstanceOf(PointerMovedException.class)
                    .hasMessageContaining("race/data latest was moved by someone else while this publish ran");
            assertThat(s3.counters().puts()).as("PUTs stored: the other writer's only").isEqualTo(1);
            assertThat(new Catalog(store).head(ID, null).version()).contains(v.get(0));
        } finally {
            s3.faults().clear();
        }
    }

    /** Eight at once, each having read the same head: on a store with atomic renames exactly one wins. */
    @Test
    void eightRacingPublishersOnALocalStoreOneWins(@TempDir Path dir) throws Exception {
        try (BlobStore store = BlobStores.open(dir.toUri().toString(), Optional.empty())) {
            List<VersionHash> v = versions(new Catalog(store), 8);
            CyclicBarrier allRead = new CyclicBarrier(8);
            AtomicInteger won = new AtomicInteger();
            AtomicInteger lost = new AtomicInteger();
            AtomicReference<VersionHash> winner = new AtomicReference<>();
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                VersionHash mine = v.get(i);
                threads.add(Thread.ofPlatform().start(() -> {
                    try {
                        PointerMoves m = PointerMoves.begin(new Catalog(store), ID, false, Optional.of("dev"));
                        allRead.await();
                        m.finish(mine, "racer");
                        won.incrementAndGet();
                        winner.set(mine);
                    } catch (PointerMovedException e) {
                        lost.incrementAndGet();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }));
            }
            for (Thread t : threads) {
                t.join();
            }
            assertThat(won.get()).isEqualTo(1);
            assertThat(lost.get()).isEqualTo(7);
            assertThat(new Catalog(store).head(ID, "dev").version()).contains(winner.get());
        }
    }
}
