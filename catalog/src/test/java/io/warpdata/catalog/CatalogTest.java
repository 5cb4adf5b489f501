package io.warpdata.catalog;

import io.warpdata.store.BlobStore;
import io.warpdata.store.FaultStore;
import io.warpdata.store.InMemoryBlobStore;
import io.warpdata.store.ObjectTooLargeException;
import io.warpdata.store.StoreLayout;

import com.github.benmanes.caffeine.cache.Ticker;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.Column;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.DatasetRef;
import io.warpdata.manifest.Manifest;
import io.warpdata.manifest.ManifestCodec;
import io.warpdata.manifest.ManifestCorruptedException;
import io.warpdata.manifest.Table;
import io.warpdata.manifest.TableShard;
import io.warpdata.manifest.VersionHash;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CatalogTest {
    private static final DatasetId MNIST = DatasetId.parse("vision/mnist");

    private final InMemoryBlobStore store = new InMemoryBlobStore();
    private final FakeTicker ticker = new FakeTicker();
    private final Catalog catalog = new Catalog(store, Catalog.Config.defaults(), ticker);
    /** A second client of the same store: what another machine publishing would do. */
    private final Catalog publisher = new Catalog(store);

    static final class FakeTicker implements Ticker {
        private final AtomicLong nanos = new AtomicLong();

        @Override
        public long read() {
            return nanos.get();
        }

        void advance(Duration d) {
            nanos.addAndGet(d.toNanos());
        }
    }

    static Manifest manifest(DatasetId id, long rows) {
        byte[] content = ("shard of " + id + " with " + rows + " rows").getBytes(StandardCharsets.UTF_8);
        BlobRef blob = new BlobRef(BlobId.of(content), content.length, BlobId.of(new byte[] {(byte) rows}));
        Table table = new Table(List.of(new TableShard("part-0.parquet", blob, rows)),
                List.of(new Column("id", "BIGINT")));
        return Manifest.of(id, Map.of("main", table), Map.of(), List.of(), Map.of("created_at", "2026-11-22T05:00:00Z"));
    }

    private static String hex64(char c, String prefix) {
        return (prefix + String.valueOf(c).repeat(64)).substring(0, 64);
    }

    @Test
    void resolvesLatestToTheVerifiedManifest() {
        Manifest m = manifest(MNIST, 10);
        VersionHash v = publisher.putVersion(m);
        publisher.setLatest(MNIST, v);

        Catalog.Resolved r = catalog.resolve(DatasetRef.parse("vision/mnist"));

        assertThat(r.version()).isEqualTo(v);
        assertThat(r.manifest().tables()).isEqualTo(m.tables());
        // The pointer names the version; "at" (and "by" when known) are its non-hashed envelope.
        assertThat(store.objects().get(StoreLayout.latest(MNIST)))
                .asString(StandardCharsets.UTF_8).startsWith("{\"at\":\"").endsWith("\"version\":\"" + v.hex() + "\"}");
    }

    @Test
    void resolvesAUniquePrefixOfEightHexDigits() {
        VersionHash v1 = publisher.putVersion(manifest(MNIST, 1));
        VersionHash v2 = publisher.putVersion(manifest(MNIST, 2));

        assertThat(catalog.resolve(DatasetRef.parse("vision/mnist@" + v1.shortHex(8))).version()).isEqualTo(v1);
        assertThat(catalog.resolve(DatasetRef.parse("vision/mnist@" + v2.shortHex(10))).version()).isEqualTo(v2);
        assertThat(catalog.resolve(DatasetRef.parse("vision/mnist@" + v2.hex())).version()).isEqualTo(v2);
        assertThat(catalog.versions(MNIST)).containsExactlyInAnyOrder(v1, v2);
    }

    @Test
    void ambiguousPrefixListsTheCandidates() {
        String a = hex64('a', "abcdef01");
        String b = hex64('b', "abcdef01");
        store.put(StoreLayout.versions(MNIST) + a + ".json", new byte[] {1});
        store.put(StoreLayout.versions(MNIST) + b + ".json", new byte[] {1});

        assertThatThrownBy(() -> catalog.resolve(DatasetRef.parse("vision/mnist@abcdef01")))
                .isInstanceOf(AmbiguousVersionException.class)
                .hasMessageContaining("abcdef01aaaaaaaa")
                .hasMessageContaining("abcdef01bbbbbbbb");
    }

    @Test
    void unknownDatasetListsTheDatasetsOfItsWorkspace() {
        publisher.putVersion(manifest(MNIST, 1));
        publisher.putVersion(manifest(DatasetId.parse("vision/cifar"), 1));

        assertThatThrownBy(() -> catalog.resolve(DatasetRef.parse("vision/imagenet")))
                .isInstanceOf(DatasetNotFoundException.class)
                .hasMessageContaining("vision/imagenet")
                .hasMessageContaining("vision/cifar, vision/mnist");
    }

    @Test
    void unknownWorkspaceListsTheWorkspaces() {
        publisher.putVersion(manifest(MNIST, 1));

        assertThatThrownBy(() -> catalog.resolve(DatasetRef.parse("audio/speech")))
                .isInstanceOf(DatasetNotFoundException.class)
                .hasMessageContaining("vision/");
    }

    @Test
    void storeFoldersNoWorkspaceCanBeNamedAreNotWorkspaces() {
        publisher.putVersion(manifest(MNIST, 1));
        // Made by hand in the store: no dataset id has these names; they showed as empty folders.
        store.put("datasets/UPPER/x/latest.json", "{}".getBytes());
        store.put("datasets/a b/x/latest.json", "{}".getBytes());

        assertThat(catalog.workspaces()).containsExactly("vision");
        assertThat(catalog.hasWorkspace("UPPER")).isFalse();
    }

    @Test
    void datasetsAnOlderWarpNamedAreNotShownButNamedAsSuch() {
        publisher.putVersion(manifest(MNIST, 1));
        store.put("datasets/vision/-dash/versions/" + "a".repeat(64) + ".json", "{}".getBytes());
        store.put("datasets/vision/-tmp/x", "{}".getBytes());
        store.put("datasets/vision/Hand Made/latest.json", "{}".getBytes());
        assertThat(catalog.datasets("vision")).containsExactly(MNIST);
        assertThat(catalog.refusedOldNames("vision")).as("not the folders made by hand").containsExactly("-dash");
    }

    @Test
    void unknownVersionListsTheVersionsOfTheDataset() {
        VersionHash v = publisher.putVersion(manifest(MNIST, 1));
        String other = v.hex().startsWith("0") ? "11111111" : "00000000";

        assertThatThrownBy(() -> catalog.resolve(DatasetRef.parse("vision/mnist@" + other)))
                .isInstanceOf(DatasetNotFoundException.class)
                .hasMessageContaining("vision/mnist@" + other)
                .hasMessageContaining("vision/mnist@" + v.shortHex(12));
    }

    @Test
    void datasetWithVersionsButNoLatestSaysSoAndListsVersions() {
        VersionHash v = publisher.putVersion(manifest(MNIST, 1));

        assertThatThrownBy(() -> catalog.resolve(DatasetRef.parse("vision/mnist")))
                .isInstanceOf(DatasetNotFoundException.class)
                .hasMessageContaining("vision/mnist has 1 version(s)")
                .hasMessageContaining("but no latest: none was published with --set-latest")
                .hasMessageContaining(v.shortHex(12))
                .hasMessageNotContaining("is not published")
                .satisfies(e -> assertThat(((DatasetNotFoundException) e).nextStep())
                        .contains("--set-latest", "vision/mnist@" + v.shortHex(12)));
    }

    @Test
    void manifestStoredUnderAnotherHashIsCorrupted() {
        Manifest m = manifest(MNIST, 1);
        String wrong = hex64('e', "");
        store.put(StoreLayout.versions(MNIST) + wrong + ".json", ManifestCodec.toJson(m));

        assertThatThrownBy(() -> catalog.manifest(MNIST, new VersionHash(wrong)))
                .isInstanceOf(ManifestCorruptedException.class)
                .hasMessageContaining(wrong);
    }

    @Test
    void tamperedManifestBytesAreCorrupted() {
        VersionHash v = publisher.putVersion(manifest(MNIST, 1));
        String key = StoreLayout.version(MNIST, v);
        String json = new String(store.objects().get(key), StandardCharsets.UTF_8);
        store.objects().put(key, json.replace("\"row_count\":1", "\"row_count\":2").getBytes(StandardCharsets.UTF_8));

        assertThatThrownBy(() -> catalog.resolve(DatasetRef.parse("vision/mnist@" + v.hex())))
                .isInstanceOf(ManifestCorruptedException.class);
    }

    @Test
    void manifestOfAnotherDatasetIsCorrupted() {
        Manifest cifar = manifest(DatasetId.parse("vision/cifar"), 1);
        VersionHash v = ManifestCodec.version(cifar);
        store.put(StoreLayout.version(MNIST, v), ManifestCodec.toJson(cifar));

        assertThatThrownBy(() -> catalog.manifest(MNIST, v))
                .isInstanceOf(ManifestCorruptedException.class)
                .hasMessageContaining("vision/cifar");
    }

    @Test
    void manifestsAreFetchedOnceAndCachedForEver() {
        VersionHash v = publisher.putVersion(manifest(MNIST, 1));
        catalog.manifest(MNIST, v);
        long gets = store.gets.get();
        ticker.advance(Duration.ofDays(1));
        catalog.manifest(MNIST, v);
        catalog.resolve(DatasetRef.parse("vision/mnist@" + v.hex()));
        assertThat(store.gets.get()).isEqualTo(gets);
    }

    @Test
    void latestPointerIsRereadOnlyAfterItsTtl() {
        VersionHash v1 = publisher.putVersion(manifest(MNIST, 1));
        VersionHash v2 = publisher.putVersion(manifest(MNIST, 2));
        publisher.setLatest(MNIST, v1);
        assertThat(catalog.latest(MNIST)).hasValue(v1);

        publisher.setLatest(MNIST, v2);
        ticker.advance(Duration.ofMillis(1900));
        assertThat(catalog.latest(MNIST)).hasValue(v1);
        ticker.advance(Duration.ofMillis(200));
        assertThat(catalog.latest(MNIST)).hasValue(v2);
    }

    @Test
    void unknownDatasetIsRememberedBrieflyThenSeen() {
        assertThat(catalog.datasets("vision")).isEmpty();
        publisher.putVersion(manifest(MNIST, 1));
        assertThat(catalog.datasets("vision")).isEmpty();
        ticker.advance(Duration.ofMillis(1001));
        assertThat(catalog.datasets("vision")).containsExactly(MNIST);
    }

    @Test
    void listingsAreCachedWithinTheTtl() {
        publisher.putVersion(manifest(MNIST, 1));
        FaultStore counting = new FaultStore(store);
        Catalog c = new Catalog(counting, Catalog.Config.defaults(), ticker);
        c.versions(MNIST);
        c.versions(MNIST);
        c.workspaces();
        c.workspaces();
        assertThat(counting.calls(FaultStore.Call.LIST)).isEqualTo(2);
        ticker.advance(Duration.ofSeconds(3));
        c.versions(MNIST);
        assertThat(counting.calls(FaultStore.Call.LIST)).isEqualTo(3);
    }

    @Test
    void lookupsByNameAnswerFromTheLastKnownListingPastItsTtl() {
        publisher.putVersion(manifest(MNIST, 1));
        publisher.putVersion(manifest(MNIST, 2));
        FaultStore counting = new FaultStore(store);
        Catalog c = new Catalog(counting, Catalog.Config.defaults(), ticker);
        assertThat(c.hasWorkspace("vision")).isTrue();
        long listed = counting.calls(FaultStore.Call.LIST);
        ticker.advance(Duration.ofDays(1));
        // The kernel re-validating /vision (lookup, getattr) costs no LIST: only a listing does.
        assertThat(c.hasWorkspace("vision")).isTrue();
        assertThat(counting.calls(FaultStore.Call.LIST)).isEqualTo(listed);
        // A workspace the known listing lacks is looked for in a fresh one (it may be new).
        publisher.putVersion(manifest(DatasetId.parse("audio/clips"), 1));
        assertThat(c.hasWorkspace("audio")).isTrue();
        assertThat(counting.calls(FaultStore.Call.LIST)).isEqualTo(listed + 1);
        assertThat(c.hasWorkspace("nope")).isFalse();
    }

    @Test
    void refreshDropsPointersAndListingsAtOnce() {
        VersionHash v1 = publisher.putVersion(manifest(MNIST, 1));
        publisher.setLatest(MNIST, v1);
        assertThat(catalog.latest(MNIST)).hasValue(v1);
        VersionHash v2 = publisher.putVersion(manifest(MNIST, 2));
        publisher.setLatest(MNIST, v2);

        catalog.refresh();

        assertThat(catalog.latest(MNIST)).hasValue(v2);
        assertThat(catalog.versions(MNIST)).hasSize(2);
    }

    @Test
    void putVersionIsIdempotentAndWritesOnce() {
        Manifest m = manifest(MNIST, 1);
        VersionHash v = catalog.putVersion(m);
        long puts = store.puts.get();
        assertThat(catalog.putVersion(m)).isEqualTo(v);
        assertThat(store.puts.get()).isEqualTo(puts);
        assertThat(catalog.versions(MNIST)).containsExactly(v);
    }

    @Test
    void settingLatestToAnUnpublishedVersionFails() {
        assertThatThrownBy(() -> catalog.setLatest(MNIST, new VersionHash(hex64('c', ""))))
                .isInstanceOf(DatasetNotFoundException.class);
        assertThat(store.objects()).doesNotContainKey(StoreLayout.latest(MNIST));
    }

    @Test
    void garbledLatestPointerIsCorrupted() {
        assertThatThrownBy(() -> PointerCodec.fromJson("{\"version\":42}".getBytes(StandardCharsets.UTF_8), "x"))
                .isInstanceOf(ManifestCorruptedException.class);
        assertThatThrownBy(() -> PointerCodec.fromJson("{\"version\":\"abc\"}".getBytes(StandardCharsets.UTF_8), "x"))
                .isInstanceOf(ManifestCorruptedException.class);
        assertThatThrownBy(() -> PointerCodec.fromJson("nope".getBytes(StandardCharsets.UTF_8), "x"))
                .isInstanceOf(ManifestCorruptedException.class);
        String hex = hex64('d', "");
        assertThat(PointerCodec.fromJson(("{\"extra\":[1,{}],\"version\":\"" + hex + "\"}")
                .getBytes(StandardCharsets.UTF_8), "x").hex()).isEqualTo(hex);
    }

    @Test
    void latestPointerRoundTrips() {
        VersionHash v = new VersionHash(hex64('f', "0123"));
        assertThat(PointerCodec.fromJson(PointerCodec.toJson(v, "alice", java.time.Instant.EPOCH), "x")).isEqualTo(v);
    }

    /** Writes a tag or branch pointer the way a publisher on another machine would. */
    private void pointer(String key, VersionHash v) {
        store.put(key, PointerCodec.toJson(v, null, java.time.Instant.EPOCH));
    }

    @Test
    void tagsAndBranchesResolveThroughTheOneResolverTagsFirst() {
        VersionHash v1 = publisher.putVersion(manifest(MNIST, 1));
        VersionHash v2 = publisher.putVersion(manifest(MNIST, 2));
        publisher.setLatest(MNIST, v2);
        pointer(StoreLayout.tag(MNIST, "v1"), v1);
        pointer(StoreLayout.branch(MNIST, "dev"), v2);
        pointer(StoreLayout.branch(MNIST, "v1"), v2);

        Catalog.Resolved tag = catalog.resolve(DatasetRef.parse("vision/mnist@v1"));
        assertThat(tag.version()).isEqualTo(v1);
        assertThat(tag.kind()).isEqualTo(Catalog.RefKind.TAG);
        assertThat(tag.manifest().stats().totalRows()).isEqualTo(1);
        assertThat(catalog.locate(DatasetRef.parse("vision/mnist@dev")))
                .isEqualTo(new Catalog.Located(MNIST, Catalog.RefKind.BRANCH, v2));
        assertThat(catalog.locate(DatasetRef.parse("vision/mnist@latest")).kind()).isEqualTo(Catalog.RefKind.LATEST);
        assertThat(catalog.locate(DatasetRef.parse("vision/mnist@" + v1.shortHex(8))).kind())
                .isEqualTo(Catalog.RefKind.VERSION);
        assertThat(catalog.tags(MNIST)).containsExactly("v1");
        assertThat(catalog.branches(MNIST)).containsExactly("dev", "v1");
    }

    @Test
    void anUnknownRefListsTheTagsAndBranchesThatExist() {
        VersionHash v1 = publisher.putVersion(manifest(MNIST, 1));
        pointer(StoreLayout.tag(MNIST, "v1"), v1);
        pointer(StoreLayout.branch(MNIST, "dev"), v1);

        assertThatThrownBy(() -> catalog.locate(DatasetRef.parse("vision/mnist@v2")))
                .isInstanceOf(DatasetNotFoundException.class)
                .hasMessageContaining("vision/mnist has no tag or branch 'v2'")
                .hasMessageContaining("Its tags and branches: vision/mnist@v1 (tag), vision/mnist@dev (branch).")
                .hasMessageNotContaining("is not published")
                .hasMessageNotContaining("Nothing is published");
        VersionHash v2 = publisher.putVersion(manifest(DatasetId.parse("vision/bare"), 1));
        assertThatThrownBy(() -> catalog.locate(DatasetRef.parse("vision/bare@v9")))
                .as("a dataset without names says so, not that nothing is published").isInstanceOf(DatasetNotFoundException.class)
                .hasMessageContaining("vision/bare has no tag or branch 'v9'").hasMessageContaining("It has no tags or branches.")
                .hasMessageNotContaining("Nothing is published");
        assertThat(v2).isNotNull();
        assertThatThrownBy(() -> catalog.locate(DatasetRef.parse("vision/mnist@abc")))
                .isInstanceOf(DatasetNotFoundException.class)
                .hasMessageContaining("a version prefix needs at least 8 hex digits");
    }

    @Test
    void aTagMovedOrDeletedElsewhereIsFollowedAfterTheTtlAsABranchIs() {
        // audit 19: tag --force and tag --delete on one machine; a node that had read the tag
        // kept its old target until restarted, while warpctl on it read the new one.
        VersionHash v1 = publisher.putVersion(manifest(MNIST, 1));
        VersionHash v2 = publisher.putVersion(manifest(MNIST, 2));
        pointer(StoreLayout.tag(MNIST, "t"), v1);
        pointer(StoreLayout.branch(MNIST, "b"), v1);
        assertThat(catalog.tag(MNIST, "t")).hasValue(v1);
        assertThat(catalog.branch(MNIST, "b")).hasValue(v1);

        pointer(StoreLayout.tag(MNIST, "t"), v2);
        pointer(StoreLayout.branch(MNIST, "b"), v2);
        ticker.advance(Duration.ofMillis(1000));
        assertThat(catalog.tag(MNIST, "t")).as("within the TTL").hasValue(v1);
        ticker.advance(Duration.ofMillis(1100));
        assertThat(catalog.branch(MNIST, "b")).hasValue(v2);
        assertThat(catalog.tag(MNIST, "t")).hasValue(v2);

        store.delete(StoreLayout.tag(MNIST, "t"));
        ticker.advance(Duration.ofMillis(2100));
        assertThat(catalog.tag(MNIST, "t")).as("deleted").isEmpty();
    }

    @Test
    void strayObjectsUnderTagsAreNotRefs() {
        VersionHash v1 = publisher.putVersion(manifest(MNIST, 1));
        pointer(StoreLayout.tag(MNIST, "good"), v1);
        store.put(StoreLayout.tags(MNIST) + "Bad Name.json", new byte[] {1});
        store.put(StoreLayout.tags(MNIST) + "notes.txt", new byte[] {1});
        assertThat(catalog.tags(MNIST)).containsExactly("good");
    }

    @Test
    void aHugeObjectWherePointerOrManifestShouldBeIsRefusedTyped() {
        VersionHash v = publisher.putVersion(manifest(MNIST, 1));
        store.put(StoreLayout.latest(MNIST), new byte[BlobStore.POINTER_MAX_BYTES + 1]);
        assertThatThrownBy(() -> catalog.latest(MNIST)).isInstanceOf(ObjectTooLargeException.class)
                .hasMessageContaining("latest.json");
        String bogus = hex64('9', "");
        store.put(StoreLayout.versions(MNIST) + bogus + ".json", new byte[Manifests.MANIFEST_MAX_BYTES + 1]);
        assertThatThrownBy(() -> catalog.manifest(MNIST, new VersionHash(bogus)))
                .isInstanceOf(ObjectTooLargeException.class);
        // Everything else keeps answering.
        assertThat(catalog.manifest(MNIST, v).stats().totalRows()).isEqualTo(1);
    }
}
