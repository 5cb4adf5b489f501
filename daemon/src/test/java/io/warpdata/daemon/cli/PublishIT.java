package io.warpdata.daemon.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warpdata.store.BlobStore;
import io.warpdata.store.S3ProxyFixture;
import io.warpdata.store.StoreLayout;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Publish and inspect against a real S3 server (S3Proxy on loopback): the bucket layout, the
 * re-publish from a fresh process (same hash, zero PUTs), head/schema, and the typed errors for
 * wrong credentials and a corrupt manifest.
 */
class PublishIT {
    private static final int ROWS = 100_000;
    private static final int IMAGES = 40;

    @TempDir
    static Path dir;

    private static S3ProxyFixture s3;

    @BeforeAll
    static void start() throws Exception {
        s3 = S3ProxyFixture.start();
        Files.createDirectories(dir.resolve("data"));
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement()) {
            st.execute("COPY (SELECT i::BIGINT AS id, 'cls' || (i % 2) || '/' || lpad((i % " + IMAGES + ")::VARCHAR, 5, '0')"
                    + " || CASE WHEN i % 4 = 3 THEN '.jpg' ELSE '.png' END AS image, (i % 2)::INTEGER AS label,"
                    + " md5(i::VARCHAR) || md5((i * 31)::VARCHAR) AS note FROM range(" + ROWS + ") t(i) ORDER BY i)"
                    + " TO '" + dir.resolve("data/part-0.parquet") + "' (FORMAT PARQUET, ROW_GROUP_SIZE 10000)");
        }
        Random r = new Random(42);
        for (int i = 0; i < IMAGES; i++) {
            boolean jpg = i % 4 == 3;
            BufferedImage img = new BufferedImage(32, 32, BufferedImage.TYPE_INT_RGB);
            for (int y = 0; y < 32; y++) {
                for (int x = 0; x < 32; x++) {
                    img.setRGB(x, y, r.nextInt(0xffffff));
                }
            }
            Path f = dir.resolve(String.format("images/cls%d/%05d.%s", i % 2, i, jpg ? "jpg" : "png"));
            Files.createDirectories(f.getParent());
            assertThat(ImageIO.write(img, jpg ? "jpg" : "png", f.toFile())).isTrue();
        }
    }

    @AfterAll
    static void stop() {
        if (s3 != null) {
            s3.close();
        }
    }

    private record Run(int code, String out, String err) {
    }

    /** warpctl in this JVM, with the real store and reader. */
    private static Run inProcess(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Map<String, String> env = new HashMap<>(s3.env());
        env.put("USER", "it");
        env.putIfAbsent("WARP_SOCKET", dir.resolve("no-warpd.sock").toString()); // never this machine's warpd
        CliContext ctx = new CliContext(env, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), dir, Clock.systemUTC(),
                DefaultStores::open, DefaultStores::reader, false);
        int code = WarpctlCommand.run(args, ctx);
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** warpctl as a fresh process from the shaded jar. */
    private static Run subprocess(Map<String, String> env, String... args) throws Exception {
        Path jar = Path.of("target/warp.jar").toAbsolutePath();
        assertThat(jar).as("failsafe runs after package").exists();
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar", jar.toString(), "warpctl"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile());
        pb.environment().putAll(env);
        Path out = Files.createTempFile(dir, "out", ".txt");
        Path err = Files.createTempFile(dir, "err", ".txt");
        Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        try {
            assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("warpctl finished").isTrue();
        } finally {
            p.destroyForcibly();
        }
        return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    private static String[] publishArgs(String prefix, String... extra) {
        List<String> a = new ArrayList<>(List.of("publish", "vision/pets", "--remote", s3.remote(prefix),
                "--table", "main=data/*.parquet", "--artifact", "images=images", "--bind", "main.image=images:image",
                "--set-latest", "--shard-size", "64KiB", "--json"));
        a.addAll(List.of(extra));
        return a.toArray(String[]::new);
    }

    /** Every key under {@code prefix}, recursively. */
    private static List<String> keys(BlobStore store, String prefix) {
        List<String> out = new ArrayList<>();
        for (String child : store.list(prefix)) {
            if (child.endsWith("/")) {
                out.addAll(keys(store, prefix + child));
            } else {
                out.add(prefix + child);
            }
        }
        return out;
    }

    @Test
    void publishLaysOutTheBucketAsDesignedAndRepublishFromAFreshProcessPutsNothing() throws Exception {
        Run first = inProcess(publishArgs("layout"));
        assertThat(first.code()).as(first.err()).isZero();
        JsonNode result = new ObjectMapper().readTree(first.out());
        VersionHash version = new VersionHash(result.get("version").asText());
        assertThat(result.get("rows").asLong()).isEqualTo(ROWS);
        assertThat(result.get("members").asLong()).isEqualTo(IMAGES);
        assertThat(result.get("bytes_uploaded").asLong()).isGreaterThan(0);

        DatasetId id = new DatasetId("vision", "pets");
        try (BlobStore store = s3.openStore("layout")) {
            List<String> keys = keys(store, "");
            assertThat(keys).contains(StoreLayout.version(id, version), StoreLayout.latest(id));
            for (String k : keys) {
                boolean blob = k.matches("blobs/sha256/([0-9a-f]{2})/\\1[0-9a-f]{62}");
                assertThat(blob || k.equals(StoreLayout.version(id, version)) || k.equals(StoreLayout.latest(id)))
                        .as("unexpected key %s", k).isTrue();
            }
            String manifest = new String(store.get(StoreLayout.version(id, version)), StandardCharsets.UTF_8);
            assertThat(manifest).doesNotContain(dir.toString()).doesNotContain("/tmp").doesNotContain("file:");
        }

        s3.resetCounters();
        Map<String, String> env = new HashMap<>(s3.env());
        Run again = subprocess(env, publishArgs("layout"));
        assertThat(again.code()).as(again.err()).isZero();
        JsonNode second = new ObjectMapper().readTree(again.out());
        assertThat(second.get("version").asText()).isEqualTo(version.hex());
        assertThat(second.get("bytes_uploaded").asLong()).isZero();
        assertThat(s3.counters().puts()).as("server PUTs on re-publish").isZero();
        assertThat(s3.counters().parts.sum()).isZero();
        System.out.println("re-publish from a fresh process: " + s3.counters());
    }

    @Test
    void schemaAndHeadShowTheRightColumnsAndRowsReadingOnlyWhatIsNeeded() throws Exception {
        assertThat(inProcess(publishArgs("head")).code()).isZero();
        String remote = s3.remote("head");
        Run schema = inProcess("schema", "vision/pets", "--remote", remote);
        assertThat(schema.code()).as(schema.err()).isZero();
        assertThat(schema.out()).containsPattern("id\\s+BIGINT").containsPattern("image\\s+VARCHAR")
                .containsPattern("label\\s+INTEGER").containsPattern("note\\s+VARCHAR");

        Run head = inProcess("head", "vision/pets", "-n", "5", "--remote", remote);
        assertThat(head.code()).as(head.err()).isZero();
        List<String> lines = head.out().lines().toList();
        assertThat(lines).hasSize(7);
        assertThat(lines.get(0)).containsPattern("id\\s+image\\s+label\\s+note");
        assertThat(lines.get(2)).startsWith("0 ").contains("cls0/00000.png");
        assertThat(lines.get(6)).startsWith("4 ").contains("cls0/00004.png");

        Run json = inProcess("head", "vision/pets", "-n", "5", "--remote", remote, "--json");
        JsonNode h = new ObjectMapper().readTree(json.out());
        long read = h.get("bytes_read").asLong();
        long size = h.get("shard_bytes").asLong();
        long fetched = h.get("bytes_fetched").asLong();
        System.out.printf("head -n 5 over S3: DuckDB read %d, store fetched %d, of %d bytes (%.1f%%)%n",
                read, fetched, size, 100.0 * fetched / size);
        assertThat(fetched).isLessThan(size / 2);
        assertThat(h.get("rows").get(3).get("image").asText()).isEqualTo("cls1/00003.jpg");
        assertThat(read).isLessThan(size / 4);

        Run info = inProcess("info", "vision/pets", "--remote", remote);
        assertThat(info.out()).contains("vision/pets").contains("main").contains(Integer.toString(ROWS))
                .contains("images").contains("main.image");
        Run list = inProcess("list-remote", "vision/", "--remote", remote);
        assertThat(list.out()).contains("vision/pets");
    }

    @Test
    void wrongCredentialsAreAnAuthenticationErrorAndPublishNothing() throws Exception {
        Map<String, String> env = new HashMap<>(s3.env());
        env.put("AWS_SECRET_ACCESS_KEY", "wrong-secret");
        Run r = subprocess(env, publishArgs("badcreds"));
        assertThat(r.code()).isEqualTo(1);
        JsonNode err = new ObjectMapper().readTree(r.err().lines().filter(l -> l.startsWith("{")).findFirst().orElseThrow());
        assertThat(err.at("/error/type").asText()).as(r.err()).isEqualTo("AuthenticationError");
        assertThat(err.at("/error/next_step").asText()).contains("AWS_SECRET_ACCESS_KEY");
        try (BlobStore store = s3.openStore("badcreds")) {
            assertThat(keys(store, "")).isEmpty();
        }
    }

    @Test
    void corruptManifestInTheStoreIsReportedByInfo() throws Exception {
        Run pub = inProcess(publishArgs("corrupt"));
        assertThat(pub.code()).as(pub.err()).isZero();
        VersionHash version = new VersionHash(new ObjectMapper().readTree(pub.out()).get("version").asText());
        DatasetId id = new DatasetId("vision", "pets");
        try (BlobStore store = s3.openStore("corrupt")) {
            String key = StoreLayout.version(id, version);
            String json = new String(store.get(key), StandardCharsets.UTF_8);
            store.put(key, json.replace("\"row_count\":" + ROWS, "\"row_count\":" + (ROWS + 1))
                    .getBytes(StandardCharsets.UTF_8));
        }
        Run info = inProcess("info", "vision/pets", "--remote", s3.remote("corrupt"), "--json");
        assertThat(info.code()).isEqualTo(1);
        assertThat(new ObjectMapper().readTree(info.err()).at("/error/type").asText()).isEqualTo("ManifestCorrupted");
        Run text = inProcess("info", "vision/pets", "--remote", s3.remote("corrupt"));
        assertThat(text.err()).startsWith("error: ").contains("what to do:").doesNotContain("\tat ");
    }
}
