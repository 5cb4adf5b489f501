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
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 23 items 4-7 end to end: a real S3Proxy, warpctl and warpd from the shaded jar (publish
 * goes through warpd, as it does for a user with a running daemon), a real mount with the
 * default pointer TTL of 30 s, so that whatever shows at once was made visible on purpose.
 *
 * <ul>
 *   <li>files that are not whole tars (text, a PNG, zeros, a tar cut by head -c) are refused;</li>
 *   <li>bound values naming no member are refused, or recorded with --allow-missing-members;</li>
 *   <li>a view onto an existing dataset leaves its latest alone; {@code warpctl latest} moves it
 *       and moves it back; {@code warpctl branch} creates and deletes a branch;</li>
 *   <li>a view, a new workspace, a latest move and a branch deletion show in the running
 *       warpd's listings as soon as the command returns.</li>
 * </ul>
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PublishChecksIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int IMAGES = 12;

    private static MountedStore store;
    private static Path src;
    private static String pets;
    private static String many;

    @BeforeAll
    static void publishTwoDatasets() throws Exception {
        store = MountedStore.start("it-checks");
        src = Files.createDirectories(store.work.resolve("src"));
        Random random = new Random(23);
        for (int i = 0; i < IMAGES; i++) {
            BufferedImage img = new BufferedImage(8, 8, BufferedImage.TYPE_INT_RGB);
            for (int p = 0; p < 64; p++) {
                img.setRGB(p % 8, p / 8, random.nextInt(0xffffff));
            }
            Path f = Files.createDirectories(src.resolve("images/" + (i % 2 == 0 ? "cat" : "dog")))
                    .resolve("img" + i + ".png");
            ImageIO.write(img, "png", f.toFile());
        }
        labels(src.resolve("main/a.parquet"), "");
        pets = json(store.warpctl("publish", "t/pets", "--table", "main=" + src.resolve("main/a.parquet"),
                "--artifact", "images=" + src.resolve("images"), "--bind", "main.path=images:image", "--set-latest",
                "--json")).get("version").asText();
        // Another dataset whose latest a careless view could take over (the issue's t/many).
        Files.createDirectories(src.resolve("many/x"));
        Files.writeString(src.resolve("many/x/1.txt"), "one");
        many = json(store.warpctl("publish", "t/many", "--artifact", "files=" + src.resolve("many"), "--set-latest",
                "--json")).get("version").asText();
    }

    @AfterAll
    static void stopEverything() throws IOException {
        if (store != null) {
            store.close();
        }
    }

    /** {@code file} by DuckDB: (path, label) naming every image, plus {@code extra} rows (SQL). */
    private static void labels(Path file, String extra) throws Exception {
        Files.createDirectories(file.getParent());
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement s = c.createStatement()) {
            s.execute("COPY (SELECT * FROM (SELECT CASE WHEN i % 2 = 0 THEN 'cat' ELSE 'dog' END || '/img' || i || '.png'"
                    + " AS path, CASE WHEN i % 2 = 0 THEN 'cat' ELSE 'dog' END AS label, i AS id FROM range(" + IMAGES
                    + ") t(i)" + extra + ") ORDER BY id) TO '" + file + "' (FORMAT PARQUET)");
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

    private static String readLink(String path) throws IOException {
        return Files.readSymbolicLink(store.mount.resolve(path)).toString();
    }

    private static List<String> ls(String dir) throws IOException {
        try (var s = Files.list(store.mount.resolve(dir))) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    private static List<String> datasets(String ws) {
        return json(store.warpctl("list-remote", ws + "/", "--json")).get("datasets").findValuesAsText("dataset");
    }

    @Test
    @Order(1)
    void filesThatAreNotWholeTarsAreRefusedNamingTheFileAndPublishNothing() throws Exception {
        Path text = Files.writeString(store.work.resolve("note.txt"), "hi");
        Path png = src.resolve("images/cat/img0.png");
        Path zeros = store.work.resolve("zeros.bin");
        Shell.run("bash", "-c", "head -c 10240 /dev/zero > " + zeros).requireSuccess();
        Path tar = store.work.resolve("two.tar");
        Shell.run("/usr/bin/python3", "-c", """
                import io, sys, tarfile
                with tarfile.open(sys.argv[1], 'w') as t:
                    for i in range(2):
                        data = b'x' * 600
                        info = tarfile.TarInfo('s/%d.jpg' % i)
                        info.size = len(data)
                        t.addfile(info, io.BytesIO(data))
                """, tar.toString()).requireSuccess();
        Path cut = store.work.resolve("cut.tar");
        // member 0: header and data 0-1536; cut 200 bytes into member 1's header
        Shell.run("bash", "-c", "head -c 1736 " + tar + " > " + cut).requireSuccess();
        assertThat(Files.size(png)).isLessThan(512);
        for (Path f : List.of(text, png, zeros, cut)) {
            Shell.Result r = store.warpctl("publish", "t/bad", "--artifact", "x=" + f, "--set-latest");
            assertThat(r.exit()).as(f + ": " + r.err()).isEqualTo(1);
            assertThat(r.err()).as(f.toString()).contains(f.toString());
        }
        assertThat(store.warpctl("publish", "t/bad", "--artifact", "x=" + text).err())
                .contains("is not a tar file", "put it in a folder and give the folder: --artifact x=DIR");
        assertThat(store.warpctl("publish", "t/bad", "--artifact", "x=" + cut).err())
                .contains("is cut short or damaged");
        // The whole tar is fine.
        assertThat(json(store.warpctl("publish", "t/whole", "--artifact", "x=" + tar, "--json")).get("members").asLong())
                .isEqualTo(2);
        assertThat(datasets("t")).doesNotContain("t/bad");
    }

    /**
     * --staging-dir with warpd running (audit 31: warpd staged in its own cache directory whatever
     * was given, and a full one's error advised this very option): warpctl publishes in its own
     * process, staging there, and leaves nothing behind.
     */
    @Test
    @Order(10)
    void aStagingDirIsWhereThePublishStagesEvenWithWarpdRunning() throws Exception {
        Path notADir = Files.writeString(store.work.resolve("staging-file"), "x");
        Shell.Result r = store.warpctl("publish", "t/staged", "--artifact", "files=" + src.resolve("many"),
                "--staging-dir", notADir.toString());
        assertThat(r.exit()).as(r.err()).isNotZero();
        assertThat(r.err()).contains(notADir.toString());
        Path dir = Files.createDirectories(store.work.resolve("staging"));
        store.warpctl("publish", "t/staged", "--artifact", "files=" + src.resolve("many"), "--staging-dir", dir.toString(),
                "--set-latest").requireSuccess();
        try (java.util.stream.Stream<Path> left = Files.list(dir)) {
            assertThat(left.toList()).as("the staged shards are removed").isEmpty();
        }
        assertThat(datasets("t")).contains("t/staged");
    }

    @Test
    @Order(2)
    void boundValuesNamingNoMemberAreRefusedOrRecordedWithAllowMissingMembers() throws Exception {
        Path broken = src.resolve("broken/a.parquet");
        labels(broken, " UNION ALL SELECT 'cow/img99.png', 'cow', 100 UNION ALL SELECT 'cat', 'cat', 101");
        List<String> publish = List.of("publish", "t/broken", "--table", "main=" + broken, "--artifact",
                "images=" + src.resolve("images"), "--bind", "main.path=images:image", "--set-latest");
        Shell.Result refused = store.warpctl(publish.toArray(String[]::new));
        assertThat(refused.exit()).isEqualTo(1);
        assertThat(refused.err()).contains("2 of 14 row(s) name no member of artifact 'images'",
                "row 12 of " + broken + " names 'cow/img99.png'", "row 13 of " + broken + " names 'cat'",
                "'cat' is a folder of the artifact, not a member", "--allow-missing-members")
                .doesNotContain("parent-0.parquet");
        assertThat(datasets("t")).doesNotContain("t/broken");

        List<String> allowed = new java.util.ArrayList<>(publish);
        allowed.add("--allow-missing-members");
        store.warpctl(allowed.toArray(String[]::new)).requireSuccess();
        assertThat(store.warpctl("inspect", "t/broken").requireSuccess().out())
                .contains("missing_members: 2 of 14 row(s) of main.path");
    }

    @Test
    @Order(3)
    void aViewOntoAnExistingDatasetLeavesItsLatestAndSaysHowToPointAtIt() throws Exception {
        assertThat(readLink("t/many")).isEqualTo("many@" + many);
        Shell.Result r = store.warpctl("view", "t/pets", "--as", "t/many", "--where", "label = 'cat'");
        r.requireSuccess();
        String view = r.out().replaceAll("(?s).*published view t/many@([0-9a-f]{64}).*", "$1");
        assertThat(view).hasSize(64);
        assertThat(r.out()).contains("latest of t/many not moved (still " + many.substring(0, 12) + ")",
                "t/many@" + view.substring(0, 16), "warpctl latest t/many " + view.substring(0, 16));
        assertThat(json(store.warpctl("info", "t/many", "--json")).get("version").asText()).isEqualTo(many);
        assertThat(readLink("t/many")).isEqualTo("many@" + many);
        // The view's version is readable by its hash at once.
        assertThat(ls("t/many@" + view.substring(0, 16) + "/images")).containsExactly("cat");

        // latest moves only when asked, by compare-and-swap, and shows in the mount at once ...
        JsonNode moved = json(store.warpctl("latest", "t/many", view.substring(0, 16), "--json"));
        assertThat(moved.get("from").asText()).isEqualTo(many);
        assertThat(moved.get("moved").asBoolean()).isTrue();
        assertThat(readLink("t/many")).isEqualTo("many@" + view);
        // ... and back.
        assertThat(store.warpctl("latest", "t/many", many.substring(0, 12)).requireSuccess().out())
                .contains("latest of t/many: " + view.substring(0, 12) + " -> " + many);
        assertThat(readLink("t/many")).isEqualTo("many@" + many);
        assertThat(store.warpctl("latest", "t/many", many.substring(0, 12)).requireSuccess().out())
                .contains("already names");

        // publish without --set-latest says the same
        Shell.Result p = store.warpctl("publish", "t/many", "--artifact", "files=" + src.resolve("images"));
        assertThat(p.requireSuccess().out()).contains("latest of t/many not moved", "warpctl latest t/many ");
        assertThat(readLink("t/many")).isEqualTo("many@" + many);
    }

    @Test
    @Order(4)
    void aBranchIsCreatedAndDeletedAndTagDeleteOfABranchSaysWhatToDo() throws Exception {
        json(store.warpctl("branch", "t/pets@" + pets.substring(0, 12), "dev", "--json"));
        assertThat(readLink("t/pets@dev")).isEqualTo("pets@" + pets);
        Shell.Result tagDelete = store.warpctl("tag", "--delete", "t/pets", "dev");
        assertThat(tagDelete.exit()).isEqualTo(1);
        assertThat(tagDelete.err()).contains("t/pets@dev is a branch, not a tag", "warpctl branch --delete t/pets dev")
                .doesNotContain("not published");
        Shell.Result deleted = store.warpctl("branch", "--delete", "t/pets", "dev");
        assertThat(deleted.requireSuccess().out()).contains("deleted branch t/pets@dev", pets);
        assertThat(json(store.warpctl("list-remote", "t/pets", "--json")).toString()).doesNotContain("\"dev\"");
        assertThat(store.mount.resolve("t/pets@dev")).doesNotExist();
        // Its version stays published and mounted.
        assertThat(ls("t/pets@" + pets.substring(0, 16) + "/images")).containsExactly("cat", "dog");
        Shell.Result again = store.warpctl("branch", "--delete", "t/pets", "dev");
        assertThat(again.exit()).isEqualTo(1);
    }

    @Test
    @Order(5)
    void aViewShowsInTheRunningWarpdsListingsAsSoonAsTheCommandReturns() throws Exception {
        // The listings are cached first, and the new names looked up (and missed) once.
        assertThat(ls("t")).doesNotContain("brandnew");
        assertThat(ls("")).doesNotContain("ws3");
        assertThat(store.mount.resolve("ws3")).doesNotExist();
        assertThat(store.mount.resolve("t/brandnew")).doesNotExist();

        store.warpctl("view", "t/pets", "--as", "ws3/v", "--where", "label = 'dog'").requireSuccess();
        assertThat(ls("")).contains("ws3");
        assertThat(ls("ws3")).contains("v");
        assertThat(ls("ws3/v/images")).containsExactly("dog");

        store.warpctl("view", "t/pets", "--as", "t/brandnew", "--where", "label = 'cat'").requireSuccess();
        assertThat(ls("t")).contains("brandnew");
        assertThat(ls("t/brandnew/images")).containsExactly("cat");
    }

    @Test
    @Order(6)
    void aPublishToAnotherEndpointThanWarpdsIsNotSentThroughWarpd() throws Exception {
        // The same bucket and prefix on another server (here: none listening) is another store:
        // audit 19's publish went through warpd, to warpd's server, and said nothing.
        String elsewhere = "http://127.0.0.1:1";
        Shell.Result r = store.warpctl("--endpoint", elsewhere, "publish", "t/elsewhere",
                "--table", "main=" + src.resolve("main/a.parquet"), "--set-latest");
        assertThat(r.exit()).as(r.err()).isNotZero();
        assertThat(r.err()).doesNotContain("publishing through warpd")
                .contains("publishing directly to " + elsewhere)
                .contains("127.0.0.1:1");
        assertThat(datasets("t")).as("nothing reached warpd's store").doesNotContain("t/elsewhere");

        Shell.Result status = store.control("status");
        assertThat(status.out()).as("status names the endpoint warpd reaches the store at").containsPattern(
                "remote: +s3://\\S+ at http://");
        // Builds are told apart by their commit (audit 20: two builds both said "0.1.0").
        java.util.regex.Matcher built = java.util.regex.Pattern.compile("warpd (0\\.1\\.0\\+(?:[0-9a-f]{12}|unknown))")
                .matcher(status.out());
        assertThat(built.find()).as(status.out()).isTrue();
        assertThat(store.warpctl("--version").requireSuccess().out().strip()).isEqualTo("warpctl " + built.group(1));
    }
}
