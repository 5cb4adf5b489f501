package io.warpdata.daemon.mount;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warpdata.blobcache.mirror.NginxMirror;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;
import io.warpdata.store.BlobStore;
import io.warpdata.store.S3ProxyFixture;
import io.warpdata.store.StoreLayout;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fleet ITs' world (issue 25): a real S3Proxy store holding one published dataset (Parquet
 * under {@code main/}; incompressible files in class folders under {@code images/}, packed into
 * tar shards, and one large file), the shipped nginx mirror in front of it (run as shipped, see
 * {@link NginxMirror}), and nodes, each its own warpd with its own cache directory, mount and socket.
 * {@link #close()} stops nginx and the store and deletes the work directory; nodes are closed by
 * whoever starts them.
 */
final class FleetWorld implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    final S3ProxyFixture s3;
    final Path work;
    final String prefix;
    final DatasetId dataset;
    final Path nginxDir;
    private VersionHash version;
    private Map<String, String> expected;
    private long datasetBytes;
    private NginxMirror nginx;

    private FleetWorld(S3ProxyFixture s3, Path work, String prefix, DatasetId dataset) {
        this.s3 = s3;
        this.work = work;
        this.prefix = prefix;
        this.dataset = dataset;
        this.nginxDir = work.resolve("nginx");
    }

    /**
     * Publishes {@code files} files of 40-80 KB in {@code classes} class folders plus
     * {@code images/large.bin} of {@code largeBytes}, packed into shards of about {@code shardSize},
     * then starts nginx in front of the store.
     */
    static FleetWorld start(String prefix, DatasetId dataset, int files, int classes, int largeBytes, long shardSize,
                            long seed) throws Exception {
        S3ProxyFixture s3 = S3ProxyFixture.start();
        FleetWorld world = new FleetWorld(s3, Files.createTempDirectory("warp-" + prefix), prefix, dataset);
        try {
            Path src = Files.createDirectories(world.work.resolve("src"));
            SampleData.writeParquet(src, 2_000, 7);
            Random random = new Random(seed);
            for (int i = 0; i < files; i++) {
                byte[] b = new byte[40_000 + random.nextInt(40_000)];
                random.nextBytes(b);
                Path f = src.resolve("images").resolve("c" + (i % classes)).resolve("f" + i + ".bin");
                Files.createDirectories(f.getParent());
                Files.write(f, b);
            }
            byte[] large = new byte[largeBytes];
            random.nextBytes(large);
            Files.write(src.resolve("images").resolve("large.bin"), large);
            try (BlobStore store = s3.openStore(prefix)) {
                world.version = SampleData.publish(store, world.work, dataset, src, true, shardSize);
                world.expected = new TreeMap<>();
                SampleData.hashes(src.resolve("main")).forEach((p, h) -> world.expected.put("main/" + p, h));
                SampleData.hashes(src.resolve("images")).forEach((p, h) -> world.expected.put("images/" + p, h));
                world.expected.put(".warp/manifest.json", SampleData.sha256(store.get(StoreLayout.version(dataset, world.version))));
            }
            try (Stream<Path> all = Files.walk(src)) {
                world.datasetBytes = all.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
            }
            world.nginx = NginxMirror.start(Files.createDirectories(world.nginxDir), s3.port(),
                    "/" + S3ProxyFixture.BUCKET + "/" + prefix, S3ProxyFixture.ACCESS_KEY, S3ProxyFixture.SECRET_KEY);
            return world;
        } catch (Exception | Error e) {
            try {
                world.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    VersionHash version() {
        return version;
    }

    /** SHA-256 of every file of the version by its path in the version's folder, manifest included. */
    Map<String, String> expected() {
        return expected;
    }

    /** Bytes of the source files published (Parquet and images). */
    long datasetBytes() {
        return datasetBytes;
    }

    NginxMirror nginx() {
        return nginx;
    }

    /** What {@code warpd --mirror} is given for the shipped nginx. */
    String mirror() {
        return nginx.base().toString();
    }

    /** A node named {@code name} (its own warpd, cache, mount and socket) reading through {@code mirrorArgs}. */
    Node node(String name, String... mirrorArgs) throws IOException {
        Path mount = Files.createDirectories(work.resolve(name).resolve("mnt"));
        Path cache = work.resolve(name).resolve("cache");
        return new Node(WarpdProcess.start(mount, s3.remote(prefix), cache, s3.env(), mirrorArgs), mount, cache);
    }

    /** SHA-256 of every file under {@code dir}, read in folder order ({@code find | sort}), by relative path. */
    static Map<String, String> readAll(Path dir) {
        Shell.Result r = Shell.run(dir, Map.of(), 300,
                List.of("bash", "-c", "find . -type f -print0 | sort -z | xargs -0 sha256sum")).requireSuccess();
        Map<String, String> mounted = new TreeMap<>();
        for (String line : r.out().split("\n")) {
            if (!line.isBlank()) {
                mounted.put(line.substring(66).replaceFirst("^\\./", ""), line.substring(0, 64));
            }
        }
        return mounted;
    }

    /** A node: its own warpd, cache directory, mount and socket. */
    final class Node implements AutoCloseable {
        final WarpdProcess warpd;
        final Path mount;
        final Path cache;

        private Node(WarpdProcess warpd, Path mount, Path cache) {
            this.warpd = warpd;
            this.mount = mount;
            this.cache = cache;
        }

        /** The world's version's folder under this node's mount. */
        Path versionDir() {
            return mount.resolve(dataset.workspace()).resolve(dataset.name() + "@" + version.hex());
        }

        /** SHA-256 of every file of the version, read through the mount in folder order. */
        Map<String, String> readAll() {
            return FleetWorld.readAll(versionDir());
        }

        /** The node's one mirror as {@code warpctl cache stats --json} shows it. */
        JsonNode mirrorStats() throws IOException {
            JsonNode stats = JSON.readTree(warpctl("cache", "stats", "--json").out());
            assertThat(stats.path("mirrors")).hasSize(1);
            return stats.path("mirrors").get(0);
        }

        String status() {
            return warpctl("status").out();
        }

        /** {@code warpctl ARGS} against this node's socket; fails the test if it fails. */
        Shell.Result warpctl(String... args) {
            return WarpdProcess.warpctl(cache.resolve("warpd.sock"), s3.env(), args).requireSuccess();
        }

        /** Lines of the node's log saying {@code mirror} was skipped (it went down). */
        long warnings(String mirror) {
            return warpd.output().lines().filter(l -> l.contains("mirror " + mirror + " skipped for")).count();
        }

        @Override
        public void close() {
            warpd.close();
        }
    }

    /** Stops nginx (by its pid) and the store, then deletes the work directory (nodes must be closed first). */
    @Override
    public void close() throws IOException {
        WarpdProcess.stopAll(null, null, work, nginx, s3);
    }
}
