package io.warpdata.daemon.cli;

import io.warpdata.daemon.testing.StoreBlobReader;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warpdata.store.InMemoryBlobStore;
import io.warpdata.daemon.publish.TestData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class WarpctlCommandTest {
    @TempDir
    Path tmp;

    private final InMemoryBlobStore memory = new InMemoryBlobStore();
    /** What warpctl opens: the in-memory store, or a test's wrapper of it. */
    private io.warpdata.store.BlobStore store = memory;

    private record Run(int code, String out, String err) {
    }

    private Run warpctl(Map<String, String> env, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        CliContext ctx = new CliContext(env, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), tmp,
                Clock.fixed(Instant.parse("2026-11-22T05:00:00Z"), ZoneOffset.UTC),
                (remote, endpoint) -> store, StoreBlobReader::new, false);
        int code = WarpctlCommand.run(args, ctx);
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private Run warpctl(String... args) {
        return warpctl(Map.of("WARP_REMOTE", "memory://test", "USER", "alice",
                // never a warpd that happens to serve this machine's default socket
                "WARP_SOCKET", tmp.resolve("no-warpd.sock").toString()), args);
    }

    /** Audit 46: with --json, a failure that is not Warp's own was printed as plain text. */
    @Test
    void anUnexpectedFailureIsOneJsonObjectWithJson() throws Exception {
        store = null; // a bug's NullPointerException, not a WarpException
        Run r = warpctl("list-remote", "ws/", "--json");
        assertThat(r.code()).isEqualTo(1);
        com.fasterxml.jackson.databind.JsonNode e = new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.err()).get("error");
        assertThat(e.get("type").asText()).as("as warpd says it").isEqualTo("InternalError");
        assertThat(e.get("message").asText()).startsWith("unexpected failure: java.lang.NullPointerException");
        assertThat(e.get("next_step").asText()).contains("--debug");
    }

    @Test
    void unknownOptionIsAUsageError() {
        Run r = warpctl("info", "--frobnicate", "a/b");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("--frobnicate");
    }

    /** audit 32: list-remote of a dataset in a workspace that does not exist said "Nothing is published there". */
    @Test
    void listRemoteOfADatasetInAnUnknownWorkspaceListsTheWorkspaces() throws Exception {
        TestData.parquet(tmp.resolve("data/part-0.parquet"), 10, 100);
        assertThat(warpctl("publish", "vision/pets", "--table", "main=data/*.parquet").code()).isZero();
        Run r = warpctl("list-remote", "nows/x");
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.err()).contains("A version of nows/x is not published", "Existing: vision/.")
                .doesNotContain("Nothing is published there");
    }

    /** audit 32: tag on a file:// store whose directory does not exist said "Nothing is published there". */
    @Test
    void readingCommandsOnAStoreDirectoryThatDoesNotExistSaySo() {
        store = io.warpdata.store.local.LocalBlobStore.open(tmp.resolve("nostore").toUri().toString());
        for (String[] args : List.of(new String[]{"tag", "img/pets", "v1"}, new String[]{"info", "img/pets"},
                new String[]{"latest", "img/pets", "v1"}, new String[]{"list-remote"})) {
            Run r = warpctl(args);
            assertThat(r.code()).as(String.join(" ", args)).isEqualTo(1);
            assertThat(r.err()).as(String.join(" ", args)).contains("The store directory " + tmp.resolve("nostore")
                    + " does not exist").doesNotContain("Nothing is published there");
        }
        assertThat(Files.exists(tmp.resolve("nostore"))).isFalse();
    }

    /** audit 33: 'latest WS/NAME@REF' (as tag and branch take a version) was a bare "Missing required parameter". */
    @Test
    void latestOfDatasetAtRefAloneMovesLatestThere() throws Exception {
        TestData.parquet(tmp.resolve("data/part-0.parquet"), 10, 100);
        Run pub = warpctl("publish", "vision/pets", "--table", "main=data/*.parquet", "--json");
        assertThat(pub.code()).as(pub.err()).isZero();
        String version = new ObjectMapper().readTree(pub.out()).path("version").asText();
        assertThat(warpctl("tag", "vision/pets@" + version.substring(0, 12), "v1").code()).isZero();
        Run moved = warpctl("latest", "vision/pets@v1");
        assertThat(moved.code()).as(moved.err()).isZero();
        assertThat(moved.out()).contains("latest of vision/pets: (none) -> " + version);
        Run none = warpctl("latest", "vision/pets");
        assertThat(none.code()).isEqualTo(2);
        assertThat(none.err()).contains("latest needs the version", "warpctl latest vision/pets REF");
    }

    /** audit 32: the advice for 'latest WS/NAME@X REF' dropped REF and moved latest to X. */
    @Test
    void latestOfADatasetWithARefAdvisesTheRefGiven() {
        Run r = warpctl("latest", "img/pets@dogs", "v2");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("latest takes the dataset without @dogs", "Write: warpctl latest img/pets v2 (",
                "to move it to dogs: warpctl latest img/pets dogs");
    }

    @Test
    void publishWithoutInputsSaysWhatToGiveInTheCommandsWords() {
        Run r = warpctl("publish", "vision/pets");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("error: Nothing to publish: no --table and no --artifact given",
                "warpctl publish vision/pets --table").doesNotContain("argument", "docs/control.md");
    }

    @Test
    void aDatasetWithoutLatestOrWithoutTheNameAskedForSaysWhatItHas() throws Exception {
        TestData.parquet(tmp.resolve("data/part-0.parquet"), 100, 100);
        Run pub = warpctl("publish", "vision/pets", "--table", "main=data/*.parquet", "--json");
        assertThat(pub.code()).as(pub.err()).isZero();
        String version = new ObjectMapper().readTree(pub.out()).path("version").asText();

        Run latest = warpctl("info", "vision/pets");
        Run named = warpctl("info", "vision/pets@v9");

        assertThat(latest.code()).isEqualTo(1);
        assertThat(latest.err()).contains("vision/pets has 1 version(s)", "no latest", "--set-latest",
                "vision/pets@" + version.substring(0, 12)).doesNotContain("is not published");
        assertThat(named.code()).isEqualTo(1);
        assertThat(named.err()).contains("vision/pets has no tag or branch 'v9'", "It has no tags or branches")
                .doesNotContain("is not published", "Nothing is published");
    }

    @Test
    void listingADatasetsVersionsFetchesTheirManifestsSeveralAtATime() throws Exception {
        List<String> published = new java.util.ArrayList<>();
        for (int i = 0; i < 6; i++) {
            TestData.parquet(tmp.resolve("v" + i + "/part-0.parquet"), 10 + i, 100);
            published.add(new ObjectMapper().readTree(warpctl("publish", "vision/many", "--table", "main=v" + i + "/*.parquet",
                    "--json").out()).path("version").asText());
        }
        io.warpdata.store.FaultStore slow = new io.warpdata.store.FaultStore(memory);
        slow.on(io.warpdata.store.FaultStore.Call.GET, io.warpdata.store.FaultStore.Call.GET_IF_CHANGED).under("/versions/")
                .delay(java.time.Duration.ofMillis(50));
        store = slow;
        Run listed;
        try {
            listed = warpctl("list-remote", "vision/many", "--json");
        } finally {
            store = memory;
        }
        assertThat(listed.code()).as(listed.err()).isZero();
        assertThat(new ObjectMapper().readTree(listed.out()).path("versions")).extracting(v -> v.path("version").asText())
                .containsExactlyInAnyOrderElementsOf(published);
        assertThat(Math.max(slow.peakInFlight(io.warpdata.store.FaultStore.Call.GET),
                slow.peakInFlight(io.warpdata.store.FaultStore.Call.GET_IF_CHANGED))).as("manifests fetched at once").isGreaterThan(1);
    }

    @Test
    void deletingATagSaysWhatItNamedAndHowToTagItAgain() throws Exception {
        TestData.parquet(tmp.resolve("a/part-0.parquet"), 100, 100);
        String v = new ObjectMapper().readTree(warpctl("publish", "vision/pets", "--table", "main=a/*.parquet",
                "--set-latest", "--json").out()).path("version").asText();
        assertThat(warpctl("tag", "vision/pets", "v1").code()).isZero();
        Run deleted = warpctl("tag", "--delete", "vision/pets", "v1");
        assertThat(deleted.code()).as(deleted.err()).isZero();
        assertThat(deleted.out()).contains("deleted tag vision/pets@v1 (it named " + v,
                "warpctl tag vision/pets@" + v.substring(0, 16) + " v1");
        // as it says: tagged again
        assertThat(warpctl("tag", "vision/pets@" + v.substring(0, 16), "v1").code()).isZero();
    }

    @Test
    void listRemoteOfNameAtRefListsTheOneVersionItNames() throws Exception {
        TestData.parquet(tmp.resolve("a/part-0.parquet"), 100, 100);
        TestData.parquet(tmp.resolve("b/part-0.parquet"), 200, 100);
        String first = new ObjectMapper().readTree(warpctl("publish", "vision/pets", "--table", "main=a/*.parquet",
                "--set-latest", "--json").out()).path("version").asText();
        assertThat(warpctl("tag", "vision/pets", "v1").code()).isZero();
        String second = new ObjectMapper().readTree(warpctl("publish", "vision/pets", "--table", "main=b/*.parquet",
                "--set-latest", "--json").out()).path("version").asText();

        JsonNode all = new ObjectMapper().readTree(warpctl("list-remote", "vision/pets", "--json").out());
        JsonNode v1 = new ObjectMapper().readTree(warpctl("list-remote", "vision/pets@v1", "--json").out());
        Run text = warpctl("list-remote", "vision/pets@v1");
        Run nope = warpctl("list-remote", "vision/pets@nope");

        assertThat(all.path("versions")).hasSize(2);
        assertThat(v1.path("versions")).hasSize(1);
        assertThat(v1.path("versions").get(0).path("version").asText()).isEqualTo(first);
        assertThat(text.out()).contains(first.substring(0, 12), "v1").doesNotContain(second.substring(0, 12));
        assertThat(nope.code()).isEqualTo(1);
        assertThat(nope.err()).contains("vision/pets has no tag or branch 'nope'", "vision/pets@v1 (tag)");
    }

    @Test
    void aVersionANewerWarpPublishedIsListedNotFatal() throws Exception {
        TestData.parquet(tmp.resolve("a/part-0.parquet"), 100, 100);
        String v1 = new ObjectMapper().readTree(warpctl("publish", "vision/pets", "--table", "main=a/*.parquet",
                "--set-latest", "--json").out()).path("version").asText();
        String key = "datasets/vision/pets/versions/" + v1 + ".json";
        byte[] newer = new String(memory.get(key, 1 << 20), StandardCharsets.UTF_8)
                .replace("\"format_version\":1", "\"format_version\":6").getBytes(StandardCharsets.UTF_8);
        memory.put("datasets/vision/pets/versions/" + "a".repeat(64) + ".json", newer);
        Run r = warpctl("list-remote", "vision/pets");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains(v1.substring(0, 12), "aaaaaaaaaaaa");
        assertThat(r.err()).contains("1 version(s) of vision/pets were published by a newer Warp", "upgrade Warp");
    }

    @Test
    void aWorkspaceOfDatasetsAnOlderWarpNamedIsNotCalledUnpublished() {
        // audit 20: an older Warp published odd/-dash and a 195-character name; this one said
        // "Workspace odd/ is not published ... Existing: odd/".
        memory.put("datasets/odd/-dash/versions/" + "a".repeat(64) + ".json", "{}".getBytes(StandardCharsets.UTF_8));
        memory.put("datasets/odd/" + "n".repeat(195) + "/versions/" + "b".repeat(64) + ".json",
                "{}".getBytes(StandardCharsets.UTF_8));
        memory.put("datasets/odd/Upper/versions/" + "c".repeat(64) + ".json", "{}".getBytes(StandardCharsets.UTF_8));
        memory.put("datasets/odd/-tmp/notes.txt", "made by hand".getBytes(StandardCharsets.UTF_8));
        Run r = warpctl("list-remote", "odd/");
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.err()).contains("holds 2 dataset(s) an older Warp published under names this one refuses",
                "-dash", "nnnnnnnn...", "publish them again under valid names")
                .doesNotContain("Upper", "-tmp", "is not published");
    }

    @Test
    void schemaOfAVersionWithoutTablesIsAnErrorAsHeadAndStreamSayNotAUsageError() throws Exception {
        TestData.tree(tmp.resolve("images"), 3, 100, 200, 1);
        assertThat(warpctl("publish", "vision/raw", "--artifact", "images=images", "--set-latest").code()).isZero();

        Run schema = warpctl("schema", "vision/raw");
        Run head = warpctl("head", "vision/raw");

        Run stream = warpctl("stream", "vision/raw");

        // the command line is right; the version holds no table: a failure (1), not a usage error (2)
        assertThat(schema.code()).isEqualTo(head.code()).isEqualTo(stream.code()).isEqualTo(1);
        assertThat(schema.err()).contains("has no tables", "warpctl inspect vision/raw");
        assertThat(schema.out()).isEmpty();
    }

    @Test
    void viewRefusesBadOptionsWithoutOpeningTheStore() {
        for (String[] bad : List.of(new String[] {"--sample", "0"}, new String[] {"--limit", "0"},
                new String[] {"--sample", "5", "--fraction", "0.5"}, new String[] {"--stratify-by", "label"})) {
            List<String> args = new java.util.ArrayList<>(List.of("view", "vision/pets", "--as", "vision/some"));
            args.addAll(List.of(bad));
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            CliContext ctx = new CliContext(Map.of("WARP_REMOTE", "memory://test", "WARP_SOCKET", tmp.resolve("no-warpd.sock").toString()), new PrintStream(new ByteArrayOutputStream()),
                    new PrintStream(err, true, StandardCharsets.UTF_8), tmp, Clock.systemUTC(),
                    (remote, endpoint) -> {
                        throw new AssertionError("the store was opened to refuse " + args);
                    }, StoreBlobReader::new, false);

            int code = WarpctlCommand.run(args.toArray(String[]::new), ctx);

            assertThat(code).as(String.join(" ", args) + ": a usage error").isEqualTo(2);
            assertThat(err.toString(StandardCharsets.UTF_8)).as(String.join(" ", args)).startsWith("error: --")
                    .doesNotContain("AssertionError", "unexpected failure");
        }
    }

    @Test
    void malformedOptionsOfPublishAndViewAreUsageErrors() {
        // Exit 2 as the README says of usage errors (they gave 1, after asking warpd).
        for (String[] args : new String[][] {
                {"publish", "vision/pets", "--table", "/data/x.parquet"},
                {"publish", "vision/pets", "--artifact", "images=imgs", "--bind", "main.path=images:imag"},
                {"view", "vision/pets", "--as", "vision/small", "--sample", "10", "--fraction", "0.1"},
                {"view", "vision/pets", "--as", "vision/small", "--limit", "0"},
                {"warm", "vision/pets", "--shards", "5:2"}}) {
            Run r = warpctl(args);
            assertThat(r.code()).as(String.join(" ", args) + ": " + r.err()).isEqualTo(2);
            assertThat(r.err()).contains("what to do:");
        }
    }

    @Test
    void missingRemoteIsAUsageErrorSayingWhatToSet() {
        Run r = warpctl(Map.of(), "info", "vision/pets");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("error: No store given").contains("what to do:").contains("WARP_REMOTE");
    }

    @Test
    void badInputIsReportedWithoutStackTraceAndExitsOne() throws Exception {
        Files.writeString(tmp.resolve("notes.parquet"), "not parquet");
        Run r = warpctl("publish", "vision/pets", "--table", "main=notes.parquet");
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.err()).startsWith("error: Table file").contains("notes.parquet").contains("  what to do: ")
                .doesNotContain("\tat ");
        assertThat(memory.objects()).isEmpty();
        Run debug = warpctl("publish", "--debug", "vision/pets", "--table", "main=notes.parquet");
        assertThat(debug.err()).contains("\tat ");
    }

    @Test
    void publishThenInfoSchemaAndHeadShowTheVersion() throws Exception {
        TestData.parquet(tmp.resolve("data/part-0.parquet"), 20_000, 2_000);
        TestData.tree(tmp.resolve("images"), 50, 100, 2000, 1);
        Run pub = warpctl("publish", "vision/pets", "--table", "main=data/*.parquet", "--artifact", "images=images",
                "--bind", "main.path=images:image", "--set-latest", "--allow-missing-members", "--json");
        assertThat(pub.code()).as(pub.err()).isZero();
        JsonNode result = new ObjectMapper().readTree(pub.out());
        String version = result.get("version").asText();
        assertThat(result.get("rows").asLong()).isEqualTo(20_000);

        Run again = warpctl("publish", "vision/pets", "--table", "main=data/*.parquet", "--artifact", "images=images",
                "--bind", "main.path=images:image", "--allow-missing-members");
        assertThat(again.out()).contains(version).contains("uploaded 0 blob(s)");

        Run info = warpctl("info", "vision/pets");
        assertThat(info.code()).as(info.err()).isZero();
        assertThat(info.out()).contains(version).contains("main").contains("20000").contains("images")
                .contains("main.path").contains("alice");
        // Published with --allow-missing-members: no row names one of the 50 members, and the facts say so.
        assertThat(warpctl("inspect", "vision/pets").out())
                .contains("missing_members: 20000 of 20000 row(s) of main.path");

        Run schema = warpctl("schema", "vision/pets@" + version.substring(0, 12));
        assertThat(schema.out()).containsPattern("id\\s+BIGINT").containsPattern("path\\s+VARCHAR");

        Run head = warpctl("head", "vision/pets", "-n", "3");
        assertThat(head.code()).as(head.err()).isZero();
        assertThat(head.out().lines().toList()).hasSize(5);
        assertThat(head.out()).contains("img/00000.png").contains("img/00002.png").doesNotContain("img/00003.png");
        assertThat(head.err()).contains("table main: 3 row(s) from 1 shard(s) of ", "; DuckDB read ",
                " fetched from the store").doesNotContain(" / ");

        Run headJson = warpctl("head", "vision/pets", "-n", "2", "--json");
        JsonNode h = new ObjectMapper().readTree(headJson.out());
        assertThat(h.get("rows")).hasSize(2);
        assertThat(h.get("rows").get(1).get("id").asLong()).isEqualTo(1);
        System.out.printf("head -n 2: read %d of %d bytes%n", h.get("bytes_read").asLong(), h.get("shard_bytes").asLong());
        assertThat(h.get("bytes_read").asLong()).isLessThan(h.get("shard_bytes").asLong() / 2);

        Run list = warpctl("list-remote", "vision/");
        assertThat(list.out()).contains("vision/pets").contains(version.substring(0, 12));
        // a workspace nothing is published in (a typo) is not an empty table
        Run typo = warpctl("list-remote", "visoin/");
        assertThat(typo.code()).isEqualTo(1);
        assertThat(typo.out()).isEmpty();
        assertThat(typo.err()).contains("Workspace visoin/ is not published", "vision/");
        Run inspect = warpctl("inspect", "vision/pets", "--json");
        assertThat(new ObjectMapper().readTree(inspect.out()).at("/artifacts/images/members").asLong()).isEqualTo(50);
    }

    @Test
    void unknownTableIsTypedError() throws Exception {
        TestData.parquet(tmp.resolve("data/part-0.parquet"), 10, 10);
        assertThat(warpctl("publish", "vision/pets", "--table", "main=data/*.parquet", "--set-latest").code()).isZero();
        Run r = warpctl("schema", "vision/pets", "--table", "nope");
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.err()).contains("no table 'nope'").contains("[main]");
    }

    @Test
    void headAndSchemaDefaultToTheMainTableOverOnesSortedBeforeIt() throws Exception {
        TestData.parquet(tmp.resolve("main/part-0.parquet"), 30, 10);
        Files.createDirectories(tmp.resolve("aux"));
        try (var c = java.sql.DriverManager.getConnection("jdbc:duckdb:");
             var s = c.createStatement()) {
            s.execute("COPY (SELECT 'x' || i AS aux_only FROM range(5) t(i)) TO '"
                    + tmp.resolve("aux/part-0.parquet") + "' (FORMAT PARQUET)");
        }
        Run pub = warpctl("publish", "vision/pets", "--table", "aaa=aux/*.parquet", "--table", "main=main/*.parquet",
                "--set-latest");
        assertThat(pub.code()).as(pub.err()).isZero();

        Run head = warpctl("head", "vision/pets", "-n", "2", "--json");
        assertThat(head.code()).as(head.err()).isZero();
        JsonNode h = new ObjectMapper().readTree(head.out());
        assertThat(h.get("table").asText()).isEqualTo("main");
        assertThat(h.get("columns").toString()).contains("id").doesNotContain("aux_only");

        Run headAux = warpctl("head", "vision/pets", "--table", "aaa", "-n", "1", "--json");
        assertThat(new ObjectMapper().readTree(headAux.out()).get("table").asText()).isEqualTo("aaa");

        Run schema = warpctl("schema", "vision/pets");
        assertThat(schema.code()).as(schema.err()).isZero();
        assertThat(schema.out()).startsWith("table main").containsPattern("id\\s+BIGINT").doesNotContain("aux_only");
        JsonNode schemaJson = new ObjectMapper().readTree(warpctl("schema", "vision/pets", "--json").out());
        assertThat(schemaJson.fieldNames()).toIterable().containsExactly("main");

        Run all = warpctl("schema", "vision/pets", "--all");
        assertThat(all.out()).contains("aaa:").contains("main:").contains("aux_only");
    }
}
