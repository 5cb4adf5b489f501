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
        assertThat(read.parts().get(2).file().getFileName()).isEqualTo(read.parts().get(0).file().getFileName());

        Files.createSymbolicLink(dir.resolve("cls=1").resolve("up"), dir);
        assertThatThrownBy(() -> CommittedDataset.read("t", dir)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("is a symlink leading back to a folder above it (a loop)");
    }

    /**
     * The review: a link beside the dated folders (latest -> cls=1) would publish their rows
     * twice, and a loop inside a folder nobody reads (_temporary/) must not fail the publish.
     */
    @Test
    void aLinkIntoTheTableIsSkippedAndHiddenFoldersAreNotEntered() throws Exception {
        Path dir = table(tmp.resolve("t"));
        Files.createSymbolicLink(dir.resolve("latest"), dir.resolve("cls=1"));
        Path temp = Files.createDirectories(dir.resolve("_temporary/0"));
        Files.createSymbolicLink(temp.resolve("up"), dir);
        assertThat(CommittedDataset.read("t", dir).parts()).extracting(CommittedDataset.Part::dir)
                .containsExactly("cls=0", "cls=1", "cls=2");
    }

    /**
     * Audit 46: a partition folder linked to a hidden one (year=2 -> _stage) lost its rows; a link
     * to a sibling file published its rows twice; a broken link lost its rows without a word.
     */
    @Test
    void aLinkToAHiddenFolderIsFollowedALinkToASiblingSkippedABrokenOneRefused() throws Exception {
        Path dir = table(tmp.resolve("t"));
        Files.move(dir.resolve("cls=2"), dir.resolve("_stage_cls2"));
        Files.createSymbolicLink(dir.resolve("cls=2"), Path.of("_stage_cls2"));
        Path first;
        try (var files = Files.list(dir.resolve("cls=0"))) {
            first = files.findFirst().orElseThrow();
        }
        Files.createSymbolicLink(dir.resolve("cls=0/data_latest.parquet"), first.getFileName());
        assertThat(CommittedDataset.read("t", dir).parts()).extracting(CommittedDataset.Part::dir)
                .containsExactly("cls=0", "cls=1", "cls=2");
        // The review: a link to a file the walk does not take by its name is the only way to it.
        Path swapped = Files.move(first, first.resolveSibling("data.parquet.20261130"));
        Files.createSymbolicLink(first, swapped.getFileName());
        Files.delete(dir.resolve("cls=0/data_latest.parquet"));
        assertThat(CommittedDataset.read("t", dir).parts()).extracting(CommittedDataset.Part::dir)
                .containsExactly("cls=0", "cls=1", "cls=2");
        assertThat(CommittedDataset.read("t", dir).parts().get(0).name()).isEqualTo(first.getFileName().toString());
        // The review: inside a partition folder linked from outside, a link to its sibling file.
        Path outside = Files.move(dir.resolve("cls=1"), tmp.resolve("cls1-real"));
        Files.createSymbolicLink(dir.resolve("cls=1"), outside);
        try (var files = Files.list(outside)) {
            Files.createSymbolicLink(outside.resolve("latest.parquet"), files.findFirst().orElseThrow().getFileName());
        }
        assertThat(CommittedDataset.read("t", dir).parts()).extracting(CommittedDataset.Part::dir)
                .as("its rows once").containsExactly("cls=0", "cls=1", "cls=2");
        Path broken = Files.createSymbolicLink(dir.resolve("cls=1/data_9.parquet"), Path.of("../../nowhere.parquet"));
        assertThatThrownBy(() -> CommittedDataset.read("t", dir)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("data_9.parquet is a symlink that cannot be followed (to ../../nowhere.parquet");
        Files.delete(broken);
        Files.createSymbolicLink(dir.resolve("cls=3"), Path.of("/nonexistent/cls3"));
        assertThatThrownBy(() -> CommittedDataset.read("t", dir)).as("a partition folder's link, the review")
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("cls=3 is a symlink that cannot be followed");
    }

    /**
     * The review: a file that is a link (a Hugging Face snapshot's train-00000.parquet leads to a
     * blob named by its hash; DVC's symlink cache) keeps its own name, which the table's file takes.
     */
    @Test
    void aFileGivenAsALinkKeepsItsName() throws Exception {
        Path blobs = Files.createDirectories(tmp.resolve("blobs"));
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement()) {
            st.execute("COPY (SELECT 1 AS id) TO '" + blobs.resolve("9f86d081884c7d65") + "' (FORMAT PARQUET)");
        }
        Path data = Files.createDirectories(tmp.resolve("snapshot/data"));
        Files.createSymbolicLink(data.resolve("train-00000-of-00001.parquet"), Path.of("../../blobs/9f86d081884c7d65"));
        Files.createFile(data.resolve("_SUCCESS"));
        assertThat(CommittedDataset.read("t", data).parts()).singleElement()
                .satisfies(p -> assertThat(p.name()).isEqualTo("train-00000-of-00001.parquet"))
                // Read from the blob itself, once resolved: a link moved away and back between
                // two reads went unseen (audit 47).
                .satisfies(p -> assertThat(p.file()).isEqualTo(blobs.toRealPath().resolve("9f86d081884c7d65")))
                .satisfies(p -> assertThat(Files.size(p.file())).isPositive());
    }

    /** A folder given as a link is read in the folder it leads to when read, not through the link file by file. */
    @Test
    void aFolderGivenAsALinkIsReadWhereItLeads() throws Exception {
        Path d1 = table(tmp.resolve("d1"));
        Path link = Files.createSymbolicLink(tmp.resolve("latest"), d1);
        assertThat(CommittedDataset.read("t", link).parts()).allSatisfy(p -> assertThat(p.file()).startsWith(d1.toRealPath()));
    }
}
