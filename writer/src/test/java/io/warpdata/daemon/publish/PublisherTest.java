package io.warpdata.daemon.publish;

import io.warpdata.store.BlobStore;
import io.warpdata.catalog.Catalog;
import io.warpdata.manifest.VersionHash;
import java.util.Optional;
import io.warpdata.store.FaultStore;
import io.warpdata.store.InMemoryBlobStore;
import io.warpdata.store.StoreException;
import io.warpdata.store.StoreLayout;
import io.warpdata.manifest.Binding;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.Manifest;
import io.warpdata.manifest.ManifestCodec;
import io.warpdata.manifest.RefType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PublisherTest {
    private static final DatasetId ID = new DatasetId("vision", "pets");
    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-22T05:00:00Z"), ZoneOffset.UTC);

    @TempDir
    Path tmp;

    private final InMemoryBlobStore store = new InMemoryBlobStore();

    private Publisher publisher(BlobStore s) {
        return new Publisher(s, new Catalog(s), CLOCK, "alice", tmp.resolve("staging"), 4, PublishProgress.NONE);
    }

    private PublishRequest request(Map<String, List<String>> tables, Map<String, List<String>> artifacts,
                                   List<Binding> bindings) {
        return new PublishRequest(ID, new TreeMap<>(tables), new TreeMap<>(artifacts), bindings, true, 64 * 1024, tmp);
    }

    private PublishRequest goodRequest() throws Exception {
        TestData.parquet(tmp.resolve("data/part-0.parquet"), 500, 100);
        TestData.parquet(tmp.resolve("data/part-1.parquet"), 300, 100);
        // part-0 names img/00000-00499.png, part-1 img/00000-00299.png: 500 members
        TestData.boundFiles(tmp.resolve("images"), 500, 100, 3000, 7);
        return request(Map.of("main", List.of("data/*.parquet")), Map.of("images", List.of("images")),
                List.of(new Binding("main", "path", "images", RefType.IMAGE)));
    }

    /** A full staging disk said "unexpected failure: UncheckedIOException"; the cause was only in warpd's log. */
    @Test
    void aStagingDiskThatFillsUpIsATypedErrorSayingWhereAndNothingIsPublished() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(io.warpdata.daemon.control.ProcessIdentity.uid() == 0,
                "mounts a small tmpfs: root only");
        PublishRequest req = goodRequest();
        Path small = Files.createDirectories(tmp.resolve("small"));
        assertThat(new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", small.toString())
                .inheritIO().start().waitFor()).isZero();
        try {
            Publisher p = new Publisher(store, new Catalog(store), CLOCK, "alice", small, 4, PublishProgress.NONE);
            assertThatThrownBy(() -> p.publish(req)).isInstanceOf(StagingFullException.class)
                    .hasMessageContaining("artifact 'images'").hasMessageContaining(small.toString())
                    .hasMessageContaining("is full").hasMessageContaining("nothing was published")
                    .satisfies(e -> assertThat(((StagingFullException) e).nextStep()).contains("--staging-dir"));
            assertThat(store.objects()).as("nothing uploaded").isEmpty();
            try (var left = Files.list(small)) {
                assertThat(left).as("its staging folder removed").isEmpty();
            }
        } finally {
            new ProcessBuilder("umount", small.toString()).inheritIO().start().waitFor();
        }
    }

    @Test
    void publishingAgainRepairsAManifestDamagedInTheStoreAndLeavesAGoodOneAlone() throws Exception {
        PublishResult first = publisher(store).publish(goodRequest());
        String key = StoreLayout.version(ID, first.version());
        byte[] good = store.objects().get(key).clone();

        PublishResult again = publisher(store).publish(goodRequest());
        assertThat(again.manifestWritten()).isFalse();
        assertThat(again.notes()).as("a good copy is left alone").isEmpty();
        assertThat(store.objects().get(key)).isEqualTo(good);

        // What a reader then reports as ManifestCorrupted: a byte changed in the store's copy.
        byte[] damaged = good.clone();
        int at = new String(damaged, StandardCharsets.UTF_8).indexOf("part-1.parquet");
        damaged[at] = 'P';
        store.put(key, damaged);
        assertThatThrownBy(() -> new Catalog(store).manifest(ID, first.version()))
                .isInstanceOf(io.warpdata.manifest.ManifestCorruptedException.class);

        PublishResult repair = publisher(store).publish(goodRequest());
        assertThat(repair.version()).isEqualTo(first.version());
        assertThat(repair.notes()).singleElement().asString().contains("failed verification", "written again");
        assertThat(ManifestCodec.version(new Catalog(store).manifest(ID, first.version()))).isEqualTo(first.version());
    }

    @Test
    void publishWritesBlobsThenManifestThenLatestInTheDesignLayout() throws Exception {
        PublishResult r = publisher(store).publish(goodRequest());
        assertThat(r.rows()).isEqualTo(800);
        assertThat(r.members()).isEqualTo(500);
        assertThat(r.tableFiles()).isEqualTo(2);
        assertThat(store.objects().keySet()).allMatch(k -> k.matches("blobs/sha256/[0-9a-f]{2}/[0-9a-f]{64}")
                || k.equals(StoreLayout.version(ID, r.version())) || k.equals(StoreLayout.latest(ID)));
        byte[] json = store.objects().get(StoreLayout.version(ID, r.version()));
        Manifest m = ManifestCodec.fromJson(json, "test");
        assertThat(ManifestCodec.version(m)).isEqualTo(r.version());
        assertThat(m.tables().get("main").shards()).extracting(s -> s.name())
                .containsExactly("part-0.parquet", "part-1.parquet");
        assertThat(m.metadata()).containsEntry("creator", "alice").containsEntry("created_at", "2026-11-22T05:00:00Z");
        // Every blob the manifest names, and its block hash list, is in the store.
        m.tables().get("main").shards().forEach(s -> {
            assertThat(store.objects()).containsKey(StoreLayout.blob(s.blob().id()));
            assertThat(store.objects()).containsKey(StoreLayout.blob(s.blob().blocks()));
        });
        m.artifacts().get("images").shards().forEach(b -> assertThat(store.objects()).containsKey(StoreLayout.blob(b.id())));
        assertThat(store.objects()).containsKey(StoreLayout.blob(m.artifacts().get("images").index().id()));
        String text = new String(json, StandardCharsets.UTF_8);
        assertThat(text).doesNotContain(tmp.toString()).doesNotContain("file:");
        assertThat(new String(store.objects().get(StoreLayout.latest(ID)), StandardCharsets.UTF_8))
                .contains(r.version().hex());
        assertThat(Files.list(tmp.resolve("staging"))).as("staging is cleaned up").isEmpty();
    }

    @Test
    void aPublishStoppedAtACheckpointWritesNoManifestAndMovesNoPointer() throws Exception {
        // warpd's checkpoint throws once the client is gone (Ctrl-C on warpctl publish): the
        // publish then stops before the step it names, and a later run reuses what was uploaded.
        PublishRequest req = goodRequest();
        java.util.List<String> asked = new java.util.concurrent.CopyOnWriteArrayList<>();
        PublishProgress gone = new PublishProgress() {
            @Override
            public void checkpoint(String next) {
                asked.add(next);
                if (next.startsWith("write the manifest")) {
                    throw new IllegalStateException("the client went away");
                }
            }
        };
        assertThatThrownBy(() -> new Publisher(store, new Catalog(store), CLOCK, "alice", tmp.resolve("staging"), 4, gone)
                .publish(req)).hasMessageContaining("went away");
        assertThat(asked).contains("upload its next blob").last().asString().startsWith("write the manifest");
        assertThat(store.objects().keySet()).as("blobs only").allMatch(k -> k.startsWith("blobs/"));
        assertThat(store.objects()).doesNotContainKey(StoreLayout.latest(ID));

        PublishResult again = publisher(store).publish(req);
        assertThat(again.blobsUploaded()).as("what the stopped run uploaded is reused").isZero();
        assertThat(again.manifestWritten()).isTrue();
    }

    @Test
    void republishingSameInputUploadsNothingAndGivesSameHash() throws Exception {
        PublishRequest req = goodRequest();
        PublishResult first = publisher(store).publish(req);
        long puts = store.puts.get();
        PublishResult second = new Publisher(store, new Catalog(store), Clock.offset(CLOCK, java.time.Duration.ofHours(1)), "bob",
                tmp.resolve("staging"), 4, PublishProgress.NONE).publish(req);
        assertThat(second.version()).isEqualTo(first.version());
        assertThat(second.bytesUploaded()).isZero();
        assertThat(second.blobsUploaded()).isZero();
        assertThat(second.bytesSkipped()).isEqualTo(first.bytesUploaded());
        assertThat(second.manifestWritten()).isFalse();
        // latest already points at this version: not even the pointer is rewritten.
        assertThat(store.puts.get()).isEqualTo(puts);

        // Again without --set-latest: latest already names it, so no advice to point it there (audit 21).
        PublishRequest noLatest = new PublishRequest(ID, req.tables(), req.artifacts(), req.bindings(), false,
                req.shardSize(), tmp);
        PublishResult third = publisher(store).publish(noLatest);
        assertThat(third.version()).isEqualTo(first.version());
        assertThat(third.summary()).doesNotContain("not moved");
    }

    @Test
    void aBranchNameATagHoldsStopsPublishBeforeAnyUpload() throws Exception {
        PublishRequest first = goodRequest();
        VersionHash v1 = publisher(store).publish(first).version();
        Catalog catalog = new Catalog(store);
        catalog.tag(ID, "v1", v1, "alice", false);
        int objects = store.objects().size();
        TestData.parquet(tmp.resolve("data/part-2.parquet"), 10, 100);
        PublishRequest onTag = new PublishRequest(ID, first.tables(), first.artifacts(), first.bindings(), false,
                first.shardSize(), tmp, Optional.of("v1"));
        // audit 19: the clash was found after the upload, leaving a version no name pointed at.
        assertThatThrownBy(() -> publisher(store).publish(onTag))
                .isInstanceOf(io.warpdata.catalog.RefExistsException.class)
                .hasMessageContaining(ID + "@v1 is a tag, so it cannot be a branch too");
        assertThat(store.objects()).as("nothing uploaded, no version written").hasSize(objects);
    }

    @Test
    void nonParquetTableFileStopsPublishBeforeAnyUpload() throws Exception {
        PublishRequest good = goodRequest();
        Files.writeString(tmp.resolve("data/part-2.parquet"), "id,path\n1,x\n");
        assertThatThrownBy(() -> publisher(store).publish(good))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("part-2.parquet");
        assertThat(store.objects()).isEmpty();
    }

    @Test
    void missingArtifactDirectoryStopsPublishBeforeAnyUpload() throws Exception {
        TestData.parquet(tmp.resolve("data/part-0.parquet"), 10, 100);
        PublishRequest req = request(Map.of("main", List.of("data/*.parquet")), Map.of("images", List.of("no-such-dir")),
                List.of());
        assertThatThrownBy(() -> publisher(store).publish(req))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("no-such-dir");
        assertThat(store.objects()).isEmpty();
    }

    /** audit 27: --artifact files=a --artifact files=b said only "mixes a directory ... with other inputs". */
    @Test
    void oneArtifactNameGivenTwoDirectoriesAsksWhetherTheNameWasGivenTwice() throws Exception {
        TestData.parquet(tmp.resolve("data/part-0.parquet"), 10, 100);
        Files.createDirectories(tmp.resolve("a"));
        Files.createDirectories(tmp.resolve("b"));
        Files.writeString(tmp.resolve("a/x.txt"), "x");
        Files.writeString(tmp.resolve("b/y.txt"), "y");
        PublishRequest req = request(Map.of("main", List.of("data/*.parquet")), Map.of("files", List.of("a", "b")), List.of());
        assertThatThrownBy(() -> publisher(store).publish(req))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("was --artifact files=... given more than once?")
                .satisfies(e -> assertThat(((InvalidInputException) e).nextStep()).contains("its own name"));
        assertThat(store.objects()).isEmpty();
    }

    /**
     * An artifact with no file in it is refused, as an empty tar is: an empty folder, and a tar
     * written by Python's tarfile that holds only a folder entry (both published 0 members).
     */
    @Test
    void anArtifactWithNoFileIsRefusedBeforeAnyUpload() throws Exception {
        TestData.parquet(tmp.resolve("data/part-0.parquet"), 10, 100);
        Files.createDirectories(tmp.resolve("empty/sub"));
        PublishRequest empty = request(Map.of("main", List.of("data/*.parquet")), Map.of("images", List.of("empty")),
                List.of());
        List<String> phases = new ArrayList<>();
        Publisher saying = new Publisher(store, new Catalog(store), CLOCK, "alice", tmp.resolve("staging"), 4,
                new PublishProgress() {
                    @Override
                    public void start(String task, long totalBytes) {
                        phases.add(task);
                    }
                });
        assertThatThrownBy(() -> saying.publish(empty)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("Artifact 'images' holds no file");
        assertThat(phases).as("nothing is packed first (audit 21: 'pack images (0 bytes)')").doesNotContain("pack images");
        Path tar = tmp.resolve("dirs-only.tar");
        Process p = new ProcessBuilder("/usr/bin/python3", "-c", "import tarfile, sys\n"
                + "with tarfile.open(sys.argv[1], 'w') as t:\n"
                + "    ti = tarfile.TarInfo('d'); ti.type = tarfile.DIRTYPE; t.addfile(ti)\n", tar.toString())
                .redirectErrorStream(true).start();
        assertThat(p.waitFor()).isZero();
        PublishRequest dirsOnly = request(Map.of("main", List.of("data/*.parquet")),
                Map.of("images", List.of(tar.toString())), List.of());
        assertThatThrownBy(() -> publisher(store).publish(dirsOnly)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("holds no file");
        assertThat(store.objects()).isEmpty();
    }

    @Test
    void hostileArtifactEntryStopsPublishBeforeAnyUpload() throws Exception {
        PublishRequest good = goodRequest();
        Files.writeString(tmp.resolve("outside.txt"), "secret");
        Files.createSymbolicLink(tmp.resolve("images/img/escape.bin"), tmp.resolve("outside.txt"));
        assertThatThrownBy(() -> publisher(store).publish(good))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("escape.bin");
        assertThat(store.objects()).isEmpty();
    }

    @Test
    void hostileTarMemberStopsPublishBeforeAnyUpload() throws Exception {
        TestData.parquet(tmp.resolve("data/part-0.parquet"), 10, 100);
        Files.createDirectories(tmp.resolve("shards"));
        TarShardIndexerTest.tar(tmp.resolve("shards/000.tar"), "a/1.jpg", "x");
        TarShardIndexerTest.tar(tmp.resolve("shards/001.tar"), "../../etc/cron.d/evil", "x");
        PublishRequest req = request(Map.of("main", List.of("data/*.parquet")),
                Map.of("images", List.of("shards/*.tar")), List.of());
        assertThatThrownBy(() -> publisher(store).publish(req))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("001.tar")
                .hasMessageContaining("../../etc/cron.d/evil");
        assertThat(store.objects()).isEmpty();
    }

    @Test
    void existingTarShardsArePublishedAsTheyAre() throws Exception {
        TestData.parquet(tmp.resolve("data/part-0.parquet"), 10, 100);
        Files.createDirectories(tmp.resolve("shards"));
        Path t0 = TarShardIndexerTest.tar(tmp.resolve("shards/000.tar"), "a/1.jpg", "one", "a/1.cls", "1");
        Path t1 = TarShardIndexerTest.tar(tmp.resolve("shards/001.tar"), "b/2.jpg", "two", "b/2.cls", "2");
        PublishResult r = publisher(store).publish(request(Map.of("main", List.of("data/*.parquet")),
                Map.of("images", List.of("shards/*.tar")), List.of()));
        Manifest m = ManifestCodec.fromJson(store.objects().get(StoreLayout.version(ID, r.version())), "test");
        assertThat(m.artifacts().get("images").kind()).isEqualTo(io.warpdata.manifest.ArtifactKind.WEBDATASET_SHARDS);
        assertThat(m.artifacts().get("images").memberCount()).isEqualTo(4);
        assertThat(store.objects().get(StoreLayout.blob(m.artifacts().get("images").shards().get(1).id())))
                .isEqualTo(Files.readAllBytes(t1));
        assertThat(m.artifacts().get("images").shards().get(0).size()).isEqualTo(Files.size(t0));
        // Their file names too, so that the mount shows them as images.tars/000.tar: format 3.
        assertThat(m.artifacts().get("images").shardNames()).containsExactly("000.tar", "001.tar");
        assertThat(m.formatVersion()).isEqualTo(3);
    }

    @Test
    void tarShardsWhoseFolderOfFilesATableIsNamedKeepTheirMembersOnly() throws Exception {
        TestData.parquet(tmp.resolve("data/part-0.parquet"), 10, 100);
        Files.createDirectories(tmp.resolve("shards"));
        TarShardIndexerTest.tar(tmp.resolve("shards/000.tar"), "a/1.jpg", "one");
        List<String> notes = new ArrayList<>();
        PublishProgress listening = new PublishProgress() {
            @Override
            public void note(String text) {
                notes.add(text);
            }
        };
        PublishResult r = new Publisher(store, new Catalog(store), CLOCK, "alice", tmp.resolve("staging"), 4, listening)
                .publish(request(Map.of("images.tars", List.of("data/*.parquet")),
                        Map.of("images", List.of("shards/*.tar")), List.of()));
        Manifest m = ManifestCodec.fromJson(store.objects().get(StoreLayout.version(ID, r.version())), "test");
        assertThat(m.artifacts().get("images").shardNames()).isEmpty();
        assertThat(m.artifacts().get("images").memberCount()).isEqualTo(1);
        assertThat(m.formatVersion()).as("readable by every Warp").isEqualTo(1);
        assertThat(notes).as("said once, in the result, not also as progress (audit 32: printed twice)")
                .noneSatisfy(n -> assertThat(n).contains("'images.tars' is the name of a table"));
        assertThat(r.notes()).as("in the result, not only on stderr (audit 25)")
                .anySatisfy(n -> assertThat(n).contains("'images.tars' is the name of a table", "its members are, in images/"));
    }

    @Test
    void bindingToAMissingColumnIsRefused() throws Exception {
        goodRequest();
        PublishRequest req = request(Map.of("main", List.of("data/*.parquet")), Map.of("images", List.of("images")),
                List.of(new Binding("main", "image_path", "images", RefType.IMAGE)));
        assertThatThrownBy(() -> publisher(store).publish(req))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("no column 'image_path'")
                .satisfies(e -> assertThat(((InvalidInputException) e).nextStep()).contains("path"));
        assertThat(store.objects()).isEmpty();
    }

    /** {@code a.parquet} by DuckDB naming two members, one missing file, one folder and a null; the folder cat/. */
    private PublishRequest boundRequest(boolean allowMissing) throws Exception {
        Files.createDirectories(tmp.resolve("images/cat"));
        Files.writeString(tmp.resolve("images/cat/1.jpg"), "one");
        Files.writeString(tmp.resolve("images/cat/2.jpg"), "two");
        try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:duckdb:");
             java.sql.Statement st = c.createStatement()) {
            st.execute("COPY (SELECT * FROM (VALUES (0, 'cat/1.jpg'), (1, 'cat/2.jpg'), (2, 'dog/9.jpg'), (3, 'cat'),"
                    + " (4, NULL)) v(id, path) ORDER BY id) TO '" + tmp.resolve("a.parquet") + "' (FORMAT PARQUET)");
        }
        return new PublishRequest(ID, new TreeMap<>(Map.of("main", List.of("a.parquet"))),
                new TreeMap<>(Map.of("images", List.of("images"))),
                List.of(new Binding("main", "path", "images", RefType.IMAGE)), true, 64 * 1024, tmp, java.util.Optional.empty(),
                false, allowMissing);
    }

    @Test
    void boundValuesNamingNoMemberOrAFolderAreRefusedNamingTheFileRowValueAndCount() throws Exception {
        PublishRequest req = boundRequest(false);
        assertThatThrownBy(() -> publisher(store).publish(req))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("2 of 5 row(s) name no member of artifact 'images'")
                .hasMessageContaining("row 2 of " + tmp.resolve("a.parquet") + " names 'dog/9.jpg'")
                .hasMessageContaining("row 3 of " + tmp.resolve("a.parquet") + " names 'cat'")
                .hasMessageContaining("'cat' is a folder of the artifact, not a member")
                .satisfies(e -> assertThat(((InvalidInputException) e).nextStep()).contains("--allow-missing-members"));
        assertThat(store.objects()).isEmpty();
    }

    @Test
    void boundValuesSpelledAsTheMountResolvesThemAreMembers() throws Exception {
        Files.createDirectories(tmp.resolve("images/cat"));
        Files.writeString(tmp.resolve("images/cat/1.jpg"), "one");
        try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:duckdb:");
             java.sql.Statement st = c.createStatement()) {
            st.execute("COPY (SELECT * FROM (VALUES (0, '/cat/1.jpg'), (1, './cat/1.jpg'), (2, 'cat//1.jpg'),"
                    + " (3, 'cat/./1.jpg'), (4, '../cat/1.jpg')) v(id, path) ORDER BY id) TO '" + tmp.resolve("a.parquet")
                    + "' (FORMAT PARQUET)");
        }
        PublishRequest req = new PublishRequest(ID, new TreeMap<>(Map.of("main", List.of("a.parquet"))),
                new TreeMap<>(Map.of("images", List.of("images"))),
                List.of(new Binding("main", "path", "images", RefType.IMAGE)), true, 64 * 1024, tmp,
                java.util.Optional.empty(), false, false);
        // Only '..' is not a spelling of cat/1.jpg: the mount does not resolve it inside the artifact.
        assertThatThrownBy(() -> publisher(store).publish(req))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("1 of 5 row(s) name no member of artifact 'images'")
                .hasMessageContaining("row 4 of " + tmp.resolve("a.parquet") + " names '../cat/1.jpg'");
    }

    @Test
    void allowMissingMembersPublishesAndRecordsTheCountInTheArtifactsFacts() throws Exception {
        PublishResult r = publisher(store).publish(boundRequest(true));
        Manifest m = ManifestCodec.fromJson(store.objects().get(StoreLayout.version(ID, r.version())), "test");
        assertThat(m.artifacts().get("images").facts())
                .containsEntry(Publisher.MISSING_MEMBERS_FACT, "2 of 5 row(s) of main.path");
        assertThat(r.members()).isEqualTo(2);
    }

    @Test
    void bindingSyntaxIsChecked() {
        assertThat(PublishRequest.parseBinding("main.path=images:image"))
                .isEqualTo(new Binding("main", "path", "images", RefType.IMAGE));
        assertThatThrownBy(() -> PublishRequest.parseBinding("main=images:image"))
                .isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> PublishRequest.parseBinding("main.path=images:pdf"))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("pdf");
    }

    @Test
    void failedUploadLeavesNoManifestAndNoLatest() throws Exception {
        PublishRequest req = goodRequest();
        // Lets 3 uploads through, then fails every upload.
        FaultStore failing = new FaultStore(store);
        failing.on(FaultStore.Call.PUT).skip(3).fail(FaultStore.Fault.OTHER);
        assertThatThrownBy(() -> publisher(failing).publish(req)).isInstanceOf(StoreException.class);
        assertThat(store.objects().keySet()).allMatch(k -> k.startsWith("blobs/"));
        // The next publish reuses what got through and completes.
        PublishResult r = publisher(store).publish(req);
        assertThat(r.blobsSkipped()).isGreaterThan(0);
        assertThat(store.objects()).containsKey(StoreLayout.latest(ID));
    }
}
