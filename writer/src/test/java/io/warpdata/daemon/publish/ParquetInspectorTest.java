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
}
