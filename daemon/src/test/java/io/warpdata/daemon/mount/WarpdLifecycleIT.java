package io.warpdata.daemon.mount;

import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** warpd's process life: clean unmount on SIGTERM, recovery after kill -9, refusing bad mount points. */
class WarpdLifecycleIT {
    private static final DatasetId DATASET = new DatasetId("ops", "tiny");

    private static MountedStore m;
    private static Path work;
    private static Path src;
    private static VersionHash version;

    @BeforeAll
    static void publish() throws IOException {
        m = MountedStore.serve("it-life");
        work = m.work;
        src = m.writeSample("src", 1000, 1, 0);
        version = m.publish(DATASET, src);
    }

    @AfterEach
    void stopEverything() {
        m.stopWarpds();
    }

    @AfterAll
    static void cleanUp() throws IOException {
        if (m != null) {
            m.close();
        }
    }

    private Path newMountPoint(String name) throws IOException {
        return Files.createDirectories(work.resolve(name));
    }

    private WarpdProcess start(Path mount) {
        return m.startWarpd(mount, work.resolve("cache-" + mount.getFileName()));
    }

    private static void assertServes(Path mount) throws IOException {
        Path shard = mount.resolve("ops/tiny/main/part-0.parquet");
        assertThat(SampleData.sha256(Files.readAllBytes(shard)))
                .isEqualTo(SampleData.sha256(Files.readAllBytes(src.resolve("main/part-0.parquet"))));
    }

    @Test
    void sigtermUnmountsCleanlyAndExits() throws Exception {
        Path mount = newMountPoint("term");
        WarpdProcess w = start(mount);
        assertThat(w.output()).contains("warpd: mounted " + m.remote() + " at " + mount + " (mode auto)");
        assertThat(MountStatus.of(mount)).isEqualTo("fuse.warp");
        assertServes(mount);

        int exit = w.terminate(30);
        assertThat(exit).isZero();
        assertThat(WarpdProcess.isMounted(mount)).isFalse();
        assertThat(mount).isEmptyDirectory();
    }

    /**
     * audit 27: a SIGTERM the moment the mount appeared (before warpd's "mounted" line) exited 143
     * and left the mount dead ("Transport endpoint is not connected"), 3 times of 3, and once left
     * the JVM stuck on a stat of its own mount. Any moment of the start must unmount.
     */
    @Test
    void sigtermTheMomentTheMountAppearsStillUnmounts() throws Exception {
        for (int delayMs : new int[] {0, 0, 100, 300}) {
            Path mount = newMountPoint("early-" + delayMs + "-" + System.nanoTime());
            WarpdProcess w = m.launchWarpd(mount, work.resolve("cache-early"));
            long end = System.nanoTime() + 60_000_000_000L;
            while (!WarpdProcess.isMounted(mount) && w.isAlive() && System.nanoTime() < end) {
                Thread.sleep(1);
            }
            assertThat(WarpdProcess.isMounted(mount)).as("mounted; output:%n%s", w.output()).isTrue();
            Thread.sleep(delayMs);
            // audit 28: it unmounted, but exited 143 (the JVM's own handling), not 0 as a stop does.
            assertThat(w.terminate(30)).as("exit status of a SIGTERM %d ms after the mount appeared; output:%n%s",
                    delayMs, w.output()).isZero();
            assertThat(WarpdProcess.isMounted(mount)).as("a SIGTERM %d ms after the mount appeared left it; output:%n%s",
                    delayMs, w.output()).isFalse();
            assertThat(mount).as("the mount point is an empty folder again, not a dead mount").isEmptyDirectory();
        }
    }

    /**
     * audit 23: with a file merely held open, a stop waited 5 s for FUSE workers ("still busy")
     * while a reader in the middle of a file kept reading; the README says a stop unmounts at once
     * and readers get ENOTCONN, as after a crash.
     */
    @Test
    void sigtermWithAFileHeldOpenFailsItsReaderAtOnceInsteadOfWaitingForIt() throws Exception {
        Path mount = newMountPoint("held");
        WarpdProcess w = start(mount);
        assertServes(mount);
        Process holder = new ProcessBuilder("/usr/bin/python3", "-c", String.join("\n",
                "import sys",
                "f = open(sys.argv[1], 'rb', buffering=0)",
                "f.read(10)",
                "print('open', flush=True)",
                "sys.stdin.readline()",
                "import os",
                "os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)  # not from the page cache",
                "try:",
                "    f.seek(0)",
                "    f.read(10)",
                "    print('read', flush=True)",
                "except OSError as e:",
                "    print('errno', e.errno, flush=True)"), mount.resolve("ops/tiny/main/part-0.parquet").toString())
                .redirectErrorStream(true).start();
        try {
            java.io.BufferedReader out = new java.io.BufferedReader(new java.io.InputStreamReader(holder.getInputStream()));
            assertThat(out.readLine()).isEqualTo("open");
            assertThat(w.terminate(30)).isZero();
            assertThat(w.output()).doesNotContain("still busy");
            holder.getOutputStream().write('\n');
            holder.getOutputStream().flush();
            assertThat(out.readLine()).as("the held file fails as after a crash").isEqualTo("errno 107");
        } finally {
            holder.destroyForcibly().waitFor();
        }
        assertThat(WarpdProcess.isMounted(mount)).isFalse();
    }

    @Test
    void theCacheDirectoryItMakesIsItsUsersOnly() throws Exception {
        Path mount = newMountPoint("private");
        Path cache = work.resolve("cache-private");
        assertThat(cache).doesNotExist();
        start(mount);
        assertServes(mount);

        // Cached dataset bytes: the mount (no --allow-other) shows them to this user only.
        for (Path dir : new Path[] {cache, cache.resolve("v1"), cache.resolve("catalog")}) {
            assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)))
                    .as(dir.toString()).isEqualTo("rwx------");
        }
        // Blocks are written to the cache in the background, after the read is answered.
        long cached = 0;
        for (long deadline = System.nanoTime() + 20_000_000_000L; cached == 0 && System.nanoTime() < deadline; ) {
            try (var blocks = Files.walk(cache.resolve("v1/blocks"))) {
                cached = blocks.filter(Files::isRegularFile).count();
            }
            if (cached == 0) {
                Thread.sleep(100);
            }
        }
        assertThat(cached).as("blocks cached, inside the private folder").isPositive();
    }

    @Test
    void unmountingFromOutsideStopsTheDaemon() throws Exception {
        Path mount = newMountPoint("external");
        WarpdProcess w = start(mount);
        assertServes(mount);
        Shell.run("fusermount", "-u", mount.toString()).requireSuccess();
        MountIT.waitFor(() -> !w.isAlive());
        assertThat(w.output()).contains("removed from outside");
        assertThat(WarpdProcess.isMounted(mount)).isFalse();
        // not 0: Restart=on-failure brings the mount back; a SIGTERM stays 0 (the tests below)
        assertThat(w.terminate(5)).as("exit status").isEqualTo(io.warpdata.daemon.warpd.WarpDaemon.UNMOUNTED_EXIT);
    }

    @Test
    void afterKillMinusNineTheNextStartClearsTheStaleMount() throws Exception {
        Path mount = newMountPoint("crash");
        WarpdProcess first = start(mount);
        assertServes(mount);
        first.kill9();
        assertThat(WarpdProcess.isMounted(mount)).isTrue();
        Shell.Result stale = Shell.run("ls", mount.toString());
        assertThat(stale.err()).contains("Transport endpoint is not connected");
        // audit 23: doctor said only "no warpd answers ... (a stale socket?)".
        Shell.Result doctor = m.warpctl("doctor");
        assertThat(doctor.out()).contains("dead mount", mount + " is a Warp mount whose warpd is gone",
                "fusermount -u -z " + mount);

        WarpdProcess second = start(mount);
        assertServes(mount);
        assertThat(second.output()).contains("stale");
        assertThat(second.terminate(30)).isZero();
        assertThat(WarpdProcess.isMounted(mount)).isFalse();
    }

    @Test
    void refusesABusyMountPointSayingWhatToDo() throws Exception {
        Path mount = newMountPoint("busy");
        start(mount);
        Shell.Result second = m.runWarpdToFailure(mount, work.resolve("cache-busy2"));
        assertThat(second.exit()).isEqualTo(1);
        assertThat(second.err()).contains("busy").contains("fusermount -u");
        assertServes(mount);
    }

    /**
     * A bucket the server does not have is a configuration error, as rejected credentials are:
     * warpd used to mount anyway, every listing failed with EIO, and status and doctor said the
     * store was reachable.
     */
    @Test
    void refusesARemoteWhoseBucketDoesNotExistSayingWhatToDo() throws Exception {
        Path mount = newMountPoint("nobucket");
        Shell.Result r = m.runWarpdToFailure(mount, work.resolve("cache-nobucket"), "s3://no-such-bucket-here/warp");
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err()).contains("bucket 'no-such-bucket-here' does not exist").contains("Create the bucket");
        assertThat(WarpdProcess.isMounted(mount)).isFalse();
    }

    /**
     * audit 23: an endpoint with a typo in its host, on a fresh cache, started warpd and said
     * "mounted" while every ls failed (systemd saw a healthy service). A cache that served the
     * store before still mounts without it, from its last known state.
     */
    @Test
    void refusesAnEndpointWhoseHostIsUnknownWhenItsCacheHoldsNothing() throws Exception {
        Shell.Result r = refusedWith("typo", "WARP_S3_ENDPOINT", "http://warp-store-typo.invalid:9000");
        assertThat(r.err()).contains("is not known", "Check --endpoint");
    }

    /**
     * warpd started on a fresh mount point and cache with {@code variable=value} added to the
     * environment, expected to refuse to start (exit 1) and leave nothing mounted.
     */
    private Shell.Result refusedWith(String name, String variable, String value) throws IOException {
        Path mount = newMountPoint(name);
        java.util.Map<String, String> env = new java.util.HashMap<>(m.env());
        env.put(variable, value);
        try {
            Shell.Result r = WarpdProcess.runToFailure(mount, m.remote(), work.resolve("cache-" + name), env);
            assertThat(r.exit()).as(r.err()).isEqualTo(1);
            assertThat(WarpdProcess.isMounted(mount)).isFalse();
            return r;
        } finally {
            WarpdProcess.unmount(mount);
        }
    }

    /**
     * Audit 37: a socket group that does not exist was found only when the control socket was
     * made, after the mount: warpd mounted, then unmounted, then said so. Given here as the
     * environment's WARP_SOCKET_GROUP, which the config file's socket-group also feeds.
     */
    @Test
    void refusesASocketGroupThatDoesNotExistBeforeMountingAnything() throws Exception {
        Shell.Result r = refusedWith("nogroup", "WARP_SOCKET_GROUP", "warp-no-such-group-37");
        assertThat(r.err()).contains("--socket-group warp-no-such-group-37: no such group").contains("groupadd");
        assertThat(r.out() + r.err()).doesNotContain("unmounted").doesNotContain("created the mount point");
    }

    @Test
    void refusesANonEmptyMountPointSayingWhatToDo() throws Exception {
        Path mount = newMountPoint("full");
        Files.writeString(mount.resolve("keep.txt"), "mine");
        Shell.Result r = m.runWarpdToFailure(mount, work.resolve("cache-full"));
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err()).contains("not empty").contains("keep.txt").contains("empty directory");
        assertThat(Files.readString(mount.resolve("keep.txt"))).isEqualTo("mine");
    }

    @Test
    void corruptBytesFromTheStoreFailOnlyThatReadWithEio() throws Exception {
        Path mount = newMountPoint("corrupt");
        WarpdProcess w = start(mount);
        Path shard = mount.resolve("ops/tiny@" + version.hex() + "/main/part-0.parquet");
        long size = Files.size(shard); // metadata (manifest) is loaded; the bytes are not
        assertThat(size).isEqualTo(Files.size(src.resolve("main/part-0.parquet")));
        m.s3.faults().corruptNextGets(1000);
        Shell.Result bad;
        try {
            bad = Shell.run("cat", shard.toString());
        } finally {
            m.s3.faults().clear();
        }
        assertThat(bad.exit()).isNotZero();
        assertThat(bad.err()).contains("Input/output error");
        assertThat(bad.out()).isEmpty();

        // The daemon keeps serving: other files, and the same file once the store is healthy. A
        // block served wrong again and again is not fetched again for a while (5 s after its
        // second failure, up to 30 s: audit 38), so the healthy store is read within that.
        MountIT.waitFor(() -> java.util.Arrays.equals(Files.readAllBytes(mount.resolve("ops/tiny/main/part-1.parquet")),
                Files.readAllBytes(src.resolve("main/part-1.parquet"))), 40);
        MountIT.waitFor(() -> java.util.Arrays.equals(Files.readAllBytes(shard),
                Files.readAllBytes(src.resolve("main/part-0.parquet"))), 40);
        assertServes(mount);
        assertThat(w.output()).contains("failed (EIO)").contains("ops/tiny@" + version.hex());
        Path stats = work.resolve("cache-corrupt/stats.json");
        MountIT.waitFor(() -> Files.exists(stats) && !Files.readString(stats).contains("\"io_errors\" : 0"));
        assertThat(Files.readString(stats)).containsPattern("\"io_errors\" : [1-9]");
    }

    @Test
    void fullHashAndPrefixNamesServeTheSameVersion() throws Exception {
        Path mount = newMountPoint("names");
        start(mount);
        byte[] full = Files.readAllBytes(mount.resolve("ops/tiny@" + version.hex() + "/main/part-1.parquet"));
        byte[] prefix = Files.readAllBytes(mount.resolve("ops/tiny@" + version.hex().substring(0, 8) + "/main/part-1.parquet"));
        assertThat(prefix).isEqualTo(full).isEqualTo(Files.readAllBytes(src.resolve("main/part-1.parquet")));
    }

    /** The fstype of the mount at a path, from /proc/self/mountinfo. */
    static final class MountStatus {
        static String of(Path mount) throws IOException {
            String want = " " + mount.toAbsolutePath().normalize() + " ";
            return Files.readAllLines(Path.of("/proc/self/mountinfo")).stream().filter(l -> l.contains(want))
                    .map(l -> l.substring(l.indexOf(" - ") + 3).split(" ")[0]).reduce((a, b) -> b).orElse("");
        }
    }

}
