package io.warpdata.daemon.ops;

import static org.assertj.core.api.Assertions.assertThat;

import io.warpdata.daemon.demo.SampleData;
import io.warpdata.daemon.demo.Sql;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SampleDataTest {
    @TempDir
    Path dir;

    @Test
    void writesOneFolderPerLabelAndATableRowPerImage() throws Exception {
        SampleData.Output out = new SampleData(dir, 5).generate();

        assertThat(out.imageCount()).isEqualTo(15);
        for (String label : SampleData.LABELS) {
            try (Stream<Path> files = Files.list(out.images().resolve(label))) {
                assertThat(files).hasSize(5).allMatch(p -> p.getFileName().toString().startsWith(label + "_"));
            }
        }
        Path cat = out.images().resolve("cat/cat_000.png");
        assertThat(ImageIO.read(cat.toFile()).getWidth()).isEqualTo(64);

        String rows = query("SELECT label, count(*) AS n, count(*) FILTER (split = 'val') AS val FROM read_parquet('"
                + out.table() + "') GROUP BY label ORDER BY label");
        assertThat(rows).contains("cat   | 5 | 1", "dog   | 5 | 1", "fish  | 5 | 1");
    }

    @Test
    void tablePathsNameTheImagesInsideTheImagesFolder() throws Exception {
        SampleData.Output out = new SampleData(dir, 2).generate();

        String paths = query("SELECT path FROM read_parquet('" + out.table() + "') ORDER BY id");
        List<String> listed = paths.lines().skip(2).filter(l -> !l.startsWith("(")).toList();
        assertThat(listed).hasSize(6).allSatisfy(p -> assertThat(out.images().resolve(p)).isRegularFile());
    }

    @Test
    void generatingTwiceWritesIdenticalBytes() throws Exception {
        SampleData.Output first = new SampleData(dir.resolve("a"), 3).generate();
        SampleData.Output second = new SampleData(dir.resolve("b"), 3).generate();

        assertThat(Files.readAllBytes(second.table())).isEqualTo(Files.readAllBytes(first.table()));
        assertThat(Files.readAllBytes(second.images().resolve("dog/dog_002.png")))
                .isEqualTo(Files.readAllBytes(first.images().resolve("dog/dog_002.png")));
    }

    @Test
    void sqlRendersAnAlignedTable() throws Exception {
        assertThat(query("SELECT 1 AS id, 'cat' AS label UNION ALL SELECT 22, 'fish' ORDER BY id"))
                .isEqualTo("""
                        id | label
                        ---+------
                        1  | cat
                        22 | fish
                        (2 rows)
                        """);
    }

    private static String query(String sql) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            Sql.run(sql, out);
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }
}
