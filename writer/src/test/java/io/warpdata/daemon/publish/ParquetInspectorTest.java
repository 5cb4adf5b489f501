package io.warpdata.daemon.publish;

import io.warpdata.manifest.Column;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ParquetInspectorTest {
    @TempDir
    Path tmp;

    @Test
    void readsRowCountAndSchemaFromFooter() throws Exception {
        Path f = TestData.parquet(tmp.resolve("part-0.parquet"), 1234, 500);
        try (ParquetInspector inspector = new ParquetInspector()) {
            ParquetInspector.ParquetInfo info = inspector.inspect(f);
            assertThat(info.rowCount()).isEqualTo(1234);
            assertThat(info.schema()).containsExactly(new Column("id", "BIGINT"), new Column("path", "VARCHAR"),
                    new Column("label", "INTEGER"), new Column("note", "VARCHAR"));
        }
    }

    @Test
    void fileThatIsNotParquetIsATypedErrorNamingIt() throws Exception {
        Path f = Files.writeString(tmp.resolve("data.csv"), "id,path\n1,a.png\n");
        try (ParquetInspector inspector = new ParquetInspector()) {
            assertThatThrownBy(() -> inspector.inspect(f))
                    .isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining(f.toString())
                    .hasMessageContaining("not a readable Parquet file")
                    .satisfies(e -> assertThat(((InvalidInputException) e).nextStep()).contains("COPY"))
                    .satisfies(e -> assertThat(((InvalidInputException) e).type()).isEqualTo("InvalidInput"));
        }
    }

    @Test
    void partitionColumnsAreTypedOverTheWholeTableAsDuckdbTypesThem() throws Exception {
        // Written by DuckDB's own PARTITION_BY, as users write them: hour=00..23 (a leading zero
        // is text to DuckDB, so the column is VARCHAR though hour=10 alone would be BIGINT), and
        // a NULL year (__HIVE_DEFAULT_PARTITION__), which types nothing.
        Path hours = tmp.resolve("src/run=3/hours");
        Path years = tmp.resolve("years");
        Files.createDirectories(hours.getParent());
        try (var c = java.sql.DriverManager.getConnection("jdbc:duckdb:"); var st = c.createStatement()) {
            st.execute("COPY (SELECT i AS id, lpad((i % 24)::VARCHAR, 2, '0') AS hour FROM range(48) t(i)) TO '"
                    + hours + "' (FORMAT PARQUET, PARTITION_BY (hour))");
            st.execute("COPY (SELECT i AS id, CASE WHEN i % 4 = 0 THEN NULL ELSE 2020 + i % 2 END AS year"
                    + " FROM range(48) t(i)) TO '" + years + "' (FORMAT PARQUET, PARTITION_BY (year))");
        }
        try (ParquetInspector inspector = new ParquetInspector()) {
            Path ten = hours.resolve("hour=10/data_0.parquet");
            assertThat(inspector.inspect(ten).schema()).as("a file's own columns: no folder adds one")
                    .containsExactly(new Column("id", "BIGINT"));
            java.util.List<Path> files = new java.util.ArrayList<>();
            java.util.List<String> dirs = new java.util.ArrayList<>();
            for (int h = 0; h < 24; h++) {
                String dir = "hour=%02d".formatted(h);
                files.add(hours.resolve(dir).resolve("data_0.parquet"));
                dirs.add(dir);
            }
            // run=3 lies above the table's folder: it is no column of the table.
            assertThat(inspector.partitionedSchema(files, dirs))
                    .containsExactly(new Column("id", "BIGINT"), new Column("hour", "VARCHAR"));
            assertThat(inspector.partitionedSchema(files.subList(10, 12), dirs.subList(10, 12)))
                    .containsExactly(new Column("id", "BIGINT"), new Column("hour", "BIGINT"));
            assertThat(inspector.partitionedSchema(
                    java.util.List.of(years.resolve("year=__HIVE_DEFAULT_PARTITION__/data_0.parquet"),
                            years.resolve("year=2020/data_0.parquet"), years.resolve("year=2021/data_0.parquet")),
                    java.util.List.of("year=__HIVE_DEFAULT_PARTITION__", "year=2020", "year=2021")))
                    .containsExactly(new Column("id", "BIGINT"), new Column("year", "BIGINT"));
        }
        try (var links = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            assertThat(links.filter(p -> p.getFileName().toString().startsWith("warp-partitions-")).toList())
                    .as("the temp folder of links is deleted").isEmpty();
        }
    }
}
