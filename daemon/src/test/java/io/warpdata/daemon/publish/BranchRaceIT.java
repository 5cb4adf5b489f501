package io.warpdata.daemon.publish;

import io.warpdata.blobcache.BlobStore;
import io.warpdata.blobcache.BlobStores;
import io.warpdata.blobcache.Catalog;
import io.warpdata.blobcache.PointerMovedException;
import io.warpdata.blobcache.S3ProxyFixture;
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

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Publishers moving one branch at the same time (issue 14), through the same step publish and
 * view use ({@link PointerMoves}: heads read before the work, moved by compare-and-swap after),
 * against a real S3 server (S3Proxy) and the local directory store.
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
                .hasMessageContaining("race/data branch main-line was moved by someone else meanwhile")
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
