package io.warpdata.daemon.inspect;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DuckDbTest {
    @TempDir
    Path tmp;

    @Test
    void onlyTheCopyThisProcessMapsInTheTempFolderIsDeleted(@TempDir Path elsewhere) throws Exception {
        Path mapped = Files.writeString(tmp.resolve("libduckdb_java123.so"), "x");
        Path another = Files.writeString(tmp.resolve("libduckdb_java456.so"), "x"); // another JVM's, not mapped here
        Path outside = Files.writeString(elsewhere.resolve("libduckdb_java789.so"), "x");
        Path other = Files.writeString(tmp.resolve("libother.so"), "x");
        Path maps = Files.write(elsewhere.resolve("maps"), List.of(
                "7f0000000000-7f0000100000 r--p 00000000 fd:00 42   " + mapped,
                "7f0000100000-7f0000200000 r-xp 00100000 fd:00 42   " + mapped,
                "7f0000300000-7f0000400000 r--p 00000000 fd:00 43   " + outside,
                "7f0000500000-7f0000600000 r--p 00000000 fd:00 44   " + other,
                "7f0000700000-7f0000800000 r--p 00000000 fd:00 45   " + another + " (deleted)",
                "7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0    [stack]"));

        assertThat(DuckDb.deleteMappedCopies(maps, tmp)).isTrue();

        assertThat(mapped).doesNotExist();
        assertThat(another).exists();
        assertThat(outside).exists();
        assertThat(other).exists();
        assertThat(DuckDb.deleteMappedCopies(elsewhere.resolve("no-such-maps"), tmp)).isFalse();
    }

    /**
     * The driver computed a whole result before its first row (native memory, outside the heap and
     * DuckDB's limit): each slow table stream held its shard's rows, 160 MB for 20M of them.
     */
    @Test
    void aStreamedResultHoldsAFewMegabytesWhateverItsRowCount() throws Exception {
        try (Connection c = DuckDb.streamResults(DuckDb.connect()); Statement st = c.createStatement()) {
            long before = residentBytes();
            try (ResultSet r = st.executeQuery("SELECT range AS id FROM range(20000000)")) {
                for (int i = 0; i < 5000; i++) {
                    assertThat(r.next()).isTrue();
                }
                assertThat(r.getLong(1)).isEqualTo(4999);
                long grown = residentBytes() - before;
                assertThat(grown).as("resident memory held by an open 20M-row result (160 MB materialised)")
                        .isLessThan(48L << 20);
            }
        }
    }

    private static long residentBytes() throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("\\D", "")) * 1024;
            }
        }
        throw new IllegalStateException("no VmRSS in /proc/self/status");
    }

    @Test
    void aConnectionLeavesNoCopyOfTheNativeLibraryBehindInTheTempFolder() throws Exception {
        try (Connection c = DuckDb.connect(); Statement st = c.createStatement(); ResultSet r = st.executeQuery("SELECT 42")) {
            assertThat(r.next()).isTrue();
            assertThat(r.getInt(1)).isEqualTo(42);
        }
        Path tmpDir = Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath().normalize();
        List<Path> mappedCopies = Files.readAllLines(Path.of("/proc/self/maps")).stream()
                .filter(l -> l.contains("libduckdb_java"))
                .map(l -> l.substring(l.indexOf('/')))
                .map(Path::of)
                .toList();
        assertThat(mappedCopies).as("the library is loaded from a copy").isNotEmpty();
        assertThat(mappedCopies).filteredOn(p -> tmpDir.equals(p.getParent())).allSatisfy(p -> assertThat(p).doesNotExist());
    }
}
