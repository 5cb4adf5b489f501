package io.warpdata.daemon.view;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Views over Parquet written by DuckDB itself (not by Warp): selection, sampling, determinism, errors. */
class ViewSelectorTest {
    private static final List<String> COLUMNS = List.of("id", "path", "label", "score");

    @TempDir
    Path dir;

    private final ViewSelector selector = new ViewSelector();
    private List<Path> files;

    /** 2 files, 1,000 rows: 50 labels c00..c49 of 20 rows each, except c49 with only 4 (and 16 more in c00). */
    @BeforeEach
    void writeTable() throws Exception {
        files = List.of(dir.resolve("part-0.parquet"), dir.resolve("part-1.parquet"));
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement()) {
            String rows = "SELECT i AS id, 'c' || lpad(CASE WHEN i % 50 = 49 AND i >= 200 THEN 0 ELSE i % 50 END::VARCHAR, 2, '0')"
                    + " || '/img' || i || '.png' AS path,"
                    + " 'c' || lpad(CASE WHEN i % 50 = 49 AND i >= 200 THEN 0 ELSE i % 50 END::VARCHAR, 2, '0') AS label,"
                    + " (i * 37 % 101) / 100.0 AS score FROM range(%d, %d) t(i)";
            st.execute("COPY (" + rows.replace("%d, %d", "0, 600") + ") TO '" + files.get(0) + "' (FORMAT PARQUET)");
            st.execute("COPY (" + rows.replace("%d, %d", "600, 1000") + ") TO '" + files.get(1) + "' (FORMAT PARQUET)");
        }
    }

    @AfterEach
    void close() {
        selector.close();
    }

    private static ViewQuery query(String where, String orderBy, Long limit, Long sample, String fraction, String stratify,
                                   long seed) {
        return new ViewQuery("main", Optional.ofNullable(where), Optional.ofNullable(orderBy),
                limit == null ? OptionalLong.empty() : OptionalLong.of(limit),
                sample == null ? OptionalLong.empty() : OptionalLong.of(sample),
                Optional.ofNullable(fraction).map(BigDecimal::new), Optional.ofNullable(stratify), seed);
    }

    private List<String> paths(ViewSelector.Selection s) {
        return s.bound().get("path").stream().map(ViewSelector.BoundValue::value).toList();
    }

    private List<Long> ids(Path parquet) throws Exception {
        List<Long> out = new ArrayList<>();
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT id FROM read_parquet('" + parquet + "')")) {
            while (rs.next()) {
                out.add(rs.getLong(1));
            }
        }
        return out;
    }

    /**
     * A staging disk that fills while the view is written is StagingFull (room, with
     * --staging-dir as advice), not "DuckDB failed" nor "Fix the SQL". The view's 400,000 rows of
     * random text do not fit in a 1 MiB tmpfs.
     */
    @Test
    void aStagingDiskThatFillsIsStagingFullNotTheQuerysFault() throws Exception {
        Path big = dir.resolve("big.parquet");
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement()) {
            st.execute("COPY (SELECT i AS id, md5(i::VARCHAR) AS path, 'c' AS label, 0.5 AS score FROM range(400000) t(i))"
                    + " TO '" + big + "' (FORMAT PARQUET)");
        }
        try (io.warpdata.daemon.publish.SmallTmpfs disk = io.warpdata.daemon.publish.SmallTmpfs.mount(dir.resolve("staging"), "1m")) {
            Path staging = disk.dir();
            Path out = Files.createDirectories(staging.resolve("warp-view-1")).resolve("view.parquet");
            assertThatThrownBy(() -> selector.select(List.of(big), COLUMNS, query("id >= 0", "path", null, null, null, null, 1),
                    out, Set.of()))
                    .isInstanceOf(io.warpdata.daemon.publish.StagingFullException.class)
                    .hasMessageContaining("the disk holding " + staging + " is full")
                    .satisfies(e -> assertThat(((io.warpdata.daemon.publish.StagingFullException) e).nextStep())
                            .contains("--staging-dir"));
        } finally {
            selector.close();
        }
    }

    @Test
    void aWhereKeepsMatchingRowsInTheParentsOrderAndReportsTheirBoundPaths() throws Exception {
        Path out = dir.resolve("view.parquet");
        ViewSelector.Selection s = selector.select(files, COLUMNS, query("label IN ('c01', 'c02') AND id >= 500",
                null, null, null, null, null, 0), out, Set.of("path"));
        assertThat(s.rows()).isEqualTo(ids(out).size());
        assertThat(ids(out)).isSorted().allMatch(id -> id >= 500 && (id % 50 == 1 || id % 50 == 2));
        assertThat(paths(s)).hasSize((int) s.rows()).allMatch(p -> p.startsWith("c01/") || p.startsWith("c02/"));
        assertThat(s.bound().get("path").get(0).file()).isZero();
        assertThat(s.bound().get("path").get(s.bound().get("path").size() - 1).file()).isEqualTo(1);
    }

    /**
     * The same command gives the same view on any machine: the query cannot read a local file
     * (it could, and a file's contents decided the rows), and random() is seeded by the view's seed.
     */
    @Test
    void aViewQueryReadsNoLocalFileAndItsRandomIsSeeded() throws Exception {
        Path ids = Files.writeString(Files.createTempFile("ids", ".csv"), "1\n2\n");
        try {
            assertThatThrownBy(() -> selector.select(files, COLUMNS, query("id IN (SELECT column0 FROM read_csv('" + ids
                    + "', header = false))", null, null, null, null, null, 0), dir.resolve("f.parquet"), Set.of()))
                    .isInstanceOf(ViewException.class);
        } finally {
            Files.deleteIfExists(ids);
        }
        Path a = dir.resolve("r1.parquet");
        Path b = dir.resolve("r2.parquet");
        selector.select(files, COLUMNS, query("random() < 0.5", null, null, null, null, null, 3), a, Set.of());
        try (ViewSelector other = new ViewSelector()) {
            other.select(files, COLUMNS, query("random() < 0.5", null, null, null, null, null, 3), b, Set.of());
        }
        assertThat(ids(a)).hasSizeBetween(300, 700).isEqualTo(ids(b));
    }

    @Test
    void aSeededSampleIsTheSameRowsAndBytesEveryTimeAndAnotherSeedOthers() throws Exception {
        Path a = dir.resolve("a.parquet");
        Path b = dir.resolve("b.parquet");
        Path c = dir.resolve("c.parquet");
        selector.select(files, COLUMNS, query(null, null, null, 100L, null, null, 7), a, Set.of());
        try (ViewSelector other = new ViewSelector()) {
            other.select(files, COLUMNS, query(null, null, null, 100L, null, null, 7), b, Set.of());
        }
        selector.select(files, COLUMNS, query(null, null, null, 100L, null, null, 8), c, Set.of());
        assertThat(ids(a)).hasSize(100).doesNotHaveDuplicates().isSorted();
        assertThat(Files.readAllBytes(a)).isEqualTo(Files.readAllBytes(b));
        assertThat(ids(c)).isNotEqualTo(ids(a));
    }

    @Test
    void aStratifiedSampleTakesAnEvenShareOfEveryStratumAndSmallStrataGiveAllTheyHave() throws Exception {
        Path out = dir.resolve("strat.parquet");
        ViewSelector.Selection s = selector.select(files, COLUMNS, query(null, null, null, 500L, null, "label", 3), out,
                Set.of("label"));
        Map<String, Integer> perLabel = new TreeMap<>();
        s.bound().get("label").forEach(v -> perLabel.merge(v.value(), 1, Integer::sum));
        assertThat(s.rows()).isEqualTo(500);
        assertThat(perLabel).hasSize(50);
        // c49 has 4 rows (49, 99, 149, 199): it gives them all, the other 49 share 496: 10 each, 6 get 11.
        assertThat(perLabel.get("c49")).isEqualTo(4);
        assertThat(perLabel.values().stream().filter(n -> n == 11)).hasSize(6);
        assertThat(perLabel.values().stream().filter(n -> n != 4)).allMatch(n -> n == 10 || n == 11);
    }

    @Test
    void fivehundredOverFiftyEqualClassesIsTenEach() throws Exception {
        ViewSelector.Selection s = selector.select(files, COLUMNS, query("label <> 'c49' AND label <> 'c00'", null, null,
                480L, null, "label", 1), dir.resolve("even.parquet"), Set.of("label"));
        Map<String, Integer> perLabel = new TreeMap<>();
        s.bound().get("label").forEach(v -> perLabel.merge(v.value(), 1, Integer::sum));
        assertThat(perLabel).hasSize(48).allSatisfy((k, n) -> assertThat(n).isEqualTo(10));
    }

    @Test
    void quotasSplitEvenlyGiveSmallStrataAllAndTheRemainderToTheFirst() {
        assertThat(ViewSelector.quotas(10, new long[] {5, 5})).containsExactly(5, 5);
        assertThat(ViewSelector.quotas(10, new long[] {1, 100, 100})).containsExactly(1, 5, 4);
        assertThat(ViewSelector.quotas(7, new long[] {10, 10, 10})).containsExactly(3, 2, 2);
        assertThat(ViewSelector.quotas(100, new long[] {3, 4})).containsExactly(3, 4);
        assertThat(ViewSelector.quotas(0, new long[] {3})).containsExactly(0);
    }

    @Test
    void orderByAndLimitTakeTheTopRowsTiesInParentOrder() throws Exception {
        Path out = dir.resolve("top.parquet");
        ViewSelector.Selection s = selector.select(files, COLUMNS, query(null, "score DESC", 15L, null, null, null, 0), out,
                Set.of());
        assertThat(s.rows()).isEqualTo(15);
        List<Long> ids = ids(out);
        assertThat(ids).hasSize(15);
        // score = (i*37 % 101)/100: the highest is 1.00, reached by every i with i*37 % 101 == 100.
        assertThat(ids.get(0) * 37 % 101).isEqualTo(100);
    }

    @Test
    void aFractionTakesThatShareRoundedHalfUp() {
        ViewSelector.Selection s = selector.select(files, COLUMNS, query("id < 333", null, null, null, "0.1", null, 5),
                dir.resolve("f.parquet"), Set.of());
        assertThat(s.rows()).isEqualTo(33);
    }

    @Test
    void badQueriesAreRefusedNamingDuckdbsReasonAndTheColumns() {
        assertThatThrownBy(() -> selector.select(files, COLUMNS, query("nope > 3", null, null, null, null, null, 0),
                dir.resolve("x.parquet"), Set.of()))
                .isInstanceOf(ViewException.class).hasMessageContaining("--where").hasMessageContaining("nope")
                .satisfies(e -> assertThat(((ViewException) e).nextStep()).contains("id, path, label, score"));
        // audit 33: a filter that stops short failed "near ')'", a parenthesis Warp wrote.
        assertThatThrownBy(() -> selector.select(files, COLUMNS, query("id >", null, null, null, null, null, 0),
                dir.resolve("x.parquet"), Set.of())).isInstanceOf(ViewException.class)
                .hasMessageContaining("syntax error at the end of the filter").hasMessageNotContaining("near \")\"");
        assertThatThrownBy(() -> selector.select(files, COLUMNS, query(null, null, null, 10L, null, "colour", 0),
                dir.resolve("x.parquet"), Set.of())).isInstanceOf(ViewException.class)
                .hasMessageContaining("'colour' is not a column");
        assertThatThrownBy(() -> selector.select(files, COLUMNS, query("id < 0", null, null, null, null, null, 0),
                dir.resolve("x.parquet"), Set.of())).isInstanceOf(ViewException.class)
                .hasMessageContaining("selects no rows");
        assertThatThrownBy(() -> selector.select(files, COLUMNS, query(null, "frobnicate(id)", null, null, null, null, 0),
                dir.resolve("x.parquet"), Set.of())).isInstanceOf(ViewException.class).hasMessageContaining("--order-by");
        assertThatThrownBy(() -> query(null, null, null, 5L, "0.5", null, 0)).isInstanceOf(ViewException.class);
        assertThatThrownBy(() -> query(null, null, null, null, "1.5", null, 0)).isInstanceOf(ViewException.class);
        assertThatThrownBy(() -> query(null, null, null, null, null, "label", 0)).isInstanceOf(ViewException.class)
                .hasMessageContaining("without a sample");
    }
}
