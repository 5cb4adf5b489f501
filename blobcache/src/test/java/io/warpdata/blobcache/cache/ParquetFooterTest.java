package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ParquetFooter} against files DuckDB writes, checked against DuckDB's own
 * {@code parquet_metadata()}; and against garbage, truncated and corrupt footers, which give
 * {@link ColumnChunks#UNKNOWN} and never throw.
 */
class ParquetFooterTest {
    @TempDir
    Path dir;

    /** 8 columns (integers, doubles, a dictionary-encoded string, a boolean, a long string) in row groups of ~20,000 rows. */
    static Path writeWithDuckDb(Path file, long rows, String options) {
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement s = c.createStatement()) {
            s.execute("COPY (SELECT i AS id, i * 7 % 1000 AS qty, (i * 0.37) AS value, 'cat_' || (i % 17) AS category,"
                    + " i % 3 = 0 AS flag, hash(i) AS h, 'note number ' || i AS note, i * 2.5 AS score"
                    + " FROM range(0, " + rows + ") t(i)) TO '" + file + "' (FORMAT PARQUET, ROW_GROUP_SIZE 20000"
                    + options + ")");
        } catch (SQLException e) {
            throw new IllegalStateException("DuckDB could not write " + file, e);
        }
        return file;
    }

    /** The chunks as DuckDB reports them: [dictionary page, else first data page; + total_compressed_size), in file order. */
    static List<long[]> duckDbChunks(Path file) {
        List<long[]> out = new ArrayList<>();
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement s = c.createStatement();
             ResultSet r = s.executeQuery("SELECT data_page_offset, dictionary_page_offset, total_compressed_size"
                     + " FROM parquet_metadata('" + file + "')")) {
            while (r.next()) {
                long data = r.getLong(1);
                long dict = r.getLong(2);
                boolean hasDict = !r.wasNull() && dict > 0 && dict < data;
                long start = hasDict ? dict : data;
                out.add(new long[] {start, start + r.getLong(3)});
            }
        } catch (SQLException e) {
            throw new IllegalStateException("DuckDB could not read " + file, e);
        }
        out.sort(Comparator.comparingLong(a -> a[0]));
        return out;
    }

    /** The footer of a whole file, parsed as warpd parses it. */
    static ColumnChunks chunks(byte[] file) {
        int len = ParquetFooter.footerLength(Arrays.copyOfRange(file, file.length - 8, file.length), file.length);
        assertThat(len).as("footer length").isPositive();
        int start = file.length - 8 - len;
        return ParquetFooter.chunks(Arrays.copyOfRange(file, start, file.length - 8), start);
    }

    private static byte[] footer(byte[] file) {
        int len = ParquetFooter.footerLength(Arrays.copyOfRange(file, file.length - 8, file.length), file.length);
        return Arrays.copyOfRange(file, file.length - 8 - len, file.length - 8);
    }

    @Test
    void readsTheColumnChunkRangesDuckDbReportsForItsOwnFiles() throws IOException {
        for (String options : List.of("", ", COMPRESSION uncompressed", ", COMPRESSION zstd")) {
            Path file = writeWithDuckDb(dir.resolve("t" + options.length() + ".parquet"), 100_000, options);
            ColumnChunks c = chunks(Files.readAllBytes(file));
            List<long[]> expected = duckDbChunks(file);
            assertThat(expected).as("8 columns x 5 row groups").hasSize(40);
            assertThat(c.known()).isTrue();
            assertThat(c.count()).isEqualTo(expected.size());
            for (int i = 0; i < c.count(); i++) {
                assertThat(new long[] {c.start(i), c.end(i)}).as("chunk %d (%s)", i, options).containsExactly(expected.get(i));
            }
        }
    }

    @Test
    void everyTruncatedFooterIsUnknown() throws IOException {
        byte[] footer = footer(Files.readAllBytes(writeWithDuckDb(dir.resolve("t.parquet"), 50_000, "")));
        long start = 1L << 30; // any place: the footer's own bounds decide
        for (int n = 0; n < footer.length; n++) {
            assertThat(ParquetFooter.chunks(Arrays.copyOf(footer, n), start)).as("first %d bytes", n)
                    .isSameAs(ColumnChunks.UNKNOWN);
        }
        assertThat(ParquetFooter.chunks(footer, start).known()).isTrue();
    }

    @Test
    void corruptFootersNeverThrowAndNeverNameBytesOutsideTheData() throws IOException {
        byte[] file = Files.readAllBytes(writeWithDuckDb(dir.resolve("t.parquet"), 50_000, ""));
        byte[] footer = footer(file);
        long footerStart = file.length - 8 - footer.length;
        Random rnd = new Random(26);
        int unknown = 0;
        for (int i = 0; i < 5_000; i++) {
            byte[] bad = footer.clone();
            for (int k = 1 + rnd.nextInt(4); k > 0; k--) {
                bad[rnd.nextInt(bad.length)] = (byte) rnd.nextInt(256);
            }
            ColumnChunks c = ParquetFooter.chunks(bad, footerStart);
            if (!c.known()) {
                unknown++;
                continue;
            }
            for (int j = 0; j < c.count(); j++) {
                assertThat(c.start(j)).isGreaterThanOrEqualTo(4);
                assertThat(c.end(j)).isGreaterThan(c.start(j)).isLessThanOrEqualTo(footerStart);
                if (j > 0) {
                    assertThat(c.start(j)).isGreaterThanOrEqualTo(c.end(j - 1));
                }
            }
        }
        assertThat(unknown).as("some corruptions are caught").isPositive();
    }

    @Test
    void garbageIsUnknown() {
        Random rnd = new Random(7);
        for (int i = 0; i < 5_000; i++) {
            byte[] junk = new byte[rnd.nextInt(2_000)];
            rnd.nextBytes(junk);
            assertThat(ParquetFooter.chunks(junk, 1L << 20)).isSameAs(ColumnChunks.UNKNOWN);
        }
        // Structs nested a million deep: bounded, no stack overflow.
        byte[] deep = new byte[1 << 20];
        Arrays.fill(deep, (byte) 0x1c); // field +1, type struct
        assertThat(ParquetFooter.chunks(deep, 1L << 30)).isSameAs(ColumnChunks.UNKNOWN);
        // A list claiming 2^31 row groups in 6 bytes: refused at once, nothing allocated for it.
        byte[] huge = {0x49, (byte) 0xfc, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x07};
        assertThat(ParquetFooter.chunks(huge, 1L << 30)).isSameAs(ColumnChunks.UNKNOWN);
        assertThat(ParquetFooter.chunks(new byte[0], 100)).isSameAs(ColumnChunks.UNKNOWN);
    }

    @Test
    void aTailThatIsNotPlainParquetHasNoFooter() {
        byte[] tail = {100, 0, 0, 0, 'P', 'A', 'R', '1'};
        assertThat(ParquetFooter.footerLength(tail, 1_000)).isEqualTo(100);
        assertThat(ParquetFooter.footerLength(tail, 100)).as("longer than the file").isEqualTo(-1);
        assertThat(ParquetFooter.footerLength(new byte[] {100, 0, 0, 0, 'P', 'A', 'R', 'E'}, 1_000))
                .as("an encrypted footer").isEqualTo(-1);
        assertThat(ParquetFooter.footerLength(new byte[] {0, 0, 0, (byte) 0x80, 'P', 'A', 'R', '1'}, 1L << 40))
                .as("negative").isEqualTo(-1);
        assertThat(ParquetFooter.footerLength(new byte[] {0, 0, 0, 0x7f, 'P', 'A', 'R', '1'}, 1L << 40))
                .as("beyond the largest footer read").isEqualTo(-1);
        assertThat(ParquetFooter.footerLength("ustar\0\0\0".getBytes(java.nio.charset.StandardCharsets.US_ASCII), 1_000))
                .isEqualTo(-1);
    }

    @Test
    void columnChunksAnswerWhereARegionEndsAndHowManyChunksLieBefore() {
        ColumnChunks c = ColumnChunks.of(new long[] {300, 4, 100}, new long[] {400, 100, 250}, 3);
        assertThat(c.known()).isTrue();
        assertThat(c.ordinal(0)).isZero();
        assertThat(c.ordinal(4)).isEqualTo(1);
        assertThat(c.ordinal(299)).isEqualTo(2);
        assertThat(c.ordinal(1_000)).isEqualTo(3);
        assertThat(c.regionEnd(0)).as("before the first chunk").isEqualTo(4);
        assertThat(c.regionEnd(50)).isEqualTo(100);
        assertThat(c.regionEnd(100)).isEqualTo(250);
        assertThat(c.regionEnd(260)).as("between chunks: the next one's start").isEqualTo(300);
        assertThat(c.regionEnd(400)).as("after the last: the footer").isEqualTo(Long.MAX_VALUE);
        assertThat(ColumnChunks.of(new long[] {4, 50}, new long[] {60, 80}, 2)).as("overlapping").isSameAs(ColumnChunks.UNKNOWN);
        assertThat(ColumnChunks.of(new long[] {4}, new long[] {4}, 1)).as("empty").isSameAs(ColumnChunks.UNKNOWN);
    }
}
