package io.warpdata.daemon.mount;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import javax.imageio.ImageIO;
import java.awt.Color;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tags, branches and views end to end (issue 14): a real S3Proxy, warpctl and warpd from the
 * shaded jar, a real mount, and unmodified torchvision ImageFolder reading views.
 *
 * <p>The parent, {@code zoo/animals}: 5,000 PNG images in 50 class folders (100 each, written by
 * ImageIO) and a labels table {@code main} (path, label, id) written by DuckDB, bound to the
 * images. The tests run in order, each a stage of the same story.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ViewsIT {
    private static final int CLASSES = 50;
    private static final int PER_CLASS = 100;
    private static final String PARENT = "zoo/animals";
    private static final ObjectMapper JSON = new ObjectMapper();

    private static MountedStore store;
    private static Path src;
    private static String v1;

    @BeforeAll
    static void publishTheParentAndMount() throws Exception {
        store = MountedStore.start("it-views", "--pointer-ttl", "1s");
        src = Files.createDirectories(store.work.resolve("src"));
        writeImages(src.resolve("images"));
        writeLabels(src.resolve("main"), "");
        JsonNode p = json(store.warpctl("publish", PARENT, "--table", "main=" + src.resolve("main") + "/*.parquet",
                "--artifact", "images=" + src.resolve("images"), "--bind", "main.path=images:image", "--set-latest",
                "--json"));
        v1 = p.get("version").asText();
    }

    @AfterAll
    static void stopEverything() throws IOException {
        if (store != null) {
            store.close();
        }
    }

    /** {@code c00..c49/img0..99.png}: 8x8 RGB PNGs, each one different. */
    private static void writeImages(Path dir) throws IOException {
        for (int c = 0; c < CLASSES; c++) {
            Path classDir = Files.createDirectories(dir.resolve(String.format("c%02d", c)));
            for (int i = 0; i < PER_CLASS; i++) {
                BufferedImage img = new BufferedImage(8, 8, BufferedImage.TYPE_INT_RGB);
                for (int y = 0; y < 8; y++) {
                    for (int x = 0; x < 8; x++) {
                        img.setRGB(x, y, new Color(c * 5, i * 2, (x * 8 + y) * 4).getRGB());
                    }
                }
                ImageIO.write(img, "png", classDir.resolve("img" + i + ".png").toFile());
            }
        }
    }

    /** {@code dir/labels.parquet} by DuckDB: one row per image (path, label, id), plus {@code extraRows} SQL. */
    private static void writeLabels(Path dir, String extraRows) throws Exception {
        Files.createDirectories(dir);
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement s = c.createStatement()) {
            s.execute("COPY (SELECT printf('c%02d/img%d.png', cls, i) AS path, printf('c%02d', cls) AS label,"
                    + " cls * " + PER_CLASS + " + i AS id FROM range(" + CLASSES + ") a(cls), range(" + PER_CLASS + ") b(i)"
                    + extraRows + " ORDER BY id) TO '" + dir.resolve("labels.parquet") + "' (FORMAT PARQUET)");
        }
    }

    private static JsonNode json(Shell.Result r) {
        r.requireSuccess();
        try {
            return JSON.readTree(r.out());
        } catch (IOException e) {
            throw new UncheckedIOException("not JSON: " + r.out(), e);
        }
    }

    /** ImageFolder + DataLoader(num_workers=2) over {@code root}: images per class, as the loader saw them. */
    private static Map<String, Integer> imageFolder(Path root) throws IOException {
        Path script = store.work.resolve("imagefolder.py");
        Files.writeString(script, """
                import sys, collections
                import torch
                from torchvision import datasets, transforms
                ds = datasets.ImageFolder(sys.argv[1], transform=transforms.ToTensor())
                loader = torch.utils.data.DataLoader(ds, batch_size=64, num_workers=2, shuffle=False)
                counts = collections.Counter()
                for images, targets in loader:
                    assert images.shape[1:] == (3, 8, 8), images.shape
                    counts.update(ds.classes[t] for t in targets.tolist())
                for name in ds.classes:
                    print(name, counts[name])
                """);
        Shell.Result r = Shell.run(null, Map.of(), 300, List.of("/usr/bin/python3", script.toString(), root.toString()))
                .requireSuccess();
        Map<String, Integer> out = new TreeMap<>();
        r.out().lines().filter(l -> !l.isBlank()).forEach(l -> out.put(l.split(" ")[0], Integer.parseInt(l.split(" ")[1])));
        return out;
    }

    private static long duckdbCount(Path parquetDir) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM read_parquet('" + parquetDir + "/*.parquet')")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    @Order(1)
    void aTagKeepsServingItsVersionAfterANewLatestAndNeverMoves() throws Exception {
        json(store.warpctl("tag", PARENT, "v1", "--json"));
        // v2: one more image in c00
        Files.copy(src.resolve("images/c00/img0.png"), src.resolve("images/c00/extra.png"));
        JsonNode p2 = json(store.warpctl("publish", PARENT, "--table", "main=" + src.resolve("main") + "/*.parquet",
                "--artifact", "images=" + src.resolve("images"), "--bind", "main.path=images:image", "--set-latest",
                "--json"));
        String v2 = p2.get("version").asText();
        assertThat(v2).isNotEqualTo(v1);
        MountIT.waitFor(() -> readLink("zoo/animals").equals("animals@" + v2));

        assertThat(readLink("zoo/animals@v1")).isEqualTo("animals@" + v1);
        assertThat(store.mount.resolve("zoo/animals@v1/images/c00/extra.png")).doesNotExist();
        assertThat(store.mount.resolve("zoo/animals/images/c00/extra.png")).isRegularFile();
        assertThat(Files.readAllBytes(store.mount.resolve("zoo/animals@v1/images/c01/img5.png")))
                .isEqualTo(Files.readAllBytes(src.resolve("images/c01/img5.png")));

        Shell.Result again = store.warpctl("tag", PARENT, "v1");
        assertThat(again.exit()).as(again.err()).isEqualTo(1);
        assertThat(again.err()).contains("already names version " + v1.substring(0, 16), "tags never move",
                "what to do:");
        assertThat(store.warpctl("tag", PARENT + "@" + v1.substring(0, 10), "v1").requireSuccess().out())
                .contains("already names " + v1, "nothing written");
        // Moved with --force: said so, and followed by the mount like a branch (audit 19).
        assertThat(store.warpctl("tag", PARENT, "v1", "--force").requireSuccess().out())
                .contains("tagged " + PARENT + "@v1 -> " + v2, "(moved: it named " + v1);
        MountIT.waitFor(() -> readLink("zoo/animals@v1").equals("animals@" + v2));
        store.warpctl("tag", PARENT + "@" + v1.substring(0, 10), "v1", "--force").requireSuccess();
        MountIT.waitFor(() -> readLink("zoo/animals@v1").equals("animals@" + v1));
        Shell.Result hexName = store.warpctl("tag", PARENT, "deadbeef");
        assertThat(hexName.exit()).isEqualTo(2);
        assertThat(hexName.err()).contains("could be read as a version hash prefix");

        json(store.warpctl("publish", PARENT, "--table", "main=" + src.resolve("main") + "/*.parquet",
                "--artifact", "images=" + src.resolve("images"), "--bind", "main.path=images:image", "--branch", "dev",
                "--json"));
        MountIT.waitFor(() -> Files.isSymbolicLink(store.mount.resolve("zoo/animals@dev")));
        assertThat(readLink("zoo/animals@dev")).isEqualTo("animals@" + v2);

        JsonNode listing = json(store.warpctl("list-remote", PARENT, "--json"));
        assertThat(listing.get("latest").asText()).isEqualTo(v2);
        assertThat(listing.get("tags").get("v1").asText()).isEqualTo(v1);
        assertThat(listing.get("branches").get("dev").asText()).isEqualTo(v2);
        assertThat(listing.get("versions")).hasSize(2);
        assertThat(listing.get("versions").get(0).get("version").asText()).as("newest first").isEqualTo(v2);
        assertThat(listing.get("versions").get(0).get("created_at").asText()).isNotEmpty();
        assertThat(store.warpctl("info", PARENT + "@v1").requireSuccess().out()).contains("names:    tag v1");

        json(store.warpctl("tag", PARENT + "@v1", "scratch", "--json"));
        MountIT.waitFor(() -> readLink("zoo/animals@scratch").equals("animals@" + v1));
        var deleted = json(store.warpctl("tag", "--delete", PARENT, "scratch", "--json"));
        assertThat(deleted.get("deleted").asBoolean()).isTrue();
        assertThat(deleted.get("version").asText()).as("what it named, to tag it again").isEqualTo(v1);
        assertThat(json(store.warpctl("list-remote", PARENT, "--json")).get("tags").has("scratch")).isFalse();
        Shell.Result gone = store.warpctl("tag", "--delete", PARENT, "scratch");
        assertThat(gone.exit()).isEqualTo(1);
        Files.delete(src.resolve("images/c00/extra.png"));
    }

    private static String readLink(String path) {
        try {
            return Files.readSymbolicLink(store.mount.resolve(path)).toString();
        } catch (IOException e) {
            return "";
        }
    }

    @Test
    @Order(2)
    void aWhereViewShowsExactlyTheSelectedClassesInImageFolder() throws Exception {
        store.s3.resetCounters();
        JsonNode v = json(store.warpctl("view", PARENT + "@v1", "--as", "zoo/three", "--where",
                "label IN ('c01', 'c07', 'c42')", "--json"));
        long received = store.s3.counters().bytesReceived.sum();
        assertThat(v.get("rows").asLong()).isEqualTo(3L * PER_CLASS);
        assertThat(v.get("members").get("images").asLong()).isEqualTo(3L * PER_CLASS);
        assertThat(v.get("parent").asText()).isEqualTo(PARENT + "@" + v1);
        // No member byte is copied: the store received the view's table, its index, their hash
        // lists, the manifest and the pointer, nothing near the parent's shards.
        long parentShardBytes = json(store.warpctl("info", PARENT + "@v1", "--json")).get("stats").get("total_bytes").asLong();
        assertThat(received).as("bytes the store received for the view").isLessThan(parentShardBytes / 20);
        assertThat(v.get("bytes_uploaded").asLong()).isLessThan(parentShardBytes / 20);

        MountIT.waitFor(() -> Files.isDirectory(store.mount.resolve("zoo/three/images")));
        assertThat(imageFolder(store.mount.resolve("zoo/three/images")))
                .isEqualTo(Map.of("c01", PER_CLASS, "c07", PER_CLASS, "c42", PER_CLASS));
        assertThat(duckdbCount(store.mount.resolve("zoo/three/main"))).isEqualTo(3L * PER_CLASS);
        assertThat(Files.readAllBytes(store.mount.resolve("zoo/three/images/c42/img99.png")))
                .isEqualTo(Files.readAllBytes(src.resolve("images/c42/img99.png")));
        String info = store.warpctl("info", "zoo/three").requireSuccess().out();
        assertThat(info).contains("view of:  " + PARENT + "@" + v1, "where: label IN ('c01', 'c07', 'c42')", "latest");

        // A view of a view: its parent is the first view.
        String three = v.get("version").asText();
        JsonNode seven = json(store.warpctl("view", "zoo/three", "--as", "zoo/seven", "--where", "label = 'c07'",
                "--order-by", "id DESC", "--limit", "40", "--json"));
        assertThat(seven.get("parent").asText()).isEqualTo("zoo/three@" + three);
        assertThat(seven.get("rows").asLong()).isEqualTo(40);
        MountIT.waitFor(() -> Files.isDirectory(store.mount.resolve("zoo/seven/images/c07")));
        try (Stream<Path> files = Files.list(store.mount.resolve("zoo/seven/images/c07"))) {
            assertThat(files.map(f -> f.getFileName().toString()).sorted().toList())
                    .as("the 40 highest ids of class c07").hasSize(40).contains("img99.png", "img60.png")
                    .doesNotContain("img59.png");
        }
    }

    @Test
    @Order(3)
    void aStratifiedSampleOf500Over50ClassesHas10PerClassAndTheSameCommandGivesTheSameVersion() throws Exception {
        JsonNode first = json(store.warpctl("view", PARENT + "@v1", "--as", "zoo/sample", "--sample", "500",
                "--stratify-by", "label", "--seed", "7", "--json"));
        assertThat(first.get("rows").asLong()).isEqualTo(500);
        JsonNode second = json(store.warpctl("view", PARENT + "@v1", "--as", "zoo/sample", "--sample", "500",
                "--stratify-by", "label", "--seed", "7", "--json"));
        assertThat(second.get("version").asText()).isEqualTo(first.get("version").asText());
        assertThat(second.get("manifest_written").asBoolean()).isFalse();
        assertThat(second.get("bytes_uploaded").asLong()).isZero();
        Shell.Result larger = store.warpctl("view", PARENT + "@v1", "--as", "zoo/everything", "--sample", "1000000",
                "--seed", "7");
        larger.requireSuccess();
        assertThat(larger.err()).as("a sample larger than the table is all of it, and said")
                .contains("fewer than --sample 1000000", "has no more");
        JsonNode other = json(store.warpctl("view", PARENT + "@v1", "--as", "zoo/sample", "--sample", "500",
                "--stratify-by", "label", "--seed", "8", "--branch", "seed8", "--json"));
        assertThat(other.get("version").asText()).as("another seed").isNotEqualTo(first.get("version").asText());

        MountIT.waitFor(() -> readLink("zoo/sample").equals("sample@" + first.get("version").asText()));
        Map<String, Integer> perClass = imageFolder(store.mount.resolve("zoo/sample/images"));
        assertThat(perClass).hasSize(CLASSES).allSatisfy((k, n) -> assertThat(n).as(k).isEqualTo(10));
    }

    @Test
    @Order(4)
    void readingAViewOfAWarmedParentIssuesNoGet() throws Exception {
        Shell.bash("find " + store.mount.resolve("zoo/animals@v1/images") + " -type f -print0 | xargs -0 cat > /dev/null")
                .requireSuccess();
        String view = json(store.warpctl("view", PARENT + "@v1", "--as", "zoo/cats", "--where", "label = 'c03' OR id % 97 = 0",
                "--json")).get("version").asText();
        Path root = store.mount.resolve("zoo/cats@" + view + "/images");
        // The view's own manifest and member index are new, small blobs: the listing reads them.
        Shell.run("ls", "-R", root.toString()).requireSuccess();
        store.s3.resetCounters();
        Shell.Result sums = Shell.bash("cd " + root + " && find . -type f | sort | xargs sha256sum").requireSuccess();
        assertThat(sums.out().lines().count()).isGreaterThan(PER_CLASS);
        // Only the mount's background re-checks of the links it watches (conditional GETs of a
        // pointer, on the 1 s pointer TTL) may happen meanwhile; no GET of any blob.
        assertThat(store.s3.counters().gets() - store.s3.counters().conditionalGets.sum())
                .as("GETs reading the view's members, %s %s", store.s3.counters(), store.s3.counters().metadataRequests).isZero();
        assertThat(store.s3.counters().bytesServed()).as("bytes served, %s", store.s3.counters()).isZero();
        for (String line : sums.out().lines().toList()) {
            String rel = line.substring(66).replaceFirst("^\\./", "");
            assertThat(line.substring(0, 64)).as(rel)
                    .isEqualTo(SampleData.sha256(Files.readAllBytes(src.resolve("images").resolve(rel))));
        }
    }

    @Test
    @Order(5)
    void badViewsAreRefusedWithAClearErrorAndPublishNothing() throws Exception {
        Shell.Result sql = store.warpctl("view", PARENT, "--as", "zoo/bad", "--where", "lable = 'c01'");
        assertThat(sql.exit()).isEqualTo(1);
        assertThat(sql.err()).contains("DuckDB refused the view's --where", "has the columns path, label, id");
        Shell.Result none = store.warpctl("view", PARENT, "--as", "zoo/bad", "--where", "label = 'nope'");
        assertThat(none.exit()).isEqualTo(1);
        assertThat(none.err()).contains("The view selects no rows");
        Shell.Result self = store.warpctl("view", PARENT, "--as", PARENT, "--where", "label = 'c01'");
        assertThat(self.exit()).isEqualTo(1);
        assertThat(self.err()).contains("is the source dataset itself", "--set-latest");
        Shell.Result column = store.warpctl("view", PARENT, "--as", "zoo/bad", "--sample", "10", "--stratify-by", "colour");
        assertThat(column.exit()).isEqualTo(1);
        assertThat(column.err()).contains("'colour' is not a column of table main", "path, label, id");

        Path broken = Files.createDirectories(store.work.resolve("broken"));
        writeLabels(broken, " UNION ALL SELECT 'c00/missing.png', 'c00', 999999");
        // A row naming no member is refused at publish (issue 23), naming the user's file, row and value.
        Shell.Result refused = store.warpctl("publish", "zoo/broken", "--table", "main=" + broken + "/*.parquet",
                "--artifact", "images=" + src.resolve("images"), "--bind", "main.path=images:image", "--set-latest");
        assertThat(refused.exit()).isEqualTo(1);
        assertThat(refused.err()).contains("1 of 5001 row(s) name no member of artifact 'images'",
                "row 5000 of " + broken.resolve("labels.parquet") + " names 'c00/missing.png'", "--allow-missing-members");
        // Published anyway, a view skips the missing member and its facts say how many values named none.
        json(store.warpctl("publish", "zoo/broken", "--table", "main=" + broken + "/*.parquet",
                "--artifact", "images=" + src.resolve("images"), "--bind", "main.path=images:image", "--set-latest",
                "--allow-missing-members", "--json"));
        JsonNode skipped = json(store.warpctl("view", "zoo/broken", "--as", "zoo/skipped", "--where", "label = 'c00'",
                "--json"));
        assertThat(skipped.get("rows").asLong()).isEqualTo(PER_CLASS + 1);
        assertThat(skipped.get("members").get("images").asLong()).isEqualTo(PER_CLASS);
        assertThat(store.warpctl("inspect", "zoo/skipped").requireSuccess().out())
                .contains("missing_members: 1 selected value(s) naming no member");

        JsonNode ws = json(store.warpctl("list-remote", "zoo/", "--json"));
        assertThat(ws.get("datasets").findValuesAsText("dataset")).doesNotContain("zoo/bad");
    }
}
