package io.warpdata.daemon.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import io.warpdata.manifest.formats.SafetensorsHeader;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A safetensors dataset's {@code _tensor_index.parquet} against its headers: the files written by
 * Python from the format, the index by DuckDB with seed 001's columns.
 */
class TensorIndexCheckTest {
    /** part-0: a F32[4], b I64[2,3]; part-1: a F32[4], c U8 scalar. */
    private static final String ALL = "('a', 'part-0.safetensors', [4], 'F32'), ('b', 'part-0.safetensors', [2, 3], 'I64'),"
            + " ('a', 'part-1.safetensors', [4], 'F32'), ('c', 'part-1.safetensors', []::INTEGER[], 'U8')";

    @TempDir
    Path tmp;
    private Path src;

    @BeforeEach
    void dataset() throws Exception {
        src = Files.createDirectories(tmp.resolve("st"));
        Process p = new ProcessBuilder("/usr/bin/python3", "-c", """
                import json, struct, sys
                def write(name, tensors):
                    header, data = {}, b""
                    for key, dtype, shape, size in tensors:
                        header[key] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + size]}
                        data += bytes(size)
                    h = json.dumps(header).encode()
                    out = struct.pack("<Q", len(h)) + h + data
                    with open(sys.argv[1] + "/" + name, "wb") as f:
                        f.write(out)
                    return {"file": name, "samples_count": 1, "bytes": len(out)}
                shards = [write("part-0.safetensors", [("a", "F32", [4], 16), ("b", "I64", [2, 3], 48)]),
                          write("part-1.safetensors", [("a", "F32", [4], 16), ("c", "U8", [], 1)])]
                with open(sys.argv[1] + "/dataset_manifest.json", "w") as f:
                    json.dump({"format_version": "1", "total_samples": 2,
                               "total_bytes": sum(s["bytes"] for s in shards), "shards": shards}, f)
                """, src.toString()).redirectErrorStream(true).start();
        assertThat(p.waitFor()).as(new String(p.getInputStream().readAllBytes())).isZero();
    }

    /** Writes the index with DuckDB from {@code rows} (tensor_key, file_name, shape, dtype). */
    private void index(String select) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement()) {
            st.execute("COPY (" + select + ") TO '" + src.resolve("_tensor_index.parquet") + "' (FORMAT PARQUET)");
        }
    }

    private void rows(String values) throws Exception {
        index("SELECT * FROM (VALUES " + values + ") v(tensor_key, file_name, shape, dtype)");
    }

    @Test
    void aCompleteIndexPublishesWithoutANoteWhateverItsSpellingOfFilesAndDtypes() throws Exception {
        index("SELECT * FROM (VALUES ('a', './part-0.safetensors', [4], 'f32'), ('b', 'part-0.safetensors', [2, 3], 'I64'),"
                + " ('a', 'part-1.safetensors', [4], 'F32'), ('c', 'part-1.safetensors', []::INTEGER[], 'U8'))"
                + " v(Tensor_Key, FILE_NAME, Shape, dtype)");
        assertThat(SafetensorsDataset.check("emb", src).notes()).as("columns named in another case").isEmpty();
        rows("('a', './part-0.safetensors', [4], 'f32'), ('b', 'part-0.safetensors', [2, 3]::BIGINT[], 'I64'),"
                + " ('a', 'part-1.safetensors', [4], 'F32'), ('c', 'part-1.safetensors', []::INTEGER[], 'U8')");
        SafetensorsDataset.Summary s = SafetensorsDataset.check("emb", src);
        assertThat(s.tensors()).isEqualTo(4);
        assertThat(s.notes()).isEmpty();
    }

    @Test
    void tensorsTheIndexLeavesOutAreNotedNotRefused() throws Exception {
        rows("('a', 'part-0.safetensors', [4], 'F32'), ('a', 'part-1.safetensors', [4], 'F32')");
        assertThat(SafetensorsDataset.check("emb", src).notes()).singleElement().asString()
                .contains("_tensor_index.parquet leaves out 2 tensors of the files, e.g. \"b\" of part-0.safetensors",
                        "will not find them");
    }

    @Test
    void aRowNamingATensorItsFileDoesNotHoldIsRefused() throws Exception {
        rows(ALL + ", ('c', 'part-0.safetensors', [4], 'F32')");
        assertThatThrownBy(() -> SafetensorsDataset.check("emb", src)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("_tensor_index.parquet has 1 row naming a tensor its file does not hold,"
                        + " e.g. \"c\" of part-0.safetensors")
                .satisfies(e -> assertThat(((InvalidInputException) e).nextStep()).contains("generate_index=true", "remove it"));
    }

    @Test
    void aRowNamingAFileOutsideTheDatasetIsRefused() throws Exception {
        rows(ALL + ", ('a', 'part-9.safetensors', [4], 'F32')");
        assertThatThrownBy(() -> SafetensorsDataset.check("emb", src)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("whose file_name is \"part-9.safetensors\", which is not a file of the dataset's manifest"
                        + " (part-0.safetensors, part-1.safetensors)");
        rows(ALL + ", ('a', '../other/part-0.safetensors', [4], 'F32')");
        assertThatThrownBy(() -> SafetensorsDataset.check("emb", src)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("whose file_name is \"../other/part-0.safetensors\"");
        // The review: a limit of one spelling a file let a stray one past it through unchecked.
        // Two spellings of part-0, then part-1 and part-9: the fourth name was past that limit.
        rows("('a', './part-0.safetensors', [4], 'F32'), ('b', 'part-0.safetensors', [2, 3], 'I64'),"
                + " ('a', 'part-1.safetensors', [4], 'F32'), ('c', 'part-1.safetensors', []::INTEGER[], 'U8'),"
                + " ('z', 'part-9.safetensors', [1], 'F32')");
        assertThatThrownBy(() -> SafetensorsDataset.check("emb", src)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("whose file_name is \"part-9.safetensors\"");
        rows(ALL + ", ('a', 'part-' || chr(0) || '.safetensors', [4], 'F32')");
        assertThatThrownBy(() -> SafetensorsDataset.check("emb", src)).as("a NUL in a name").isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("which is not a file of the dataset's manifest");
    }

    @Test
    void anIndexWrittenAsAFolderOfPartsAsSparkWritesItIsCheckedToo() throws Exception {
        Path folder = src.resolve("_tensor_index.parquet");
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement()) {
            st.execute("SET threads = 2");
            st.execute("COPY (SELECT * FROM (VALUES " + ALL + ", ('c', 'part-0.safetensors', [4], 'F32'))"
                    + " v(tensor_key, file_name, shape, dtype)) TO '" + folder + "' (FORMAT PARQUET, PER_THREAD_OUTPUT true)");
        }
        assertThat(folder).isDirectory();
        assertThatThrownBy(() -> SafetensorsDataset.check("emb", src)).as("no _SUCCESS: not committed, as for its table")
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("cannot be read as seed 001's tensor index");
        Files.createFile(folder.resolve("_SUCCESS"));
        assertThatThrownBy(() -> SafetensorsDataset.check("emb", src)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("has 1 row naming a tensor its file does not hold, e.g. \"c\" of part-0.safetensors");
    }

    /**
     * Audit 44: the check read every Parquet file below the folder, the table only a committed
     * dataset's parts: a task's leftovers in _temporary/ hid a tensor the table leaves out, and a
     * hidden copy made a false "listed twice". A part that is not Parquet gets the index's advice.
     */
    @Test
    void aFolderIndexIsCheckedOnTheFilesItsTablePublishes() throws Exception {
        Path folder = Files.createDirectories(src.resolve("_tensor_index.parquet"));
        Path leftovers = Files.createDirectories(folder.resolve("_temporary/0/task_1"));
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement()) {
            String part0 = "SELECT * FROM (VALUES " + ALL + ") v(tensor_key, file_name, shape, dtype) WHERE file_name = 'part-0.safetensors'";
            st.execute("COPY (" + part0 + ") TO '" + folder.resolve("part-00000.parquet") + "' (FORMAT PARQUET)");
            st.execute("COPY (" + part0.replace("= 'part-0", "= 'part-1") + ") TO '" + leftovers.resolve("part-00001.parquet")
                    + "' (FORMAT PARQUET)");
            st.execute("COPY (" + part0 + ") TO '" + folder.resolve(".part-00000.parquet") + "' (FORMAT PARQUET)");
        }
        Files.createFile(folder.resolve("_SUCCESS"));
        assertThat(SafetensorsDataset.check("emb", src).notes()).singleElement().asString()
                .contains("leaves out 2 tensors of the files, e.g. \"a\" of part-1.safetensors");
        Files.writeString(folder.resolve("part-00001.parquet"), "not parquet");
        assertThatThrownBy(() -> SafetensorsDataset.check("emb", src)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("cannot be read as seed 001's tensor index", "part-00001.parquet")
                .satisfies(e -> assertThat(((InvalidInputException) e).nextStep()).contains("generate_index=true")
                        .doesNotContain("--table"));
    }

    /**
     * Spark's {@code partitionBy("dtype")} (here DuckDB's PARTITION_BY, which writes the same
     * folders) leaves the column out of the files: its values are the folders'. The check was
     * refusing such an index as lacking dtype (audit 44). A symlinked folder is read where it leads.
     */
    @Test
    void anIndexPartitionedIntoFoldersTakesItsColumnFromTheFolders() throws Exception {
        Path folder = src.resolve("_tensor_index.parquet");
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement()) {
            st.execute("COPY (SELECT * FROM (VALUES " + ALL + ") v(tensor_key, file_name, shape, dtype)) TO '" + folder
                    + "' (FORMAT PARQUET, PARTITION_BY (dtype))");
        }
        assertThat(folder.resolve("dtype=F32")).isDirectory();
        Files.createFile(folder.resolve("_SUCCESS"));
        assertThat(SafetensorsDataset.check("emb", src).notes()).isEmpty();
        assertThat(TensorIndexCheck.table("emb", folder).parts()).extracting(CommittedDataset.Part::dir)
                .contains("dtype=F32", "dtype=I64", "dtype=U8");

        // The folder's value is checked like a column's: b is I64, not F32.
        Staging.delete(folder.resolve("dtype=I64"));
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement()) {
            st.execute("COPY (SELECT 'b' AS tensor_key, 'part-0.safetensors' AS file_name, [2, 3] AS shape) TO '"
                    + folder.resolve("dtype=F32/b.parquet") + "' (FORMAT PARQUET)");
        }
        assertThatThrownBy(() -> SafetensorsDataset.check("emb", src)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("whose dtype or shape is not the header's, e.g. \"b\" of part-0.safetensors:"
                        + " the index says \"F32\" [2x3], the header I64 [2x3]");

        // A table or index given as a symlink to its folder (a 'latest' link) is read where it leads.
        Path real = Files.move(src, tmp.resolve("real"));
        Path link = Files.createSymbolicLink(tmp.resolve("latest"), real);
        Files.delete(real.resolve("_tensor_index.parquet/dtype=F32/b.parquet"));
        assertThat(CommittedDataset.read("t", link.resolve("_tensor_index.parquet")).parts()).hasSize(2);
        assertThat(CommittedDataset.read("t", Files.createSymbolicLink(tmp.resolve("index"),
                real.resolve("_tensor_index.parquet"))).parts()).hasSize(2);
        assertThat(SafetensorsDataset.check("emb", link).notes()).singleElement().asString()
                .contains("leaves out 1 tensor of the files, e.g. \"b\" of part-0.safetensors");
    }

    /**
     * A spill that fills its disk is the staging folder's room, not the index's fault: DuckDB
     * says "Out of Memory ... failed to offload" once its spill reaches 90% of the disk (audit
     * 44), which must be StagingFull, not advice to rewrite a good index. A 1 MiB tmpfs as the
     * staging folder and a 16 MB memory limit make 1,000,000 tensors spill.
     */
    @Test
    void aSpillThatFillsItsDiskIsStagingFullNotTheIndexsFault() throws Exception {
        int n = 1_000_000;
        index("SELECT 'key/number/' || i AS tensor_key, 'part-0.safetensors' AS file_name, [4] AS shape, 'F32' AS dtype"
                + " FROM range(" + n + ") r(i)");
        List<SafetensorsHeader.Tensor> tensors = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            tensors.add(new SafetensorsHeader.Tensor("key/number/" + i, SafetensorsHeader.Dtype.F32, List.of(4L), 16L * i, 16L * i + 16));
        }
        SafetensorsHeader header = new SafetensorsHeader(8, java.util.Map.of(), tensors);
        try (SmallTmpfs disk = SmallTmpfs.mount(tmp.resolve("staging"), "1m")) {
            Path staging = disk.dir();
            try (TensorIndexCheck check = TensorIndexCheck.of("emb", src, staging, "16MB")) {
                // Appending the headers fills it first (an IllegalStateException before this test).
                assertThatThrownBy(() -> {
                    check.add("part-0.safetensors", header);
                    check.finish(java.util.Set.of("part-0.safetensors"));
                }).isInstanceOf(StagingFullException.class).hasMessageContaining("failed to offload");
            }
            try (Stream<Path> left = Files.list(staging)) {
                assertThat(left).as("the spill folder goes with the check").isEmpty();
            }
        }
    }

    @Test
    void aKeyInAMessageIsWrittenAsJsonWould() throws Exception {
        // Audit 41's rule: a newline or a terminal's escape in a key must not make lines of the output.
        rows(ALL + ", ('bad' || chr(10) || chr(27) || '[31m', 'part-0.safetensors', [4], 'F32')");
        assertThatThrownBy(() -> SafetensorsDataset.check("emb", src)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("e.g. \"bad\\n\\u001B[31m\" of part-0.safetensors").hasMessageNotContaining("\n");
    }

    @Test
    void aDtypeOrShapeOtherThanTheHeadersIsRefused() throws Exception {
        rows("('a', 'part-0.safetensors', [4], 'F16'), ('b', 'part-0.safetensors', [2, 3], 'I64'),"
                + " ('a', 'part-1.safetensors', [4], 'F32'), ('c', 'part-1.safetensors', []::INTEGER[], 'U8')");
        assertThatThrownBy(() -> SafetensorsDataset.check("emb", src)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("has 1 row whose dtype or shape is not the header's, e.g. \"a\" of part-0.safetensors:"
                        + " the index says \"F16\" [4], the header F32 [4]");
        rows("('a', 'part-0.safetensors', [4], 'F32'), ('b', 'part-0.safetensors', [3, 2], 'I64'),"
                + " ('a', 'part-1.safetensors', [4, NULL], 'F32'), ('c', 'part-1.safetensors', [1], 'U8')");
        assertThatThrownBy(() -> SafetensorsDataset.check("emb", src)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("has 3 rows whose dtype or shape is not the header's, e.g. \"b\" of part-0.safetensors:"
                        + " the index says \"I64\" [3x2], the header I64 [2x3]");
        rows("('a', 'part-0.safetensors', [4], NULL), ('b', 'part-0.safetensors', [2, 3], 'I64'),"
                + " ('a', 'part-1.safetensors', [4], 'F32'), ('c', 'part-1.safetensors', []::INTEGER[], 'U8')");
        assertThatThrownBy(() -> SafetensorsDataset.check("emb", src)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("the index says NULL [4], the header F32 [4]");
        rows("('a', 'part-0.safetensors', [4], 'NULL'), ('b', 'part-0.safetensors', [2, 3], 'I64'),"
                + " ('a', 'part-1.safetensors', [4], 'F32'), ('c', 'part-1.safetensors', []::INTEGER[], 'U8')");
        assertThatThrownBy(() -> SafetensorsDataset.check("emb", src)).as("a dtype spelled NULL is a string")
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("the index says \"NULL\" [4], the header F32 [4]");
    }

    @Test
    void aTensorListedTwiceOrARowWithoutAKeyIsRefused() throws Exception {
        rows(ALL + ", ('b', './part-0.safetensors', [2, 3], 'I64')");
        assertThatThrownBy(() -> SafetensorsDataset.check("emb", src)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("lists a tensor more than once: \"b\" of part-0.safetensors (2 rows)");
        rows(ALL + ", (NULL, 'part-0.safetensors', [2, 3], 'I64')");
        assertThatThrownBy(() -> SafetensorsDataset.check("emb", src)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("has 1 row without a file_name or tensor_key");
    }

    @Test
    void anIndexOfOtherColumnsOrTypesOrNotParquetIsRefusedSayingWhatItHas() throws Exception {
        index("SELECT * FROM (VALUES ('a', 'part-0.safetensors', [4], 'F32')) v(key, file_name, shape, dtype)");
        assertThatThrownBy(() -> SafetensorsDataset.check("emb", src)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("has no column 'tensor_key' (seed 001's index has tensor_key, file_name, shape, dtype;"
                        + " this one has key, file_name, shape, dtype)");
        index("SELECT * FROM (VALUES ('a', 'part-0.safetensors', '[4]', 'F32')) v(tensor_key, file_name, shape, dtype)");
        assertThatThrownBy(() -> SafetensorsDataset.check("emb", src)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("has column 'shape' of type VARCHAR; seed 001 makes it a list of integers");
        Files.writeString(src.resolve("_tensor_index.parquet"), "tensor_key,file_name\na,part-0.safetensors\n");
        assertThatThrownBy(() -> SafetensorsDataset.check("emb", src)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("cannot be read as seed 001's tensor index");
    }

    @Test
    void theCheckSpillsInTheStagingFolderAndLeavesNothingThere() throws Exception {
        Path staging = tmp.resolve("staging");
        rows(ALL);
        assertThat(SafetensorsDataset.check("emb", src, staging).notes()).isEmpty();
        rows(ALL + ", ('c', 'part-0.safetensors', [4], 'F32')");
        assertThatThrownBy(() -> SafetensorsDataset.check("emb", src, staging)).isInstanceOf(InvalidInputException.class);
        assertThat(staging).isDirectory();
        assertThat(spills(staging)).isZero();
    }

    private static long spills(Path temp) throws IOException {
        try (Stream<Path> s = Files.list(temp)) {
            return s.filter(p -> p.getFileName().toString().startsWith("warp-tensor-index")).count();
        }
    }
}
