package io.warpdata.daemon.view;

import io.warpdata.catalog.Catalog;
import io.warpdata.store.InMemoryBlobStore;
import io.warpdata.daemon.publish.PublishProgress;
import io.warpdata.daemon.publish.PublishRequest;
import io.warpdata.daemon.publish.Publisher;
import io.warpdata.manifest.Artifact;
import io.warpdata.manifest.Binding;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.DatasetRef;
import io.warpdata.manifest.Manifest;
import io.warpdata.manifest.RefType;
import io.warpdata.manifest.VersionHash;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Views of a parent whose rows name members it lacks, and where a view's latest goes. */
class ViewPublisherTest {
    private static final DatasetId PETS = DatasetId.parse("t/pets");
    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-25T16:00:00Z"), ZoneOffset.UTC);

    @TempDir
    Path tmp;

    private final InMemoryBlobStore store = new InMemoryBlobStore();
    private final Catalog catalog = new Catalog(store);

    /** t/pets: a.parquet (DuckDB) naming cat/1.jpg, cat/2.jpg and the missing dog/9.jpg, published with --allow-missing-members. */
    private VersionHash publishWithAMissingMember() throws Exception {
        Files.createDirectories(tmp.resolve("images/cat"));
        Files.writeString(tmp.resolve("images/cat/1.jpg"), "one");
        Files.writeString(tmp.resolve("images/cat/2.jpg"), "two");
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement()) {
            st.execute("COPY (SELECT * FROM (VALUES (0, 'cat/1.jpg', 'cat'), (1, 'cat/2.jpg', 'cat'), (2, 'dog/9.jpg', 'dog'))"
                    + " v(id, path, label) ORDER BY id) TO '" + tmp.resolve("a.parquet") + "' (FORMAT PARQUET)");
        }
        PublishRequest req = new PublishRequest(PETS, new TreeMap<>(Map.of("main", List.of("a.parquet"))),
                new TreeMap<>(Map.of("images", List.of("images"))),
                List.of(new Binding("main", "path", "images", RefType.IMAGE)), true, 64 * 1024, tmp, Optional.empty(),
                false, true);
        return new Publisher(store, catalog, CLOCK, "alice", tmp.resolve("staging"), 2, PublishProgress.NONE)
                .publish(req).version();
    }

    private ViewPublisher.Result view(String source, String as, String where, boolean setLatest) {
        return new ViewPublisher(store, catalog, CLOCK, "bob", tmp.resolve("staging"), PublishProgress.NONE)
                .publish(DatasetRef.parse(source), new ViewQuery("main", Optional.of(where), Optional.empty(),
                        OptionalLong.empty(), OptionalLong.empty(), Optional.empty(), Optional.empty(), 0),
                        new ViewPublisher.Target(DatasetId.parse(as), setLatest, Optional.empty(), Optional.empty()));
    }

    /** audit 32: a view of every row of a WebDataset artifact lost its shard files (NAME.tars/) and format 3. */
    @Test
    void aViewOfEveryMemberOfTarShardsKeepsTheirFilesAndASubsetDoesNot() throws Exception {
        Files.createDirectories(tmp.resolve("shards"));
        // Written by Python's tarfile.
        Process p = new ProcessBuilder("/usr/bin/python3", "-c", "import tarfile, io, sys\n"
                + "for name, members in ((sys.argv[1], ('a/1.jpg', 'a/2.jpg')), (sys.argv[2], ('b/3.jpg',))):\n"
                + "    with tarfile.open(name, 'w') as t:\n"
                + "        for m in members:\n"
                + "            ti = tarfile.TarInfo(m); ti.size = len(m); t.addfile(ti, io.BytesIO(m.encode()))\n",
                tmp.resolve("shards/000.tar").toString(), tmp.resolve("shards/001.tar").toString()).inheritIO().start();
        assertThat(p.waitFor()).isZero();
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement()) {
            st.execute("COPY (SELECT * FROM (VALUES (0, 'a/1.jpg', 'a'), (1, 'a/2.jpg', 'a'), (2, 'b/3.jpg', 'b'))"
                    + " v(id, path, label) ORDER BY id) TO '" + tmp.resolve("w.parquet") + "' (FORMAT PARQUET)");
        }
        DatasetId wds = DatasetId.parse("t/wds");
        new Publisher(store, catalog, CLOCK, "alice", tmp.resolve("staging"), 2, PublishProgress.NONE)
                .publish(new PublishRequest(wds, new TreeMap<>(Map.of("main", List.of("w.parquet"))),
                        new TreeMap<>(Map.of("images", List.of("shards/*.tar"))),
                        List.of(new Binding("main", "path", "images", RefType.IMAGE)), true, 64 * 1024, tmp,
                        Optional.empty(), false, false));
        Manifest parent = catalog.manifest(wds, catalog.latest(wds).orElseThrow());
        assertThat(parent.artifacts().get("images").shardNames()).containsExactly("000.tar", "001.tar");

        ViewPublisher.Result allRows = view("t/wds", "t/all", "id >= 0", true);
        Manifest all = catalog.manifest(allRows.dataset(), allRows.version());
        assertThat(all.artifacts().get("images")).isEqualTo(parent.artifacts().get("images"));
        assertThat(all.formatVersion()).isEqualTo(3);

        ViewPublisher.Result aRows = view("t/wds", "t/some", "label = 'a'", true);
        Manifest some = catalog.manifest(aRows.dataset(), aRows.version());
        assertThat(some.artifacts().get("images").memberCount()).isEqualTo(2);
        assertThat(some.artifacts().get("images").shards()).hasSize(1);
        assertThat(some.artifacts().get("images").shardNames()).as("a subset's shards hold members it does not have").isEmpty();
    }

    @Test
    void theSeedIsRecordedWheneverItDecidedTheRows() {
        ViewQuery byRandom = new ViewQuery("main", Optional.of("RANDOM() < 0.5"), Optional.empty(), OptionalLong.empty(),
                OptionalLong.empty(), Optional.empty(), Optional.empty(), 3);
        ViewQuery shuffled = new ViewQuery("main", Optional.empty(), Optional.of("random()"), OptionalLong.of(10),
                OptionalLong.empty(), Optional.empty(), Optional.empty(), 4);
        ViewQuery plain = new ViewQuery("main", Optional.of("label = 'cat'"), Optional.empty(), OptionalLong.empty(),
                OptionalLong.empty(), Optional.empty(), Optional.empty(), 5);
        assertThat(ViewPublisher.terms(byRandom)).containsEntry("seed", "3").containsEntry("where", "RANDOM() < 0.5");
        assertThat(ViewPublisher.terms(shuffled)).containsEntry("seed", "4");
        assertThat(ViewPublisher.terms(plain)).doesNotContainKey("seed");
    }

    @Test
    void aParentPublishedWithAllowMissingMembersGivesViewsThatSkipThemAndSaySo() throws Exception {
        publishWithAMissingMember();
        ViewPublisher.Result r = view("t/pets", "t/all", "true", false);
        assertThat(r.rows()).isEqualTo(3);
        assertThat(r.members()).containsEntry("images", 2L);
        Manifest m = catalog.manifest(r.dataset(), r.version());
        assertThat(m.artifacts().get("images").facts())
                .containsEntry(Publisher.MISSING_MEMBERS_FACT, "1 selected value(s) naming no member");
    }

    @Test
    void aParentWhoseRowsNameMissingMembersWithoutSayingSoIsRefusedNamingItsTableFile() throws Exception {
        VersionHash v = publishWithAMissingMember();
        // A version written before publish checked bindings: the same, without the fact.
        Manifest m = catalog.manifest(PETS, v);
        Artifact a = m.artifacts().get("images");
        TreeMap<String, Artifact> artifacts = new TreeMap<>(Map.of("images",
                new Artifact(a.kind(), a.shards(), a.index(), a.memberCount(), a.memberBytes())));
        VersionHash old = catalog.putVersion(Manifest.of(PETS, m.tables(), artifacts, m.bindings(), m.metadata()));
        assertThatThrownBy(() -> view("t/pets@" + old.hex(), "t/dogs", "label = 'dog'", false))
                .isInstanceOf(ViewException.class)
                .hasMessageContaining("1 selected row(s) of table main of t/pets@" + old.shortHex(12))
                .hasMessageContaining("row 2 of a.parquet names 'dog/9.jpg'")
                .hasMessageNotContaining("parent-0");
    }

    @Test
    void aTagThatNamesAnotherVersionStopsAViewBeforeAnyUpload() throws Exception {
        publishWithAMissingMember();
        ViewPublisher.Result cats = view("t/pets", "t/cats", "label = 'cat'", false);
        catalog.tag(DatasetId.parse("t/cats"), "v1", cats.version(), "bob", false);
        int versions = store.list(io.warpdata.store.StoreLayout.versions(DatasetId.parse("t/cats"))).size();
        ViewQuery dogs = new ViewQuery("main", Optional.of("id = 0"), Optional.empty(),
                OptionalLong.empty(), OptionalLong.empty(), Optional.empty(), Optional.empty(), 0);
        assertThatThrownBy(() -> new ViewPublisher(store, catalog, CLOCK, "bob", tmp.resolve("staging"), PublishProgress.NONE)
                .publish(DatasetRef.parse("t/pets"), dogs, new ViewPublisher.Target(DatasetId.parse("t/cats"), false,
                        Optional.empty(), Optional.of("v1"))))
                .isInstanceOfSatisfying(io.warpdata.catalog.RefExistsException.class, e -> assertThat(e.nextStep())
                        // audit 32: it said "re-tag with --force", which view does not take.
                        .contains("Use another --tag", "run the view without --tag", "warpctl tag t/cats@")
                        .contains(" v1 --force"))
                .hasMessageContaining("already names version " + cats.version().shortHex(16));
        assertThat(store.list(io.warpdata.store.StoreLayout.versions(DatasetId.parse("t/cats"))))
                .as("audit 19: no version left that no name points at").hasSize(versions);

        // The tag naming this very view's version is no clash: nothing to do.
        ViewPublisher.Result again = new ViewPublisher(store, catalog, CLOCK, "bob", tmp.resolve("staging"),
                PublishProgress.NONE).publish(DatasetRef.parse("t/pets"), new ViewQuery("main",
                Optional.of("label = 'cat'"), Optional.empty(), OptionalLong.empty(), OptionalLong.empty(),
                Optional.empty(), Optional.empty(), 0), new ViewPublisher.Target(DatasetId.parse("t/cats"), false,
                Optional.empty(), Optional.of("v1")));
        assertThat(again.version()).isEqualTo(cats.version());

        assertThatThrownBy(() -> new ViewPublisher.Target(DatasetId.parse("t/cats"), false, Optional.of("x"),
                Optional.of("x"))).isInstanceOf(io.warpdata.catalog.RefExistsException.class)
                .hasMessageContaining("cannot be both the view's branch and its tag");
    }

    @Test
    void aViewMovesLatestOfANewDatasetButOfAnExistingOneOnlyWithSetLatest() throws Exception {
        VersionHash pets = publishWithAMissingMember();
        ViewPublisher.Result fresh = view("t/pets", "t/cats", "label = 'cat'", false);
        assertThat(catalog.head(DatasetId.parse("t/cats"), null).version()).hasValue(fresh.version());
        assertThat(fresh.latestHint()).isEmpty();

        ViewPublisher.Result onto = view("t/pets", "t/cats", "id = 0", false);
        assertThat(catalog.head(DatasetId.parse("t/cats"), null).version()).hasValue(fresh.version());
        assertThat(onto.latestHint()).hasValueSatisfying(h -> assertThat(h)
                .contains("latest of t/cats not moved (still " + fresh.version().shortHex(12) + ")")
                .contains("warpctl latest t/cats " + onto.version().shortHex(16)));

        ViewPublisher.Result moved = view("t/pets", "t/cats", "id = 1", true);
        assertThat(catalog.head(DatasetId.parse("t/cats"), null).version()).hasValue(moved.version());
        assertThat(catalog.head(PETS, null).version()).hasValue(pets);

        // The same view again, without --set-latest: latest already is it, so no hint that it is not.
        ViewPublisher.Result again = view("t/pets", "t/cats", "id = 1", false);
        assertThat(again.version()).isEqualTo(moved.version());
        assertThat(again.latestHint()).isEmpty();
    }

    /** A blob of the store, as a view or a reader reads it. */
    private byte[] blob(io.warpdata.manifest.BlobRef ref) {
        return store.get(io.warpdata.store.StoreLayout.blob(ref.id()), (int) ref.size());
    }

    @Test
    void aViewOfAParentWithAPartedIndexSelectsFromItsPartsAndIsPartedItselfWhenLarge() throws Exception {
        // A view of half the members that is parted still: more than 2 x PART_MEMBERS (16,384), in 20 folders.
        int n = 34_780;
        assertThat(n / 2).isGreaterThan(io.warpdata.daemon.publish.StagedIndex.PART_MEMBERS);
        for (int i = 0; i < n; i++) {
            Path f = tmp.resolve("files/c" + (i % 20) + "/" + i + ".txt");
            Files.createDirectories(f.getParent());
            Files.writeString(f, "member " + i);
        }
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement()) {
            st.execute("COPY (SELECT i AS id, 'c' || (i % 20) || '/' || i || '.txt' AS path FROM range(" + n + ") t(i)"
                    + " ORDER BY id) TO '" + tmp.resolve("big.parquet") + "' (FORMAT PARQUET)");
        }
        PublishRequest req = new PublishRequest(DatasetId.parse("t/big"), new TreeMap<>(Map.of("main", List.of("big.parquet"))),
                new TreeMap<>(Map.of("files", List.of("files"))),
                List.of(new Binding("main", "path", "files", RefType.FILE)), true, 1 << 20, tmp, Optional.empty(),
                false, false);
        VersionHash parent = new Publisher(store, catalog, CLOCK, "alice", tmp.resolve("staging"), 2, PublishProgress.NONE)
                .publish(req).version();
        Artifact pa = catalog.manifest(DatasetId.parse("t/big"), parent).artifacts().get("files");
        assertThat(io.warpdata.manifest.MemberIndex.isParted(io.warpdata.manifest.IndexBytes.of(blob(pa.index()))))
                .as("the parent's index is parted").isTrue();
        assertThat(catalog.manifest(DatasetId.parse("t/big"), parent).formatVersion())
                .as("so its manifest says format 2, which a warpd that cannot read parts refuses by number").isEqualTo(2);

        ViewPublisher.Result r = view("t/big", "t/even", "id % 2 = 0", false);
        assertThat(r.members()).containsEntry("files", (long) n / 2);
        Artifact va = catalog.manifest(r.dataset(), r.version()).artifacts().get("files");
        io.warpdata.manifest.MemberIndex index = io.warpdata.manifest.MemberIndex.open(
                io.warpdata.manifest.IndexBytes.of(blob(va.index())), "view index",
                part -> io.warpdata.manifest.IndexBytes.of(blob(part)));
        assertThat(io.warpdata.manifest.MemberIndex.isParted(io.warpdata.manifest.IndexBytes.of(blob(va.index()))))
                .as("17,390 members: the view's index is parted too").isTrue();
        assertThat(catalog.manifest(r.dataset(), r.version()).formatVersion()).isEqualTo(2);
        assertThat(index.size()).isEqualTo(n / 2);
        assertThat(index.find("c4/19984.txt")).isNotNegative();
        assertThat(index.find("c3/19983.txt")).isNegative();
        int[] run = index.range("c0");
        assertThat(run[1] - run[0]).isEqualTo(n / 20);
    }
}
