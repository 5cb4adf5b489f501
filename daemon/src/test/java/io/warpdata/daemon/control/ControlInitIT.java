package io.warpdata.daemon.control;

import com.fasterxml.jackson.databind.JsonNode;
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
 * {@code warpctl init} end to end without FUSE: the daemon answers over the socket, the "mount" is
 * a directory laid out exactly as the mount lays out a version, and the generated loader runs
 * under Debian's /usr/bin/python3 (which has torch but neither duckdb nor pyarrow).
 */
class ControlInitIT {
    @TempDir
    Path tmp;

    private ControlWorld world;
    private ControlServer server;
    private Map<String, String> env;
    private Path mount;

    @BeforeEach
    void setUp() throws Exception {
        AccessPolicy policy = new AccessPolicy(ProcessIdentity.uid(), "root", Optional.empty());
        world = new ControlWorld(tmp);
        server = ControlServer.start(new ControlServer.Config(tmp.resolve("run/warpd.sock"), Optional.empty()),
                world.operations(policy, false), policy, new PeerResolver(EtcUserDatabase.system()));
        env = Map.of("WARP_SOCKET", server.socketPath().toString());
        mount = tmp.resolve("mnt");
        layOutVersion(mount.resolve("ws/name@" + world.version.hex()));
    }

    @AfterEach
    void tearDown() {
        server.close();
        world.close();
    }

    /** The world's version as the mount shows it: main = 3 shards x 10 rows (path, label), images = the bound files. */
    private static void layOutVersion(Path root) throws Exception {
        Files.createDirectories(root.resolve("main"));
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement()) {
            for (int s = 0; s < 3; s++) {
                st.execute("COPY (SELECT 'cls' || (i % 2) || '/img' || i || '.jpg' AS path, i % 2 AS label "
                        + "FROM range(" + (s * 10) + ", " + (s * 10 + 10) + ") t(i) ORDER BY i) TO '"
                        + root.resolve("main/part-" + s + ".parquet") + "' (FORMAT parquet)");
            }
        }
        for (int i = 0; i < 30; i++) {
            Path img = root.resolve("images/cls" + (i % 2) + "/img" + i + ".jpg");
            Files.createDirectories(img.getParent());
            Files.write(img, ("image " + i).getBytes(StandardCharsets.UTF_8));
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
    void generatedLoaderRunsUnderDebianPython3WithTheRowsFile() throws Exception {
        ControlWorld.Result r = ControlWorld.warpctl(env, tmp, "init", "ws/name", "--mount", mount.toString(), "--json");
        assertThat(r.exit()).as(r.err()).isZero();
        JsonNode res = ControlProtocol.json().readTree(r.out());
        assertThat(res.get("rows").asLong()).isEqualTo(30);
        Path loader = Path.of(res.get("loader").asText());
        assertThat(loader).isEqualTo(tmp.resolve("ws_name_loader.py"));

        String out = python(Map.of(), loader.toString());
        assertThat(out).contains("rank 0/1 has 30 of 30 rows (rows from rows file ws_name_loader_rows.jsonl.gz)",
                "Batch 0: 4 rows", "read 7 bytes of " + mount.resolve("ws/name@" + world.version.hex() + "/images/cls0/img0.jpg"),
                "Smoke test passed!");
    }

    @Test
    void ranksSplitTheRowsWithoutDuplicatesAndCoverAll() throws Exception {
        ControlWorld.Result r = ControlWorld.warpctl(env, tmp, "init", "ws/name", "--mount", mount.toString(), "-o", "loader.py");
        assertThat(r.exit()).as(r.err()).isZero();
        Set<String> seen = new HashSet<>();
        int total = 0;
        for (int rank = 0; rank < 3; rank++) {
            String out = python(Map.of("RANK", Integer.toString(rank), "WORLD_SIZE", "3"), "-c",
                    "import json, loader\nds = loader.WarpDataset()\nprint(json.dumps([ds[i]['path'] for i in range(len(ds))]))");
            JsonNode paths = ControlProtocol.json().readTree(out.lines().reduce((a, b) -> b).orElseThrow());
            for (JsonNode p : paths) {
                assertThat(seen.add(p.asText())).as("duplicate " + p).isTrue();
                assertThat(Files.exists(Path.of(p.asText()))).as(p.asText()).isTrue();
                total++;
            }
        }
        assertThat(total).isEqualTo(30);
    }

    @Test
    void withoutRowsFileTheLoaderListsTheBoundArtifact() throws Exception {
        ControlWorld.Result r = ControlWorld.warpctl(env, tmp, "init", "ws/name", "--mount", mount.toString(), "--rows", "none", "-o", "nofile.py");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(tmp.resolve("nofile_rows.jsonl.gz")).doesNotExist();
        String out = python(Map.of(), tmp.resolve("nofile.py").toString());
        assertThat(out).contains("has 30 of 30 rows (rows from listing of images)", "Smoke test passed!");
    }

    @Test
    void unknownTableIsAUsefulError() {
        ControlWorld.Result r = ControlWorld.warpctl(env, tmp, "init", "ws/name", "--mount", mount.toString(), "--table", "nope");
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err()).contains("has no table 'nope'", "main");
    }
}
