package io.warpdata.daemon.mount;

import io.warpdata.store.BlobStore;
import io.warpdata.store.S3ProxyFixture;
import io.warpdata.store.StoreLayout;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The mount as users meet it: a real S3 server (S3Proxy), a dataset published by the real
 * publish pipeline, warpd started from the shaded jar, and real clients (coreutils, findutils,
 * DuckDB, torchvision) reading the mount.
 */
class MountIT {
    private static final DatasetId DATASET = new DatasetId("vision", "pets");
    private static final DatasetId MOVING = new DatasetId("vision", "moving");

    private static MountedStore m;
    private static S3ProxyFixture s3;
    private static BlobStore store;
    private static Path work;
    private static Path mount;
    private static Path src;
    private static VersionHash version;

    @BeforeAll
    static void publishAndMount() throws IOException {
        m = MountedStore.serve("it-mount");
        s3 = m.s3;
        store = m.store();
        work = m.work;
        mount = m.mount;
        src = m.writeSample("src", 12_000, 7, 0);
        version = m.publish(DATASET, src);
        // A 2 s pointer TTL (30 s by default): the latest test publishes "from another machine"
        // and waits for the link to follow within the TTL.
        m.mount("--pointer-ttl", "2s");
    }

    @AfterAll
    static void unmountAndStop() throws IOException {
        if (m != null) {
            m.close();
        }
    }

    private static Path versionDir() {
        return mount.resolve("vision").resolve("pets@" + version.hex());
    }

    /** Source files by the path they must have in the version directory. */
    private static Map<String, String> expectedHashes() {
        Map<String, String> expected = new TreeMap<>();
        SampleData.hashes(src.resolve("main")).forEach((p, h) -> expected.put("main/" + p, h));
        SampleData.hashes(src.resolve("images")).forEach((p, h) -> expected.put("images/" + p, h));
        expected.put(".warp/manifest.json", SampleData.sha256(store.get(StoreLayout.version(DATASET, version))));
        return expected;
    }

    @Test
    void everyFileReadThroughTheMountMatchesItsSource() {
        Shell.Result r = Shell.run(versionDir(), Map.of(), 120,
                List.of("bash", "-c", "find . -type f -print0 | sort -z | xargs -0 sha256sum")).requireSuccess();
        Map<String, String> mounted = new TreeMap<>();
        for (String line : r.out().split("\n")) {
            if (!line.isBlank()) {
                mounted.put(line.substring(66).replaceFirst("^\\./", ""), line.substring(0, 64));
            }
        }
        assertThat(mounted).isEqualTo(expectedHashes());
    }

    @Test
    void findAndLsListExactlyThePublishedTree() {
        Shell.Result r = Shell.run(versionDir(), Map.of(), 60, List.of("find", ".", "-mindepth", "1")).requireSuccess();
        Set<String> listed = new TreeSet<>(r.out().lines().map(l -> l.replaceFirst("^\\./", "")).toList());
        Set<String> expected = new TreeSet<>();
        for (String file : expectedHashes().keySet()) {
            expected.add(file);
            for (int slash = file.indexOf('/'); slash > 0; slash = file.indexOf('/', slash + 1)) {
                expected.add(file.substring(0, slash));
            }
        }
        assertThat(listed).isEqualTo(expected);

        Shell.Result ls = Shell.run(null, Map.of(), 60, List.of("ls", "-lR", versionDir().toString())).requireSuccess();
        long srcSize = src.resolve("main/part-0.parquet").toFile().length();
        assertThat(ls.out()).containsPattern("-r--r--r-- +1 \\S+ \\S+ +" + srcSize + " .* part-0\\.parquet")
                .contains("dr-xr-xr-x").contains("img6.png");

        Shell.Result ws = Shell.run("ls", "-la", mount.resolve("vision").toString()).requireSuccess();
        assertThat(ws.out()).contains("pets -> pets@" + version.hex()).contains("pets@" + version.hex());
    }

    @Test
    void writesFailWithReadOnlyFileSystemAndChangeNothing() {
        Path dir = versionDir();
        Map<String, String> before = expectedHashes();
        List<String> commands = List.of(
                "echo x > main/part-0.parquet",
                "echo x >> main/part-0.parquet",
                "touch images/new.png",
                "mkdir images/newdir",
                "rm main/part-1.parquet",
                "rm -r images/cat",
                "rmdir images/cat",
                "mv main/part-0.parquet main/moved.parquet",
                "ln -s main/part-0.parquet link",
                "ln main/part-0.parquet hard",
                "chmod 777 main/part-0.parquet",
                "truncate -s 0 main/part-0.parquet",
                "touch main/part-0.parquet",
                "setfattr -n user.x -v y main/part-0.parquet",
                "cp " + src.resolve("main/part-0.parquet") + " main/copy.parquet",
                "mkdir ../../vision/newws",
                "rm ../pets");
        for (String cmd : commands) {
            Shell.Result r = Shell.run(dir, Map.of(), 30, List.of("bash", "-c", cmd));
            assertThat(r.exit()).as(cmd).isNotZero();
            assertThat(r.err()).as(cmd).containsAnyOf("Read-only file system", "command not found");
        }
        Shell.Result r = Shell.run(dir, Map.of(), 120,
                List.of("bash", "-c", "find . -type f -print0 | sort -z | xargs -0 sha256sum")).requireSuccess();
        assertThat(r.out().lines().count()).isEqualTo(before.size());
        for (Map.Entry<String, String> e : before.entrySet()) {
            assertThat(r.out()).contains(e.getValue() + "  ./" + e.getKey());
        }
    }

    @Test
    void mmapAndOffsetReadsOfAShardMatchTheSource() throws IOException {
        Path shard = versionDir().resolve("main/part-1.parquet");
        Path source = src.resolve("main/part-1.parquet");
        Shell.Result r = Shell.run("/usr/bin/python3", "-c", String.join("\n",
                "import hashlib, mmap, sys",
                "f = open(sys.argv[1], 'rb')",
                "m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)",
                "print(hashlib.sha256(m[:]).hexdigest())",
                "f.seek(1000); print(f.read(10).hex())",
                "f.seek(len(m) - 3); print(f.read(100).hex())",
                "f.seek(len(m) + 5000); print(repr(f.read(10)))"), shard.toString()).requireSuccess();
        byte[] bytes = Files.readAllBytes(source);
        List<String> lines = r.out().lines().toList();
        assertThat(lines.get(0)).isEqualTo(SampleData.sha256(bytes));
        assertThat(lines.get(1)).isEqualTo(java.util.HexFormat.of().formatHex(bytes, 1000, 1010));
        assertThat(lines.get(2)).isEqualTo(java.util.HexFormat.of().formatHex(bytes, bytes.length - 3, bytes.length));
        assertThat(lines.get(3)).isEqualTo("b''");
    }

    @Test
    void duckdbOverMountedParquetAnswersLikeTheSourceFiles() throws SQLException {
        String mounted = mount.resolve("vision/pets/main") + "/*.parquet";
        String local = src.resolve("main") + "/*.parquet";
        List<String> queries = List.of(
                "SELECT count(*) FROM read_parquet('%s')",
                "SELECT count(*), sum(id), min(name), max(score) FROM read_parquet('%s') WHERE label = 3 AND id > 100",
                "SELECT label, count(*), sum(score) FROM read_parquet('%s') GROUP BY label ORDER BY label");
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement s = c.createStatement()) {
            for (String q : queries) {
                List<List<Object>> fromMount = rows(s, String.format(q, mounted));
                List<List<Object>> fromSource = rows(s, String.format(q, local));
                assertThat(fromMount).as(q).isNotEmpty().isEqualTo(fromSource);
            }
            assertThat(rows(s, String.format(queries.get(0), mounted)).get(0).get(0)).isEqualTo(12_000L);
        }
    }

    private static List<List<Object>> rows(Statement s, String sql) throws SQLException {
        List<List<Object>> out = new ArrayList<>();
        try (ResultSet rs = s.executeQuery(sql)) {
            int cols = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                List<Object> row = new ArrayList<>();
                for (int i = 1; i <= cols; i++) {
                    row.add(rs.getObject(i));
                }
                out.add(row);
            }
        }
        return out;
    }

    @Test
    void torchvisionImageFolderWithWorkersSeesEveryImageWithItsClass() throws IOException {
        Path script = work.resolve("imagefolder.py");
        Files.writeString(script, """
                import os, sys
                import torch
                from torchvision import datasets, transforms
                root = sys.argv[1]
                ds = datasets.ImageFolder(root, transform=transforms.ToTensor())
                loader = torch.utils.data.DataLoader(ds, batch_size=4, num_workers=2, shuffle=False)
                seen = 0
                labels = []
                for images, targets in loader:
                    assert images.shape[1:] == (3, 32, 32), images.shape
                    labels.extend(targets.tolist())
                    seen += len(targets)
                print("classes", ",".join(ds.classes))
                for (path, label), got in zip(ds.samples, labels):
                    print("sample", os.path.relpath(path, root), ds.classes[label], ds.classes[got])
                print("total", seen)
                """);
        Path images = mount.resolve("vision/pets/images");
        Shell.Result r = Shell.run(null, Map.of(), 300, List.of("/usr/bin/python3", script.toString(), images.toString()))
                .requireSuccess();
        assertThat(r.out()).contains("classes " + String.join(",", SampleData.CLASSES));
        int total = SampleData.CLASSES.size() * SampleData.IMAGES_PER_CLASS;
        assertThat(r.out()).contains("total " + total);
        Map<String, Integer> perClass = new HashMap<>();
        List<String> samples = r.out().lines().filter(l -> l.startsWith("sample ")).toList();
        assertThat(samples).hasSize(total);
        for (String line : samples) {
            String[] f = line.split(" ");
            String folder = f[1].substring(0, f[1].indexOf('/'));
            assertThat(f[2]).as(line).isEqualTo(folder);
            assertThat(f[3]).as(line).isEqualTo(folder);
            perClass.merge(folder, 1, Integer::sum);
        }
        assertThat(perClass).containsOnlyKeys(SampleData.CLASSES)
                .allSatisfy((k, v) -> assertThat(v).isEqualTo(SampleData.IMAGES_PER_CLASS));
    }

    @Test
    void latestMovesAfterSetLatestWhileOldHashKeepsServingOldBytes() throws Exception {
        Path v1src = Files.createDirectories(work.resolve("moving-v1"));
        SampleData.writeParquet(v1src, 100, 3);
        SampleData.writeImages(v1src.resolve("images"), 1);
        VersionHash v1 = SampleData.publish(store, work, MOVING, v1src, true);
        Path link = mount.resolve("vision/moving");
        waitFor(() -> readLink(link).equals("moving@" + v1.hex()));
        String oldHash = SampleData.sha256(Files.readAllBytes(link.resolve("main/part-0.parquet")));

        Path v2src = Files.createDirectories(work.resolve("moving-v2"));
        SampleData.writeParquet(v2src, 200, 5);
        SampleData.writeImages(v2src.resolve("images"), 2);
        VersionHash v2 = SampleData.publish(store, work, MOVING, v2src, true);
        assertThat(v2).isNotEqualTo(v1);

        waitFor(() -> readLink(link).equals("moving@" + v2.hex()));
        assertThat(SampleData.sha256(Files.readAllBytes(link.resolve("main/part-0.parquet"))))
                .isEqualTo(SampleData.sha256(Files.readAllBytes(v2src.resolve("main/part-0.parquet"))));
        Path old = mount.resolve("vision/moving@" + v1.hex().substring(0, 12) + "/main/part-0.parquet");
        assertThat(SampleData.sha256(Files.readAllBytes(old))).isEqualTo(oldHash)
                .isEqualTo(SampleData.sha256(Files.readAllBytes(v1src.resolve("main/part-0.parquet"))));
    }

    @Test
    void unknownNamesAreNotFound() {
        for (String path : List.of("nope", "vision/nope", "vision/pets@00000000", "vision/pets@" + version.hex() + "/nope")) {
            assertThat(Files.exists(mount.resolve(path))).as(path).isFalse();
        }
        Shell.Result r = Shell.run("cat", mount.resolve("vision/nope").toString());
        assertThat(r.err()).contains("No such file or directory");
    }

    @Test
    void statsFileIsWrittenWithReadCounters() throws Exception {
        Path stats = work.resolve("cache/stats.json");
        waitFor(() -> Files.exists(stats));
        Files.readAllBytes(versionDir().resolve("main/part-1.parquet"));
        waitFor(() -> Files.readString(stats).contains("\"bytes_fetched\""));
        assertThat(Files.readString(stats)).contains("\"mounted\" : true").contains("\"io_errors\"");
    }

    @Test
    void warpctlStatusTalksToTheDaemonOverItsSocket() {
        String java = ProcessHandle.current().info().command().orElse("java");
        Shell.Result r = Shell.run(null, Map.of(), 60, List.of(java, "-jar", WarpdProcess.JAR.toString(), "warpctl",
                "status", "--socket", work.resolve("cache/warpd.sock").toString())).requireSuccess();
        assertThat(r.out()).contains(mount.toString()).contains(s3.remote("it-mount"));
    }

    private static String readLink(Path link) {
        try {
            return Files.readSymbolicLink(link).toString();
        } catch (IOException e) {
            return "";
        }
    }

    interface Check {
        boolean ok() throws Exception;
    }

    static void waitFor(Check check) throws Exception {
        waitFor(check, 15);
    }

    /** As {@link #waitFor(Check)}, within {@code seconds}; a check that throws counts as not met yet. */
    static void waitFor(Check check, int seconds) throws Exception {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        while (!passes(check)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("condition not met within " + seconds + " s");
            }
            Thread.sleep(100);
        }
    }

    private static boolean passes(Check check) throws Exception {
        try {
            return check.ok();
        } catch (java.io.IOException notYet) {
            return false;
        }
    }
}
