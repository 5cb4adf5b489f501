package io.warpdata.daemon.control;

import io.warpdata.store.BlobStores;
import io.warpdata.store.StoreUnavailableException;
import io.warpdata.daemon.cli.Doctor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

class DoctorTest {
    @TempDir
    Path tmp;

    private Doctor.Host host(Map<String, String> env, String ldconfig, String fuseConf) throws IOException {
        Path dev = Files.writeString(tmp.resolve("fuse-dev"), "");
        Path conf = Files.writeString(tmp.resolve("fuse.conf"), fuseConf);
        return new Doctor.Host(env, dev, conf, tmp.resolve("home"), () -> ldconfig,
                (uri, ep) -> BlobStores.open(uri, ep));
    }

    private Doctor.Check check(List<Doctor.Check> checks, String name) {
        return checks.stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow();
    }

    @Test
    void healthyMachinePassesEverythingButTheMissingDaemon() throws IOException {
        Path bin = Files.createDirectories(tmp.resolve("bin"));
        Path fm = Files.writeString(bin.resolve("fusermount3"), "#!/bin/sh\n");
        Files.setPosixFilePermissions(fm, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path store = Files.createDirectories(tmp.resolve("store/blobs/sha256/ab"));
        Files.writeString(store.resolve("ab" + "0".repeat(62)), "some blob bytes", StandardCharsets.UTF_8);
        Files.createDirectories(tmp.resolve("store/datasets/ws"));
        Doctor d = new Doctor(new Doctor.Settings(Optional.of(tmp.resolve("store").toUri().toString()), Optional.empty(),
                tmp.resolve("cache"), 1000, tmp.resolve("none.sock"), false),
                host(Map.of("PATH", bin.toString()), "\tlibfuse.so.2 (libc6,x86-64) => /lib/x86_64-linux-gnu/libfuse.so.2\n",
                        "user_allow_other\n"));
        List<Doctor.Check> checks = d.run();
        assertThat(checks).extracting(Doctor.Check::name).containsExactly("/dev/fuse", "fusermount", "libfuse2",
                "user_allow_other", "remote", "cache dir", "control socket", "DuckDB");
        // A machine whose temp disk is under warpd's free-space floor (5%, at least 1 GiB) is told so.
        var fs = Files.getFileStore(tmp);
        boolean roomy = fs.getUsableSpace() > io.warpdata.blobcache.cache.CacheConfig.floorBytes(
                io.warpdata.blobcache.cache.CacheConfig.AUTO_FREE_FLOOR, fs.getTotalSpace()) + 1000;
        assertThat(checks).filteredOn(c -> !c.name().equals("control socket") && (roomy || !c.name().equals("cache dir")))
                .allSatisfy(c -> assertThat(c.status()).as(c.toString()).isEqualTo(Doctor.Status.PASS));
        if (!roomy) {
            assertThat(check(checks, "cache dir").detail()).contains("free-space floor");
        }
        assertThat(check(checks, "remote").detail()).contains("listed 1 workspace", "ranged read of 15 bytes");
        assertThat(check(checks, "fusermount").detail()).isEqualTo(fm.toString());
        Doctor.Check socket = check(checks, "control socket");
        assertThat(socket.status()).isEqualTo(Doctor.Status.FAIL);
        assertThat(socket.fix()).contains("warpd");
    }

    @Test
    void failuresComeWithTheCommandThatFixesThem() throws IOException {
        Doctor d = new Doctor(new Doctor.Settings(Optional.of("s3://bucket/prefix"), Optional.empty(),
                tmp.resolve("cache"), 1000, tmp.resolve("none.sock"), true),
                new Doctor.Host(Map.of("PATH", tmp.toString()), tmp.resolve("no-fuse"), tmp.resolve("no-fuse.conf"),
                        tmp.resolve("home"), () -> "", (uri, ep) -> {
                            throw new StoreUnavailableException("bucket unreachable", null);
                        }));
        List<Doctor.Check> checks = d.run();
        assertThat(check(checks, "/dev/fuse").fix()).contains("modprobe fuse");
        assertThat(check(checks, "fusermount").fix()).contains("apt-get install fuse3");
        assertThat(check(checks, "libfuse2").fix()).contains("apt-get install libfuse2");
        Doctor.Check allowOther = check(checks, "user_allow_other");
        assertThat(allowOther.status()).as("required with --allow-other").isEqualTo(Doctor.Status.FAIL);
        // "sudo" only for a user who is not root: a root shell on a box without sudo has no such command.
        boolean root = io.warpdata.daemon.control.ProcessIdentity.uid() == 0;
        assertThat(allowOther.fix()).contains(root ? "echo user_allow_other | tee -a" : "echo user_allow_other | sudo tee -a");
        assertThat(allowOther.fix().contains("sudo")).isEqualTo(!root);
        Doctor.Check creds = check(checks, "AWS credentials");
        assertThat(creds.status()).isEqualTo(Doctor.Status.FAIL);
        assertThat(creds.fix()).contains("AWS_ACCESS_KEY_ID");
        assertThat(check(checks, "remote").status()).isEqualTo(Doctor.Status.FAIL);
        assertThat(check(checks, "remote").detail()).contains("bucket unreachable");
        assertThat(check(checks, "remote").fix()).isNotBlank();
    }

    /**
     * An S3 store's answer to the conditional-write probe (a stand-in over a local store answers
     * it as S3Proxy 2.x, S3Proxy 4 and read-only credentials do; S3BlobStoreIT probes a real server).
     */
    @Test
    void aStoreThatIgnoresConditionalWritesIsAWarningSayingWhatRacesItLoses() throws IOException {
        Files.createDirectories(tmp.resolve("store/datasets"));
        String uri = tmp.resolve("store").toUri().toString();
        java.util.function.Function<java.util.function.Supplier<Optional<Boolean>>, Doctor> doctor = answer -> new Doctor(
                new Doctor.Settings(Optional.of(uri), Optional.empty(), tmp.resolve("cache"), 1000, tmp.resolve("none.sock"),
                        false),
                new Doctor.Host(Map.of(), tmp.resolve("no-fuse"), tmp.resolve("no-fuse.conf"), tmp.resolve("home"), () -> "",
                        (u, ep) -> answering(BlobStores.open(u, ep), answer)));
        Doctor.Check ignored = check(doctor.apply(() -> Optional.of(false)).run(), "conditional writes");
        assertThat(ignored.status()).isEqualTo(Doctor.Status.WARN);
        assertThat(ignored.detail()).contains("accepted a PUT with If-None-Match: *", "both be told they won");
        assertThat(ignored.fix()).contains("one writer at a time");
        assertThat(check(doctor.apply(() -> Optional.of(true)).run(), "conditional writes").status())
                .isEqualTo(Doctor.Status.PASS);
        Doctor.Check readOnly = check(doctor.apply(() -> {
            throw new io.warpdata.store.PermissionDeniedException("access denied writing warp-probe/x", null);
        }).run(), "conditional writes");
        assertThat(readOnly.status()).isEqualTo(Doctor.Status.WARN);
        assertThat(readOnly.detail()).contains("not checked", "cannot write");
        // a directory store locks instead: no such check
        assertThat(doctor.apply(Optional::empty).run()).extracting(Doctor.Check::name).doesNotContain("conditional writes");
    }

    /** {@code store}, answering the conditional-write probe with {@code answer}. */
    private static io.warpdata.store.BlobStore answering(io.warpdata.store.BlobStore store,
                                                           java.util.function.Supplier<Optional<Boolean>> answer) {
        return (io.warpdata.store.BlobStore) java.lang.reflect.Proxy.newProxyInstance(DoctorTest.class.getClassLoader(),
                new Class<?>[] {io.warpdata.store.BlobStore.class}, (proxy, method, args) -> {
                    if (method.getName().equals("enforcesConditionalWrites")) {
                        return answer.get();
                    }
                    try {
                        return method.invoke(store, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    @Test
    void aCacheDiskOutOfInodesIsWarnedOfThoughItHasBytesFree() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
                "mounts a tmpfs: root only");
        Path disk = Files.createDirectories(tmp.resolve("disk"));
        // 2 GiB of bytes (above the 1 GiB floor), 12,000 inodes.
        assertThat(new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=2g,nr_inodes=12000", "tmpfs", disk.toString())
                .inheritIO().start().waitFor()).isZero();
        try {
            Doctor d = new Doctor(new Doctor.Settings(Optional.empty(), Optional.empty(), disk.resolve("cache"), 1,
                    tmp.resolve("none.sock"), false), host(Map.of(), "", "user_allow_other\n"));
            assertThat(check(d.run(), "cache dir").status()).isEqualTo(Doctor.Status.PASS);
            for (int i = 0; i < 3000; i++) {
                Files.writeString(disk.resolve("f" + i), "");
            }
            // audit 13: a disk out of inodes was diagnosed by warpd's log and cache_writes_skipped only.
            Doctor.Check c = check(d.run(), "cache dir");
            assertThat(c.status()).isEqualTo(Doctor.Status.WARN);
            assertThat(c.detail()).contains("inodes free", "of 12000", "a file per cached block");
            assertThat(c.fix()).contains("--cache-dir");
        } finally {
            new ProcessBuilder("umount", disk.toString()).inheritIO().start().waitFor();
        }
    }

    @Test
    void missingUserAllowOtherIsOnlyAWarningWithoutAllowOther() throws IOException {
        Doctor d = new Doctor(new Doctor.Settings(Optional.empty(), Optional.empty(), tmp, 1, tmp.resolve("none.sock"), false),
                host(Map.of(), "", "#user_allow_other\n"));
        assertThat(check(d.run(), "user_allow_other").status()).isEqualTo(Doctor.Status.WARN);
    }

    @Test
    void credentialsFromAProfileFileCount() throws IOException {
        Files.createDirectories(tmp.resolve("home/.aws"));
        Files.writeString(tmp.resolve("home/.aws/credentials"), "[train]\naws_access_key_id = x\n");
        Doctor d = new Doctor(new Doctor.Settings(Optional.of("s3://b/p"), Optional.empty(), tmp, 1, tmp.resolve("none.sock"), false),
                host(Map.of("AWS_PROFILE", "train"), "", ""));
        Doctor.Check creds = d.run().stream().filter(c -> c.name().equals("AWS credentials")).findFirst().orElseThrow();
        assertThat(creds.status()).isEqualTo(Doctor.Status.PASS);
        assertThat(creds.detail()).contains("train");
    }
}
