package io.warpdata.daemon.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A committed Parquet folder written by DuckDB (PARTITION_BY), as publish reads it: links in and around it. */
class CommittedDatasetTest {
    @TempDir
    Path tmp;

    private Path table(Path dir) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement()) {
            st.execute("COPY (SELECT i AS id, i % 3 AS cls FROM range(30) r(i)) TO '" + dir
                    + "' (FORMAT PARQUET, PARTITION_BY (cls))");
        }
        Files.createFile(dir.resolve("_SUCCESS"));
        return dir;
    }

    /**
     * Audit 45: a partition folder that is a symlink (cls=2 linked from elsewhere) was left out
     * without a word, its rows lost. It is followed, and its files read where they lead; a link
     * back to a folder above is refused as a loop.
     */
    @Test
    void aLinkedPartitionFolderIsReadAndALoopIsRefused() throws Exception {
        Path dir = table(tmp.resolve("t"));
        Path outside = Files.move(dir.resolve("cls=2"), tmp.resolve("cls2-real"));
        Files.createSymbolicLink(dir.resolve("cls=2"), outside);
        CommittedDataset read = CommittedDataset.read("t", dir);
        assertThat(read.parts()).extracting(CommittedDataset.Part::dir).containsExactly("cls=0", "cls=1", "cls=2");
        assertThat(read.parts().get(2).file()).startsWith(outside.toRealPath());

        Files.createSymbolicLink(dir.resolve("cls=1").resolve("up"), dir);
        assertThatThrownBy(() -> CommittedDataset.read("t", dir)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("is a symlink leading back to a folder above it (a loop)");
    }

    /** A folder given as a link is read in the folder it leads to when read, not through the link file by file. */
    @Test
    void aFolderGivenAsALinkIsReadWhereItLeads() throws Exception {
        Path d1 = table(tmp.resolve("d1"));
        Path link = Files.createSymbolicLink(tmp.resolve("latest"), d1);
        assertThat(CommittedDataset.read("t", link).parts()).allSatisfy(p -> assertThat(p.file()).startsWith(d1.toRealPath()));
    }
}
