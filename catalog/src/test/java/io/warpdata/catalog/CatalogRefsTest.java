package io.warpdata.catalog;

import io.warpdata.store.InMemoryBlobStore;
import io.warpdata.store.PointerMovedException;
import io.warpdata.store.StoreLayout;

import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.DatasetRef;
import io.warpdata.manifest.ManifestValidationException;
import io.warpdata.manifest.VersionHash;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Tags and branches written through the catalog: compare-and-swap, immutability, one namespace. */
class CatalogRefsTest {
    private static final DatasetId MNIST = DatasetId.parse("vision/mnist");

    private final InMemoryBlobStore store = new InMemoryBlobStore();
    private final Catalog catalog = new Catalog(store);
    private final VersionHash v1 = catalog.putVersion(CatalogTest.manifest(MNIST, 1));
    private final VersionHash v2 = catalog.putVersion(CatalogTest.manifest(MNIST, 2));

    @Test
    void aBranchIsCreatedAndMovedAndKeepsWhoMovedIt() {
        assertThat(catalog.moveBranch(MNIST, "dev", v1, "alice", null)).isTrue();
        assertThat(catalog.moveBranch(MNIST, "dev", v1, "alice", null)).as("already there").isFalse();
        assertThat(catalog.moveBranch(MNIST, "dev", v2, "bob", null)).isTrue();
        assertThat(catalog.locate(DatasetRef.parse("vision/mnist@dev")).version()).isEqualTo(v2);
        assertThat(new String(store.get(StoreLayout.branch(MNIST, "dev")), StandardCharsets.UTF_8))
                .contains("\"by\":\"bob\"").contains("\"version\":\"" + v2.hex() + "\"");
        assertThat(catalog.branches(MNIST)).containsExactly("dev");
    }

    @Test
    void twoPublishersStartingFromTheSameHeadOnlyOneMovesTheBranch() {
        catalog.moveBranch(MNIST, "dev", v1, "setup", null);
        Catalog other = new Catalog(store);
        Catalog.Head seenByA = catalog.head(MNIST, "dev");
        Catalog.Head seenByB = other.head(MNIST, "dev");

        assertThat(catalog.moveBranch(MNIST, "dev", v2, "a", seenByA)).isTrue();
        VersionHash v3 = other.putVersion(CatalogTest.manifest(MNIST, 3));
        assertThatThrownBy(() -> other.moveBranch(MNIST, "dev", v3, "b", seenByB))
                .isInstanceOf(PointerMovedException.class).hasMessageContaining("moved by someone else");
        assertThat(new Catalog(store).branch(MNIST, "dev")).hasValue(v2);
    }

    @Test
    void latestIsTheDefaultBranchAndMovesTheSameWay() {
        Catalog.Head empty = catalog.head(MNIST, null);
        assertThat(empty.version()).isEmpty();
        catalog.setLatest(MNIST, v1);
        assertThatThrownBy(() -> catalog.moveBranch(MNIST, null, v2, "late", empty))
                .isInstanceOf(PointerMovedException.class);
        assertThat(catalog.latest(MNIST)).hasValue(v1);
    }

    /**
     * A branch and a tag of one name created at once: each writer saw the name free before the
     * other wrote. The tag's writer wrote first and saw no branch after its write; the branch's
     * writer, whose write landed second, sees the tag and removes its branch again.
     */
    @Test
    void aBranchAndATagOfOneNameCreatedAtOnceLeaveOnlyOneAndTheOtherWriterFails() {
        io.warpdata.store.FaultStore racing = new io.warpdata.store.FaultStore(store);
        Catalog branching = new Catalog(racing);
        Catalog tagging = new Catalog(store);
        racing.on(io.warpdata.store.FaultStore.Call.PUT).keys(StoreLayout.branch(MNIST, "nb")).once()
                .then(() -> assertThat(tagging.tag(MNIST, "nb", v2, "bob", false)).isTrue());
        assertThatThrownBy(() -> branching.moveBranch(MNIST, "nb", v1, "alice", null))
                .isInstanceOf(RefExistsException.class)
                .hasMessageContaining("vision/mnist@nb was made a tag by someone else at the same moment")
                .hasMessageContaining("this branch was removed again");
        assertThat(store.length(StoreLayout.branch(MNIST, "nb"))).isEmpty();
        assertThat(new Catalog(store).tag(MNIST, "nb")).contains(v2);

        // the same the other way round: the branch lands first, the tag sees it and is removed
        racing.on(io.warpdata.store.FaultStore.Call.PUT).keys(StoreLayout.tag(MNIST, "nt")).once()
                .then(() -> assertThat(tagging.moveBranch(MNIST, "nt", v1, "bob", null)).isTrue());
        assertThatThrownBy(() -> branching.tag(MNIST, "nt", v2, "alice", false))
                .isInstanceOf(RefExistsException.class).hasMessageContaining("was made a branch");
        assertThat(store.length(StoreLayout.tag(MNIST, "nt"))).isEmpty();
        assertThat(new Catalog(store).branch(MNIST, "nt")).contains(v1);
    }

    /** A tag another writer created meanwhile: refused as a tag that exists (tags never move), naming what it names. */
    @Test
    void aTagCreatedByAnotherWriterMeanwhileIsRefusedAsTagsNeverMove() {
        io.warpdata.store.FaultStore racing = new io.warpdata.store.FaultStore(store);
        Catalog mine = new Catalog(racing);
        racing.on(io.warpdata.store.FaultStore.Call.PUT).keys(StoreLayout.tag(MNIST, "rt")).once()
                .then(() -> new Catalog(store).tag(MNIST, "rt", v2, "bob", false));
        assertThatThrownBy(() -> mine.tag(MNIST, "rt", v1, "alice", false))
                .isInstanceOf(RefExistsException.class)
                .hasMessageContaining("vision/mnist@rt was created by someone else meanwhile (it names " + v2.shortHex(16))
                .hasMessageNotContaining("store").satisfies(e -> assertThat(((RefExistsException) e).nextStep())
                        .contains("another tag name"));
    }

    @Test
    void aTagOrBranchTheMountCouldNotShowAsOneFileNameIsRefused() {
        DatasetId wide = new DatasetId("vision", "n".repeat(DatasetId.MAX_NAME));
        VersionHash v = catalog.putVersion(CatalogTest.manifest(wide, 1));
        String fits = "t".repeat(255 - 1 - DatasetId.MAX_NAME);
        assertThat(catalog.tag(wide, fits, v, "alice", false)).isTrue();
        // audit 32: it said "ref: ..." and "Fix the input that produced 'ref' and publish again".
        assertThatThrownBy(() -> catalog.tag(wide, fits + "t", v, "alice", false))
                .isInstanceOfSatisfying(RefNameException.class, e -> {
                    assertThat(e.type()).isEqualTo("InvalidInput");
                    assertThat(e.getMessage()).contains("256 characters").doesNotStartWith("ref:");
                    assertThat(e.nextStep()).contains("at most " + fits.length() + " characters")
                            .doesNotContain("publish");
                });
        assertThatThrownBy(() -> catalog.moveBranch(wide, fits + "b", v, "alice", null))
                .isInstanceOf(RefNameException.class).hasMessageContaining("256 characters");
    }

    @Test
    void aTagNeverMovesUnlessForcedAndTaggingTheSameVersionAgainIsANoOp() {
        assertThat(catalog.tag(MNIST, "v1.0", v1, "alice", false)).isTrue();
        assertThat(catalog.tag(MNIST, "v1.0", v1, "alice", false)).isFalse();
        assertThatThrownBy(() -> catalog.tag(MNIST, "v1.0", v2, "bob", false))
                .isInstanceOf(RefExistsException.class)
                .hasMessageContaining("already names version " + v1.shortHex(16))
                .hasMessageContaining("tags never move")
                .satisfies(e -> assertThat(((RefExistsException) e).nextStep())
                        .contains("warpctl tag " + MNIST + "@" + v2.shortHex(12) + " v1.0 --force"));
        assertThat(catalog.tag(MNIST, "v1.0", v2, "bob", true)).isTrue();
        assertThat(new Catalog(store).tag(MNIST, "v1.0")).hasValue(v2);
    }

    @Test
    void tagsAndBranchesShareOneNamespace() {
        catalog.tag(MNIST, "stable", v1, null, false);
        catalog.moveBranch(MNIST, "dev", v1, null, null);
        assertThatThrownBy(() -> catalog.moveBranch(MNIST, "stable", v2, null, null))
                .isInstanceOf(RefExistsException.class).hasMessageContaining("is a tag");
        assertThatThrownBy(() -> catalog.tag(MNIST, "dev", v2, null, false))
                .isInstanceOf(RefExistsException.class).hasMessageContaining("is a branch");
    }

    @Test
    void badRefNamesAndUnpublishedVersionsAreRefusedWritingNothing() {
        assertThatThrownBy(() -> catalog.tag(MNIST, "deadbeef", v1, null, false))
                .isInstanceOf(ManifestValidationException.class).hasMessageContaining("version hash prefix");
        assertThatThrownBy(() -> catalog.tag(MNIST, "latest", v1, null, false))
                .isInstanceOf(RefNameException.class);
        assertThatThrownBy(() -> catalog.moveBranch(MNIST, "Dev", v1, null, null))
                .isInstanceOf(ManifestValidationException.class);
        VersionHash missing = new VersionHash("c".repeat(64));
        assertThatThrownBy(() -> catalog.tag(MNIST, "t", missing, null, false))
                .isInstanceOf(DatasetNotFoundException.class);
        assertThat(store.objects().keySet()).noneMatch(k -> k.contains("/tags/") || k.contains("/branches/"));
    }

    @Test
    void aDeletedTagIsGoneForEveryone() {
        catalog.tag(MNIST, "old", v1, null, false);
        catalog.deleteTag(MNIST, "old");
        assertThat(catalog.tags(MNIST)).isEmpty();
        assertThat(new Catalog(store).tag(MNIST, "old")).isEmpty();
        assertThatThrownBy(() -> catalog.deleteTag(MNIST, "old")).isInstanceOf(DatasetNotFoundException.class);
    }

    @Test
    void aDeletedBranchIsGoneForEveryoneAndItsVersionStays() {
        catalog.moveBranch(MNIST, "dev", v2, "alice", null);
        assertThat(catalog.deleteBranch(MNIST, "dev")).isEqualTo(v2);
        assertThat(catalog.branches(MNIST)).isEmpty();
        assertThat(new Catalog(store).branch(MNIST, "dev")).isEmpty();
        assertThat(new Catalog(store).manifest(MNIST, v2)).isNotNull();
        assertThatThrownBy(() -> catalog.deleteBranch(MNIST, "dev")).isInstanceOf(DatasetNotFoundException.class);
    }

    @Test
    void deletingATagThatIsABranchOrABranchThatIsATagSaysWhichCommandDeletesIt() {
        catalog.moveBranch(MNIST, "dev", v1, null, null);
        catalog.tag(MNIST, "v1.0", v1, null, false);
        assertThatThrownBy(() -> catalog.deleteTag(MNIST, "dev")).isInstanceOf(RefExistsException.class)
                .hasMessageContaining("vision/mnist@dev is a branch, not a tag")
                .satisfies(e -> assertThat(((RefExistsException) e).nextStep())
                        .contains("warpctl branch --delete vision/mnist dev"));
        assertThatThrownBy(() -> catalog.deleteBranch(MNIST, "v1.0")).isInstanceOf(RefExistsException.class)
                .hasMessageContaining("is a tag, not a branch")
                .satisfies(e -> assertThat(((RefExistsException) e).nextStep())
                        .contains("warpctl tag --delete vision/mnist v1.0"));
        assertThat(catalog.branch(MNIST, "dev")).hasValue(v1);
        assertThat(catalog.tag(MNIST, "v1.0")).hasValue(v1);
    }
}
