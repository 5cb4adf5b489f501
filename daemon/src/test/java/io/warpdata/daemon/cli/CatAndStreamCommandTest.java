package io.warpdata.daemon.cli;

import io.warpdata.store.InMemoryBlobStore;
import io.warpdata.daemon.publish.TestData;
import io.warpdata.daemon.testing.StoreBlobReader;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code warpctl cat} and {@code warpctl stream} against the source they were published from:
 * Parquet files written by DuckDB (two shards, many row groups, awkward values) and a folder of
 * files. Expected rows come from DuckDB reading the source files directly, never from Warp.
 */
class CatAndStreamCommandTest {
    private static final int ROWS_0 = 25_000;
    private static final int ROWS_1 = 17_000;

    @TempDir
    Path tmp;

    private final InMemoryBlobStore store = new InMemoryBlobStore();
    /** What warpctl is given: the store, which a test may take down. */
    private final io.warpdata.store.FaultStore served = new io.warpdata.store.FaultStore(store);
    private List<String> sources;

    private record Run(int code, byte[] out, String err) {
        String text() {
            return new String(out, StandardCharsets.UTF_8);
        }

        List<String> lines() {
            return text().lines().toList();
        }
    }

    private Run warpctl(Map<String, String> extraEnv, String... args) {
        return warpctl(extraEnv, false, args);
    }

    private Run warpctl(Map<String, String> extraEnv, boolean terminal, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Map<String, String> env = new HashMap<>(Map.of("WARP_REMOTE", "memory://test", "USER", "alice",
                // never a warpd that happens to serve this machine's default socket
                "WARP_SOCKET", tmp.resolve("no-warpd.sock").toString()));
        env.putAll(extraEnv);
        CliContext ctx = new CliContext(env, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), tmp,
                Clock.fixed(Instant.parse("2026-11-22T05:00:00Z"), ZoneOffset.UTC),
                (remote, endpoint) -> served, StoreBlobReader::new, terminal);
        int code = WarpctlCommand.run(args, ctx);
        return new Run(code, out.toByteArray(), err.toString(StandardCharsets.UTF_8));
    }

    private Run warpctl(String... args) {
        return warpctl(Map.of(), args);
    }

    @BeforeEach
    void publish() throws Exception {
        Files.createDirectories(tmp.resolve("data"));
        sources = List.of(tmp.resolve("data/part-0.parquet").toString(), tmp.resolve("data/part-1.parquet").toString());
        String values = "SELECT i::BIGINT AS id, 'name, \"' || i || '\"' AS title,"
                + " CASE WHEN i % 7 = 0 THEN NULL WHEN i % 11 = 0 THEN '' ELSE 'line ' || i END AS note,"
                + " i * 0.25 AS score, [i, i + 1] AS pair, {'k': i % 3, 'v': 'x' || i} AS meta,"
                + " TIMESTAMP '2026-01-01 00:00:00' + INTERVAL (i) SECOND AS at,"
                + " 'cat/' || lpad((i % 20)::VARCHAR, 3, '0') || '.bin' AS path";
        duck("COPY (" + values + " FROM range(0, " + ROWS_0 + ") t(i)) TO '" + sources.get(0)
                + "' (FORMAT PARQUET, ROW_GROUP_SIZE 5000)");
        duck("COPY (" + values + " FROM range(" + ROWS_0 + ", " + (ROWS_0 + ROWS_1) + ") t(i)) TO '" + sources.get(1)
                + "' (FORMAT PARQUET, ROW_GROUP_SIZE 3000)");
        TestData.tree(tmp.resolve("images"), 60, 100, 300_000, 7);
        Run pub = warpctl("publish", "vision/pets", "--table", "main=data/*.parquet", "--artifact", "images=images",
                "--set-latest");
        assertThat(pub.code()).as(pub.err()).isZero();
    }

    /** audit 28: head of a table with no rows said "no row asked", though -n 10 asked for ten. */
    @Test
    void headOfATableWithNoRowsSaysItHoldsNone() throws Exception {
        Path file = tmp.resolve("none/part-0.parquet");
        Files.createDirectories(file.getParent());
        duck("COPY (SELECT i::BIGINT AS id FROM range(0) t(i)) TO '" + file + "' (FORMAT PARQUET)");
        assertThat(warpctl("publish", "vision/none", "--table", "main=none/*.parquet", "--set-latest").code()).isZero();
        Run head = warpctl("head", "vision/none");
        assertThat(head.code()).as(head.err()).isZero();
        assertThat(head.err()).contains("holds no rows").doesNotContain("no row asked");
        assertThat(warpctl("head", "vision/none", "-n", "0").err()).contains("no row asked");
    }

    /** audit 28: head --json read each row through doubles: DECIMAL(38,10) lost digits, 1.100 became 1.1, a HUGEINT 1.0E12. */
    @Test
    void headKeepsDecimalsAndHugeIntegersDigitForDigitAsStreamDoes() throws Exception {
        Path file = tmp.resolve("dec/part-0.parquet");
        Files.createDirectories(file.getParent());
        duck("COPY (SELECT i::BIGINT AS id, (i * 12345678901.123456789 - 5e12)::DECIMAL(38,10) AS dec38,"
                + " (i * 1.1)::DECIMAL(18,3) AS dec18, (i * 1000000000000)::HUGEINT AS huge FROM range(3) t(i)) TO '"
                + file + "' (FORMAT PARQUET)");
        assertThat(warpctl("publish", "vision/dec", "--table", "main=dec/*.parquet", "--set-latest").code()).isZero();

        Run json = warpctl("head", "vision/dec", "-n", "2", "--json");
        Run stream = warpctl("stream", "vision/dec");

        assertThat(json.code()).as(json.err()).isZero();
        assertThat(stream.text()).contains("-4987654321098.8769378304", "1.100");
        String compact = json.text().replaceAll("\\s+", "");
        assertThat(compact).contains("\"dec38\":-4987654321098.8769378304", "\"dec18\":1.100", "\"dec18\":0.000")
                .doesNotContain("E12", "E-");
        com.fasterxml.jackson.databind.ObjectMapper exact = new com.fasterxml.jackson.databind.ObjectMapper()
                .enable(com.fasterxml.jackson.databind.DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
                .setNodeFactory(com.fasterxml.jackson.databind.node.JsonNodeFactory.withExactBigDecimals(true));
        List<com.fasterxml.jackson.databind.JsonNode> streamed = new ArrayList<>();
        for (String line : stream.lines().subList(0, 2)) {
            streamed.add(exact.readTree(line));
        }
        assertThat(exact.readTree(json.text()).path("rows")).containsExactlyElementsOf(streamed);
    }

    @Test
    void headRendersBlobsListsAndStructsAsStreamDoes() throws Exception {
        Path file = tmp.resolve("odd/part-0.parquet");
        Files.createDirectories(file.getParent());
        duck("COPY (SELECT i AS id, ('\\x89PNG' || i::VARCHAR)::BLOB AS bytes, [i, i + 1] AS pair, {'x': i + 0.5} AS point,"
                + " CASE WHEN i = 1 THEN NULL ELSE 'n' || i END AS note FROM range(3) t(i)) TO '" + file + "' (FORMAT PARQUET)");
        assertThat(warpctl("publish", "vision/odd", "--table", "main=odd/*.parquet", "--set-latest").code()).isZero();

        Run json = warpctl("head", "vision/odd", "--json");
        Run text = warpctl("head", "vision/odd");
        Run stream = warpctl("stream", "vision/odd");

        assertThat(json.code()).as(json.err()).isZero();
        com.fasterxml.jackson.databind.ObjectMapper mapper = new com.fasterxml.jackson.databind.ObjectMapper();
        List<com.fasterxml.jackson.databind.JsonNode> streamed = new ArrayList<>();
        for (String line : stream.lines()) {
            streamed.add(mapper.readTree(line));
        }
        com.fasterxml.jackson.databind.JsonNode rows = mapper.readTree(json.text()).path("rows");
        assertThat(rows).as("head --json renders each row as stream does").containsExactlyElementsOf(streamed);
        assertThat(rows.get(0).path("pair").isArray()).isTrue();
        assertThat(rows.get(0).path("point").path("x").asDouble()).isEqualTo(0.5);
        assertThat(rows.get(0).path("bytes").asText()).isEqualTo("\\x89PNG0");
        assertThat(rows.get(1).path("note").isNull()).isTrue();
        assertThat(text.code()).as(text.err()).isZero();
        assertThat(text.text()).contains("\\x89PNG0", "[0, 1]", "{'x': 0.5}", "NULL").doesNotContain("DuckDBBlobResult", "HeapByteBuffer");
    }

    @Test
    void streamJsonlIsEveryRowOfTheSourceInOrder() throws Exception {
        Run r = warpctl("stream", "vision/pets");
        assertThat(r.code()).as(r.err()).isZero();
        List<String> expected = duckLines("SELECT to_json(t)::VARCHAR FROM (SELECT * FROM " + source() + ") t");
        assertThat(expected).hasSize(ROWS_0 + ROWS_1);
        assertThat(r.lines()).containsExactlyElementsOf(expected);
        assertThat(r.lines().get(11)).contains("\"note\":\"\"").contains("\"pair\":[11,12]");
    }

    @Test
    void streamCsvMatchesDuckDbsOwnCsvOfTheSource() throws Exception {
        Path csv = tmp.resolve("expected.csv");
        duck("COPY (SELECT * FROM " + source() + ") TO '" + csv + "' (FORMAT CSV, HEADER)");
        Run r = warpctl("stream", "vision/pets", "--format", "csv", "--batch-size", "100");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.lines()).containsExactlyElementsOf(Files.readAllLines(csv));
        assertThat(r.lines().get(0)).isEqualTo("id,title,note,score,pair,meta,at,path");
    }

    @Test
    void streamColumnsProjectsInTheOrderAsked() throws Exception {
        Run r = warpctl("stream", "vision/pets", "--table", "main", "--columns", "path,id");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.lines()).containsExactlyElementsOf(
                duckLines("SELECT to_json(t)::VARCHAR FROM (SELECT path, id FROM " + source() + ") t"));
        assertThat(r.lines().get(0)).isEqualTo("{\"path\":\"cat/000.bin\",\"id\":0}");

        long[] one = bytesRead(warpctl(Map.of(), true, "stream", "vision/pets", "--columns", "id"));
        long[] every = bytesRead(warpctl(Map.of(), true, "stream", "vision/pets"));
        assertThat(one[1]).isEqualTo(every[1]);
        assertThat(every[0]).as("a full scan reads about every byte").isGreaterThan(every[1] * 8 / 10);
        assertThat(one[0]).as("one column of eight: only its column chunks and the footers are read")
                .isLessThan(every[0] / 3);

        Run bad = warpctl("stream", "vision/pets", "--columns", "id,nope");
        assertThat(bad.code()).isEqualTo(1);
        assertThat(bad.err()).contains("has no column 'nope'").contains("what to do:").contains("title");
    }

    @Test
    void streamColumnsNamesAColumnWithACommaInDoubleQuotes() throws Exception {
        Path file = tmp.resolve("commas/part-0.parquet");
        Files.createDirectories(file.getParent());
        duck("COPY (SELECT i AS id, i * 2 AS \"a,b\", i * 3 AS \"say \"\"hi\"\"\" FROM range(2) t(i)) TO '" + file
                + "' (FORMAT PARQUET)");
        assertThat(warpctl("publish", "vision/commas", "--table", "main=commas/*.parquet", "--set-latest").code()).isZero();

        Run r = warpctl("stream", "vision/commas", "--columns", "\"a,b\",id,\"say \"\"hi\"\"\"");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.lines()).containsExactly("{\"a,b\":0,\"id\":0,\"say \\\"hi\\\"\":0}",
                "{\"a,b\":2,\"id\":1,\"say \\\"hi\\\"\":3}");
        // unquoted, the comma splits: no column 'a'
        Run split = warpctl("stream", "vision/commas", "--columns", "a,b");
        assertThat(split.code()).isEqualTo(1);
        assertThat(split.err()).contains("has no column 'a'")
                .as("audit 28: the hint names them as --columns takes them").contains("\"a,b\"", "\"say \"\"hi\"\"\"");
    }

    @Test
    void streamShardsSplitRowsByRowSplitNeverRoundRobin() throws Exception {
        List<String> all = warpctl("stream", "vision/pets", "--columns", "id").lines();
        assertThat(all).hasSize(ROWS_0 + ROWS_1);
        // Three ranks, two files: one contiguous run of rows each, total*r/3 to total*(r+1)/3.
        List<String> union = new ArrayList<>();
        for (int rank = 0; rank < 3; rank++) {
            Run part = warpctl("stream", "vision/pets", "--columns", "id", "--shard", rank + "/3");
            assertThat(part.code()).as(part.err()).isZero();
            int third = (ROWS_0 + ROWS_1) / 3;
            assertThat(part.lines()).as("rank %d of 3 takes one run of rows", rank)
                    .containsExactlyElementsOf(all.subList(rank * third, (rank + 1) * third));
            union.addAll(part.lines());
        }
        assertThat(union).containsExactlyElementsOf(all);
        // Two ranks, two files of 25000 and 17000 rows: whole files (25000 is within 25% of the 21000 share).
        assertThat(warpctl("stream", "vision/pets", "--columns", "id", "--shard", "0/2").lines())
                .containsExactlyElementsOf(all.subList(0, ROWS_0));
        assertThat(warpctl("stream", "vision/pets", "--columns", "id", "--shard", "1/2").lines())
                .containsExactlyElementsOf(all.subList(ROWS_0, ROWS_0 + ROWS_1));
        Run auto = warpctl(Map.of("RANK", "2", "WORLD_SIZE", "3"), "stream", "vision/pets", "--columns", "id",
                "--shard", "auto");
        assertThat(auto.lines()).containsExactlyElementsOf(warpctl("stream", "vision/pets", "--columns", "id",
                "--shard", "2/3").lines());

        Run bad = warpctl("stream", "vision/pets", "--shard", "3/3");
        assertThat(bad.code()).isEqualTo(2);
        assertThat(bad.err()).contains("--shard 3/3").contains("what to do:");
    }

    @Test
    void catWritesOneMembersBytesExactly() throws Exception {
        for (String member : List.of("d00/f00000.bin", "d05/f00042.bin", "d22/f00022.bin")) {
            Run r = warpctl("cat", "vision/pets", "--artifact", "images", "--ref", member);
            assertThat(r.code()).as(r.err()).isZero();
            assertThat(r.out()).as(member).isEqualTo(Files.readAllBytes(tmp.resolve("images").resolve(member)));
        }
        assertThat(warpctl("cat", "vision/pets", "--artifact", "images", "--ref", "./d05/f00042.bin").out())
                .isEqualTo(Files.readAllBytes(tmp.resolve("images/d05/f00042.bin")));

        Run missing = warpctl("cat", "vision/pets", "--artifact", "images", "--ref", "d05/nope.bin");
        assertThat(missing.code()).isEqualTo(1);
        assertThat(missing.err()).contains("has no member 'd05/nope.bin'").contains("what to do:");
        Run dir = warpctl("cat", "vision/pets", "--artifact", "images", "--ref", "d05");
        assertThat(dir.err()).contains("is a directory");
        Run artifact = warpctl("cat", "vision/pets", "--artifact", "videos", "--ref", "x");
        assertThat(artifact.err()).contains("no artifact 'videos'").contains("[images]");
    }

    @Test
    void tableBatchesAreColumnarAndHoldTheSourcesValues() throws Exception {
        io.warpdata.manifest.Table main = new io.warpdata.catalog.Catalog(store)
                .resolve(io.warpdata.manifest.DatasetRef.parse("vision/pets")).manifest().tables().get("main");
        io.warpdata.daemon.inspect.TableBatches tb = new io.warpdata.daemon.inspect.TableBatches(
                new StoreBlobReader(store), tmp.resolve("mirrors"));
        List<String> got = new ArrayList<>();
        List<Integer> sizes = new ArrayList<>();
        var result = tb.read("main", main, new io.warpdata.daemon.inspect.TableBatches.Query(
                List.of("id", "note", "pair", "meta", "at"), java.util.Optional.empty(), -1, 1000, 0, 1, 0, 1), b -> {
                    sizes.add(b.rows());
                    try {
                        var cols = com.fasterxml.jackson.databind.json.JsonMapper.builder().build().readTree(b.columnsJson());
                        assertThat(cols.fieldNames()).toIterable().containsExactly("id", "note", "pair", "meta", "at");
                        for (int i = 0; i < b.rows(); i++) {
                            got.add(cols.get("id").get(i) + "|" + cols.get("note").get(i) + "|" + cols.get("pair").get(i)
                                    + "|" + cols.get("meta").get(i) + "|" + cols.get("at").get(i).asText());
                        }
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                }, () -> false);
        assertThat(result.rows()).isEqualTo(ROWS_0 + ROWS_1);
        // Batches run across the files: all full but the last.
        assertThat(sizes.subList(0, sizes.size() - 1)).containsOnly(1000);
        // Expected from DuckDB reading the source itself, rendered the same way (JSON for nested, text for timestamps).
        List<String> expected = duckLines("SELECT id::VARCHAR || '|' || coalesce(to_json(note)::VARCHAR, 'null') || '|'"
                + " || to_json(pair)::VARCHAR || '|' || to_json(meta)::VARCHAR || '|' || CAST(\"at\" AS VARCHAR) FROM "
                + source());
        assertThat(got).containsExactlyElementsOf(expected);

        // Filter and limit run in DuckDB; the (rank, worker) split is RowSplit's.
        List<Long> ids = new ArrayList<>();
        tb.read("main", main, new io.warpdata.daemon.inspect.TableBatches.Query(List.of("id"),
                java.util.Optional.of("id % 1000 = 7"), 5, 2, 1, 3, 1, 2), b -> {
                    var m = java.util.regex.Pattern.compile("-?\\d+").matcher(b.columnsJson());
                    while (m.find()) {
                        ids.add(Long.parseLong(m.group()));
                    }
                }, () -> false);
        var range = io.warpdata.daemon.inspect.RowSplit.of(new long[]{ROWS_0, ROWS_1}, 1, 3, 1, 2);
        assertThat(ids).containsExactlyElementsOf(java.util.stream.LongStream.range(range.start(), range.end())
                .filter(i -> i % 1000 == 7).limit(5).boxed().toList());

        // The filter is the client's SQL: it cannot read files.
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> tb.read("main", main,
                new io.warpdata.daemon.inspect.TableBatches.Query(List.of("id"),
                        java.util.Optional.of("(SELECT count(*) FROM read_text('" + sources.get(0) + "')) > 0"), -1, 10,
                        0, 1, 0, 1), b -> { }, () -> false))
                .isInstanceOf(io.warpdata.daemon.inspect.TableBatches.BadFilterException.class)
                .hasMessageContaining("cannot be run");
    }

    /** {read, shard} bytes from stream's summary line ("... (READ / SHARD bytes)"). */
    private static long[] bytesRead(Run r) {
        assertThat(r.code()).as(r.err()).isZero();
        var m = java.util.regex.Pattern.compile("\\((\\d+) / (\\d+) bytes\\)").matcher(r.err());
        assertThat(m.find()).as(r.err()).isTrue();
        return new long[]{Long.parseLong(m.group(1)), Long.parseLong(m.group(2))};
    }

    private String source() {
        return "read_parquet(['" + sources.get(0) + "', '" + sources.get(1) + "'])";
    }

    private static void duck(String sql) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private static List<String> duckLines(String sql) throws Exception {
        List<String> out = new ArrayList<>();
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }

    @Test
    void aStoreThatIsDownSaysThatThisCommandReadsItItself() {
        served.down();
        Run r = warpctl("stream", "vision/pets");
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.err()).contains("error: ").contains("This command reads the store itself")
                .contains("the mount and Python's warpdata serve what warpd has cached");
    }
}
