package io.warpdata.vfs.fuse;

import io.warpdata.catalog.Catalog;
import io.warpdata.store.InMemoryBlobStore;
import io.warpdata.blobcache.cache.DirectBlobReader;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;
import io.warpdata.vfs.Errno;
import io.warpdata.vfs.TestVersions;
import io.warpdata.vfs.WarpTree;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The FUSE server under the real kernel: a mount of an in-memory store, read by the JDK's file API. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FuseServerIT {
    private static final int FILES = 300;

    private final InMemoryBlobStore store = new InMemoryBlobStore();
    private final Catalog catalog = new Catalog(store);
    private final ExecutorService loader = Executors.newVirtualThreadPerTaskExecutor();
    private final DirectBlobReader reader = new DirectBlobReader(store);
    private final Map<String, byte[]> members = new LinkedHashMap<>();
    private Path dir;
    private Path mnt;
    private Path version;
    private WarpFuse fuse;

    @BeforeAll
    void mount() throws IOException {
        for (int i = 0; i < FILES; i++) {
            members.put(String.format("train/c%d/img%03d.bin", i % 3, i), TestVersions.bytes(1000 + i * 37, i));
        }
        members.put("big.bin", TestVersions.bytes(5_000_000, 7));
        TestVersions versions = new TestVersions(store, catalog);
        VersionHash v = versions.publish(new DatasetId("ws", "ds"), Map.of(),
                Map.of("images", versions.artifact(members, Map.of(), 64)), "2026-11-01T12:00:00Z", true);
        dir = Files.createTempDirectory("warp-fuse-server-it");
        mnt = Files.createDirectories(dir.resolve("mnt"));
        fuse = new WarpFuse(new WarpTree(catalog, reader, 100_000, loader), new Errno(System::nanoTime), 0, 0);
        fuse.mount(mnt, MountOptions.defaults(false));
        version = mnt.resolve("ws/ds@" + v.hex() + "/images");
    }

    @AfterAll
    void unmount() throws IOException {
        try {
            if (fuse != null) {
                fuse.umount();
            }
        } finally {
            loader.shutdownNow();
            reader.close();
            if (dir != null && !mounted(mnt)) {
                try (Stream<Path> s = Files.walk(dir)) {
                    s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
        }
    }

    @Test
    @Order(1)
    void everyFileListsReadsAndStatsAsPublished() throws IOException {
        assertThat(Files.readSymbolicLink(mnt.resolve("ws/ds")).toString()).startsWith("ds@");
        List<String> classes;
        try (Stream<Path> s = Files.list(version.resolve("train"))) {
            classes = s.map(p -> p.getFileName().toString()).sorted().toList();
        }
        assertThat(classes).containsExactly("c0", "c1", "c2");
        for (Map.Entry<String, byte[]> m : members.entrySet()) {
            Path p = version.resolve(m.getKey());
            assertThat(Files.size(p)).as(m.getKey()).isEqualTo(m.getValue().length);
            assertThat(Files.readAllBytes(p)).as(m.getKey()).isEqualTo(m.getValue());
        }
        assertThat(fuse.requests()).containsKey("read");
        assertThat(fuse.maxReadBytes()).isPositive();
    }

    @Test
    @Order(2)
    void aListingHandsTheKernelTheInodesSoStatsNeedNoLookup() throws IOException {
        Path c1 = mnt.resolve("ws/ds@" + version.getParent().getFileName().toString().substring(3, 13)
                + "/images/train/c1");
        assertThat(Files.isDirectory(c1)).isTrue();
        long before = fuse.requests().getOrDefault("lookup", 0L);
        List<Path> files;
        try (Stream<Path> s = Files.list(c1)) {
            files = s.toList();
        }
        assertThat(files).hasSize(FILES / 3);
        for (Path f : files) {
            assertThat(Files.size(f)).isPositive();
        }
        long lookups = fuse.requests().getOrDefault("lookup", 0L) - before;
        if (fuse.readdirPlus()) {
            assertThat(lookups).isZero();
        } else {
            assertThat(lookups).isGreaterThanOrEqualTo(FILES / 3);
        }
    }

    @Test
    @Order(3)
    void inodesTheKernelDropsAreForgotten() throws Exception {
        // The walks above handed the kernel an inode for each of the 301 files and each folder;
        // only the folders (and the workspace's entries) take a table entry: files' are computed.
        int held = fuse.kernelInodes();
        assertThat(held).as("tabled inodes after walking %d files", FILES).isBetween(5, 20);
        // Root only (as the integration tests run): the kernel drops its unused dentries and inodes.
        Files.writeString(Path.of("/proc/sys/vm/drop_caches"), "2");
        long until = System.nanoTime() + 10_000_000_000L;
        while (fuse.kernelInodes() >= held / 2 && System.nanoTime() < until) {
            Thread.sleep(50);
        }
        assertThat(fuse.kernelInodes()).isLessThan(held / 2);
        assertThat(fuse.requests().get("forget")).isPositive();
        // and everything still reads (the kernel looks the paths up again)
        String any = "train/c2/img" + String.format("%03d", FILES - 1) + ".bin";
        assertThat(Files.readAllBytes(version.resolve(any))).isEqualTo(members.get(any));
    }

    @Test
    @Order(4)
    void mountingOntoAFileFailsWithATypedError() throws IOException {
        Path file = Files.writeString(dir.resolve("not-a-dir"), "x");
        WarpFuse other = new WarpFuse(new WarpTree(catalog, reader, 1000, loader), new Errno(System::nanoTime), 0, 0);
        assertThatThrownBy(() -> other.mount(file, MountOptions.defaults(false)))
                .isInstanceOf(FuseMountException.class)
                .satisfies(e -> assertThat(((FuseMountException) e).nextStep()).contains("doctor"));
    }

    @Test
    @Order(5)
    void unmountingStopsEveryWorker() throws Exception {
        fuse.umount();
        assertThat(mounted(mnt)).isFalse();
        assertThat(Thread.getAllStackTraces().keySet()).noneMatch(t -> t.getName().startsWith("warp-fuse-") && t.isAlive());
        fuse = null;
    }

    private static boolean mounted(Path p) throws IOException {
        String real = p.toAbsolutePath().toString();
        return Files.readAllLines(Path.of("/proc/self/mounts")).stream().anyMatch(l -> l.split(" ")[1].equals(real));
    }
}
