package io.warpdata.daemon.cli;

import io.warpdata.daemon.control.protocol.CacheCalls;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/** doctor's "warpd's cache" line, from what a running warpd reports of its cache. */
class DoctorDaemonCacheTest {
    @TempDir
    Path tmp;

    @Test
    void aRunningWarpdsCacheDiskOutOfInodesIsWarnedOf() throws Exception {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")), "mounts a tmpfs: root only");
        Path disk = Files.createDirectories(tmp.resolve("disk"));
        assertThat(new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=2g,nr_inodes=12000", "tmpfs", disk.toString())
                .inheritIO().start().waitFor()).isZero();
        try {
            Files.createDirectories(disk.resolve("v1/tmp"));
            Doctor d = new Doctor(new Doctor.Settings(Optional.empty(), Optional.empty(), tmp.resolve("c"), 1,
                    tmp.resolve("none.sock"), false), null);
            long free = Files.getFileStore(disk).getUsableSpace();
            CacheCalls.Stats stats = new CacheCalls.Stats("auto", disk.toString(), 0, 1 << 20, 1L << 30, free, 0, 0, 0,
                    Map.of(), List.of(), List.of(), 0, 0);
            Doctor.Daemon warpd = new Doctor.Daemon(null, stats, null);
            assertThat(d.daemonCacheDir(warpd).status()).isEqualTo(Doctor.Status.PASS);
            for (int i = 0; i < 3000; i++) {
                Files.writeString(disk.resolve("f" + i), "");
            }
            // audit 21: the check without warpd looked at inodes, the one with warpd running did not.
            Doctor.Check c = d.daemonCacheDir(warpd);
            assertThat(c.status()).isEqualTo(Doctor.Status.WARN);
            assertThat(c.detail()).contains("inodes free", "of 12000", "a file per cached block");
        } finally {
            new ProcessBuilder("umount", disk.toString()).inheritIO().start().waitFor();
        }
    }

    /** audit 33: a disk both under the floor and short of inodes got the inode warning alone, whose advice cannot help. */
    @Test
    void aDiskUnderTheFloorIsSaidSoEvenWhenItsInodesAreShortToo() throws Exception {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")), "mounts a tmpfs: root only");
        Path disk = Files.createDirectories(tmp.resolve("small"));
        assertThat(new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=256m,nr_inodes=12000", "tmpfs", disk.toString())
                .inheritIO().start().waitFor()).isZero();
        try {
            Files.createDirectories(disk.resolve("v1/tmp"));
            // All but a few of its inodes taken by other files.
            for (int i = 0; i < 11_990; i++) {
                try {
                    Files.writeString(disk.resolve("f" + i), "");
                } catch (java.io.IOException full) {
                    break;
                }
            }
            Doctor d = new Doctor(new Doctor.Settings(Optional.empty(), Optional.empty(), tmp.resolve("c"), 1,
                    tmp.resolve("none.sock"), false), null);
            CacheCalls.Stats stats = new CacheCalls.Stats("auto", disk.toString(), 0, 1L << 30, 1L << 30,
                    Files.getFileStore(disk).getUsableSpace(), 0, 0, 0, Map.of(), List.of(), List.of(), 0, 0);
            Doctor.Check c = d.daemonCacheDir(new Doctor.Daemon(null, stats, null));
            assertThat(c.status()).isEqualTo(Doctor.Status.WARN);
            assertThat(c.detail()).contains("under the free-space floor", "caches nothing new");
        } finally {
            new ProcessBuilder("umount", disk.toString()).inheritIO().start().waitFor();
        }
    }

    /** audit 31: under the floor, doctor said "warpd is not caching new blocks" though warpd evicts its own to cache on. */
    @Test
    void aRunningWarpdsCacheUnderTheFloorSaysWhatWarpdDoesAtItsNextWrite() throws Exception {
        Path cache = Files.createDirectories(tmp.resolve("floor"));
        Files.createDirectories(cache.resolve("v1/tmp"));
        Doctor d = new Doctor(new Doctor.Settings(Optional.empty(), Optional.empty(), tmp.resolve("c"), 1,
                tmp.resolve("none.sock"), false), null);
        // 3 GB cached, 1 GB free, a floor of 1.5 GB: 500 MB of its blocks go at the next write.
        Doctor.Check evicts = d.daemonCacheDir(new Doctor.Daemon(null, new CacheCalls.Stats("auto", cache.toString(),
                3_000_000_000L, 10_000_000_000L, 1_500_000_000L, 1_000_000_000L, 3000, 0, 0, Map.of(), List.of(),
                List.of(), 0, 0), null));
        assertThat(evicts.status()).isEqualTo(Doctor.Status.WARN);
        assertThat(evicts.detail()).contains("under the free-space floor of 1.5 GB",
                "at its next write warpd evicts 500.0 MB of its blocks", "holds at most 2.5 GB");
        // 200 MB cached cannot make up 500 MB: then nothing new is cached.
        Doctor.Check nothing = d.daemonCacheDir(new Doctor.Daemon(null, new CacheCalls.Stats("auto", cache.toString(),
                200_000_000L, 10_000_000_000L, 1_500_000_000L, 1_000_000_000L, 200, 0, 0, Map.of(), List.of(),
                List.of(), 0, 0), null));
        assertThat(nothing.detail()).contains("cannot make up the 500.0 MB missing", "caches nothing new");
    }

    /** audit 31: a cache whose v1/ was deleted under an idle warpd passed, with the blocks it no longer had. */
    @Test
    void aRunningWarpdsCacheWhoseFolderWasDeletedIsWarnedOf() throws Exception {
        Path cache = Files.createDirectories(tmp.resolve("gone"));
        Files.createDirectories(cache.resolve("v1/tmp"));
        Doctor d = new Doctor(new Doctor.Settings(Optional.empty(), Optional.empty(), tmp.resolve("c"), 1,
                tmp.resolve("none.sock"), false), null);
        CacheCalls.Stats stats = new CacheCalls.Stats("auto", cache.toString(), 19_000_000, 20_000_000, 0,
                Files.getFileStore(cache).getUsableSpace(), 19, 0, 0, Map.of(), List.of(), List.of(), 0, 0);
        Doctor.Daemon warpd = new Doctor.Daemon(null, stats, null);
        assertThat(d.daemonCacheDir(warpd).status()).isEqualTo(Doctor.Status.PASS);
        Files.delete(cache.resolve("v1/tmp"));
        Files.delete(cache.resolve("v1"));
        Doctor.Check c = d.daemonCacheDir(warpd);
        assertThat(c.status()).isEqualTo(Doctor.Status.WARN);
        assertThat(c.detail()).contains("v1 is gone", "19.0 MB it reports are no longer there");
        assertThat(c.fix()).contains("makes it again");
    }

    /** audit 23: a cache made read-only under a running warpd passed, while warpd skipped every write. */
    @Test
    void aRunningWarpdsCacheThatRefusesWritesIsWarnedOf() throws Exception {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")), "bind mounts: root only");
        Path cache = Files.createDirectories(tmp.resolve("cache"));
        Path v1 = Files.createDirectories(cache.resolve("v1"));
        Files.createDirectories(v1.resolve("tmp"));
        Doctor d = new Doctor(new Doctor.Settings(Optional.empty(), Optional.empty(), tmp.resolve("c"), 1,
                tmp.resolve("none.sock"), false), null);
        long free = Files.getFileStore(cache).getUsableSpace();
        CacheCalls.Stats stats = new CacheCalls.Stats("auto", cache.toString(), 0, 1 << 20, 0, free, 0, 0, 0,
                Map.of("cache_writes_skipped", 1525L), List.of(), List.of(), 0, 0);
        Doctor.Daemon warpd = new Doctor.Daemon(null, stats, null);
        assertThat(d.daemonCacheDir(warpd).status()).isEqualTo(Doctor.Status.PASS);
        assertThat(new ProcessBuilder("mount", "--bind", v1.toString(), v1.toString()).inheritIO().start().waitFor())
                .isZero();
        try {
            assertThat(new ProcessBuilder("mount", "-o", "remount,ro,bind", v1.toString()).inheritIO().start().waitFor())
                    .isZero();
            Doctor.Check c = d.daemonCacheDir(warpd);
            assertThat(c.status()).isEqualTo(Doctor.Status.WARN);
            assertThat(c.detail()).contains("refuses writes", "1525 blocks served uncached");
            assertThat(c.fix()).contains("writable");
        } finally {
            new ProcessBuilder("umount", v1.toString()).inheritIO().start().waitFor();
        }
    }
}
