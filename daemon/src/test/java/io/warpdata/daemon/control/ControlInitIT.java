package io.warpdata.daemon.control;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code warpctl init} end to end without FUSE: the daemon answers over the socket (rows come from
 * its {@code table.batches}), the "mount" is a directory laid out exactly as the mount lays out a
 * version, and the stub runs under Debian's /usr/bin/python3 with the package {@code warpdata} of
 * this source tree (python/).
 */
class ControlInitIT {
    @TempDir
    Path tmp;

    private ControlWorld world;
    private ControlServer server;
    private Map<String, String> env;
    private Path mount;

    private String version;

    @BeforeEach
    void setUp() throws Exception {
        AccessPolicy policy = new AccessPolicy(ProcessIdentity.uid(), "root", Optional.empty());
        world = new ControlWorld(tmp);
        server = ControlServer.start(new ControlServer.Config(tmp.resolve("run/warpd.sock"), Optional.empty()),
                world.operations(policy, true), policy, new PeerResolver(EtcUserDatabase.system()));
        env = Map.of("WARP_SOCKET", server.socketPath().toString());
        Path src = tmp.resolve("src");
        writeSource(src);
        ObjectNode args = ControlProtocol.object().put("dataset", "ws/pets").put("set_latest", true);
        var tables = args.putObject("tables").putArray("main");
        for (int s = 0; s < 3; s++) {
            tables.add(src.resolve("main/part-" + s + ".parquet").toString());
        }
        args.putObject("artifacts").putArray("images").add(src.resolve("images").toString());
        args.putArray("bindings").add("main.path=images:image");
        try (ControlClient c = ControlClient.connect(server.socketPath())) {
            version = c.call("publish", args).get("version").asText();
        }
        // The version as the mount shows it (no FUSE here): its images where the refs look for them.
        mount = tmp.resolve("mnt");
        copyTree(src.resolve("images"), mount.resolve("ws/pets@" + version + "/images"));
    }

    @AfterEach
    void tearDown() {
        server.close();
        world.close();
    }

    /** main = 3 Parquet files x 10 rows (path, label), written by DuckDB; images = the bound files. */
    private static void writeSource(Path src) throws Exception {
        Files.createDirectories(src.resolve("main"));
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement()) {
            for (int s = 0; s < 3; s++) {
                st.execute("COPY (SELECT 'cls' || (i % 2) || '/img' || i || '.jpg' AS path, i % 2 AS label "
                        + "FROM range(" + (s * 10) + ", " + (s * 10 + 10) + ") t(i) ORDER BY i) TO '"
                        + src.resolve("main/part-" + s + ".parquet") + "' (FORMAT parquet)");
            }
        }
        for (int i = 0; i < 30; i++) {
            Path img = src.resolve("images/cls" + (i % 2) + "/img" + i + ".jpg");
            Files.createDirectories(img.getParent());
            Files.write(img, ("image " + i).getBytes(StandardCharsets.UTF_8));
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (var files = Files.walk(from)) {
            for (Path f : files.toList()) {
                Path t = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(t);
                } else {
                    Files.copy(f, t);
                }
            }
        }
    }

    private String python(Map<String, String> extraEnv, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("/usr/bin/python3"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(tmp.toFile()).redirectErrorStream(true);
        pb.environment().putAll(extraEnv);
        Process p = pb.start();
        try {
            assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("python finished").isTrue();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.exitValue()).as(out).isZero();
            return out;
        } finally {
            p.destroyForcibly();
        }
    }

    @Test
    void theStubIsTheSeedsFewLinesImportingWarpdataAndRunsUnderDebianPython3() throws Exception {
        ControlWorld.Result r = ControlWorld.warpctl(env, tmp, "init", "ws/pets", "--mount", mount.toString(), "--json");
        assertThat(r.exit()).as(r.err()).isZero();
        JsonNode res = ControlProtocol.json().readTree(r.out());
        assertThat(res.get("rows").asLong()).isEqualTo(30);
        assertThat(res.get("warpdata").asText()).as("python/ of this source tree")
                .endsWith("/python");
        Path loader = Path.of(res.get("loader").asText());
        assertThat(loader).isEqualTo(tmp.resolve("ws_pets_loader.py"));
        String stub = Files.readString(loader);
        assertThat(stub).contains("import warpdata as wd", "DATASET = \"ws/pets@" + version + "\"",
                "def get_dataset():", "def train_stream(batch_size=1000, shard=\"auto\", even=False):",
                "Smoke test passed!");
        assertThat(stub.lines().count()).as("a stub, not a loader").isLessThan(80);

        String out = python(Map.of(), loader.toString());
        assertThat(out).contains("Batch 0: 10 rows", "Batch 2: 10 rows", "Smoke test passed!");
    }

    @Test
    void ranksSplitTheRowsWithoutDuplicatesAndCoverAllAndRefsReadTheMount() throws Exception {
        ControlWorld.Result r = ControlWorld.warpctl(env, tmp, "init", "ws/pets", "--mount", mount.toString(), "-o", "loader.py");
        assertThat(r.exit()).as(r.err()).isZero();
        Set<String> seen = new HashSet<>();
        int total = 0;
        for (int rank = 0; rank < 3; rank++) {
            String out = python(Map.of("RANK", Integer.toString(rank), "WORLD_SIZE", "3"), "-c",
                    "import json, loader\nprint(json.dumps([[str(p), p.read_bytes().decode()] for b in loader.train_stream(4)"
                            + " for p in b['path']]))");
            JsonNode paths = ControlProtocol.json().readTree(out.lines().reduce((a, b) -> b).orElseThrow());
            for (JsonNode p : paths) {
                assertThat(seen.add(p.get(0).asText())).as("duplicate " + p).isTrue();
                assertThat(p.get(1).asText()).isEqualTo(Files.readString(Path.of(p.get(0).asText())));
                total++;
            }
        }
        assertThat(total).isEqualTo(30);
    }

    @Test
    void makeLoaderIsATorchDataLoaderOverTheRanksRows() throws Exception {
        ControlWorld.Result r = ControlWorld.warpctl(env, tmp, "init", "ws/pets", "--mount", mount.toString(), "-o", "tl.py");
        assertThat(r.exit()).as(r.err()).isZero();
        String out = python(Map.of("RANK", "1", "WORLD_SIZE", "2"), "-c",
                "import tl\ndl = tl.make_loader(batch_size=4, num_workers=2, prefetch_order=False)\n"
                        + "print(sorted(p for b in dl for p in b['path']) == sorted(str(p) for b in tl.train_stream(3) for p in b['path']),"
                        + " len(dl.dataset))");
        assertThat(out.lines().reduce((a, b) -> b).orElseThrow()).isEqualTo("True 15");
    }

    @Test
    void unknownTableIsAUsefulError() {
        ControlWorld.Result r = ControlWorld.warpctl(env, tmp, "init", "ws/pets", "--mount", mount.toString(), "--table", "nope");
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err()).contains("has no table 'nope'", "main");
    }
}
