package io.warpdata.daemon.mount;

import static org.assertj.core.api.Assertions.assertThat;

import io.warpdata.store.StoreLayout;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A store that lies, edited on S3Proxy's disk under a running warpd (issue 17): a {@code latest}
 * naming a version that does not exist, a version file whose content hashes to another id, and
 * a 5 GB object where the 1 KB {@code latest} pointer should be. Each lying dataset answers
 * ENOENT or EIO with one log line naming it; the clean dataset beside them reads byte-exact
 * before and after, and warpd stays up.
 */
class HostileStoreIT {
    private static final String PREFIX = "it-hostile";
    private static final DatasetId CLEAN = new DatasetId("ok", "clean");
    private static final DatasetId NO_VERSION = new DatasetId("evil", "noversion");
    private static final DatasetId WRONG_ID = new DatasetId("evil", "wrongid");
    private static final DatasetId HUGE_POINTER = new DatasetId("evil", "hugepointer");

    private static MountedStore m;
    private static Path cleanSrc;

    @BeforeAll
    static void publishCleanAndLyingDatasetsAndMount() throws IOException {
        m = MountedStore.serveOnDisk(PREFIX);
        cleanSrc = m.writeSample("clean-src", 5_000, 3, 1);
        VersionHash clean = m.publish(CLEAN, cleanSrc);
        m.publish(NO_VERSION, cleanSrc);
        VersionHash wrong = m.publish(WRONG_ID, cleanSrc);
        m.publish(HUGE_POINTER, cleanSrc);
        // The lies, written into the server's files as another program (or an attacker) would.
        Files.writeString(onDisk(StoreLayout.latest(NO_VERSION)), "{\"version\":\"" + "ab".repeat(32) + "\"}");
        Files.copy(onDisk(StoreLayout.version(CLEAN, clean)), onDisk(StoreLayout.version(WRONG_ID, wrong)),
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        try (RandomAccessFile f = new RandomAccessFile(onDisk(StoreLayout.latest(HUGE_POINTER)).toFile(), "rw")) {
            f.setLength(5L << 30); // sparse: 5 GB to the server, nothing on this disk
        }
        m.mount();
    }

    /** The file S3Proxy's filesystem backend serves for {@code key} under the test prefix. */
    private static Path onDisk(String key) {
        Path p = m.onDisk(key);
        assertThat(p).as("S3Proxy keeps objects as plain files").isRegularFile();
        return p;
    }

    @AfterAll
    static void stopEverything() throws IOException {
        if (m != null) {
            m.close();
        }
    }

    private static Map<String, String> cleanSource() {
        Map<String, String> expected = new TreeMap<>();
        SampleData.hashes(cleanSrc.resolve("main")).forEach((p, h) -> expected.put("main/" + p, h));
        SampleData.hashes(cleanSrc.resolve("images")).forEach((p, h) -> expected.put("images/" + p, h));
        return expected;
    }

    private static Map<String, String> cleanOnMount() {
        Shell.Result r = Shell.run(m.mount, Map.of(), 120, List.of("bash", "-c",
                "cd ok/clean/ && find . -type f -not -path './.warp/*' -print0 | sort -z | xargs -0 sha256sum"))
                .requireSuccess();
        Map<String, String> out = new TreeMap<>();
        for (String line : r.out().split("\n")) {
            if (!line.isBlank()) {
                out.put(line.substring(line.indexOf("./") + 2), line.substring(0, 64));
            }
        }
        return out;
    }

    /** {@code ls} of a lying dataset: its exit status and message, within a bound. */
    private static Shell.Result ls(DatasetId id) {
        long t0 = System.nanoTime();
        Shell.Result r = Shell.run(m.mount, Map.of(), 60, List.of("ls", id + "/"));
        assertThat((System.nanoTime() - t0) / 1_000_000).as("ls " + id + " took ms").isLessThan(30_000);
        return r;
    }

    private static long logLinesNaming(String what) {
        return m.warpd().output().lines().filter(l -> l.contains(what)).count();
    }

    @Test
    void lyingDatasetsFailTypedAndTheCleanOneReadsByteExact() throws InterruptedException {
        Map<String, String> expected = cleanSource();
        assertThat(cleanOnMount()).isEqualTo(expected);

        Shell.Result noVersion = ls(NO_VERSION);
        Shell.Result wrongId = ls(WRONG_ID);
        Shell.Result huge = ls(HUGE_POINTER);
        Thread.sleep(500); // the log lines are pumped from warpd's output by another thread

        assertThat(noVersion.exit()).isNotZero();
        assertThat(noVersion.err()).contains("No such file or directory");
        assertThat(wrongId.exit()).isNotZero();
        assertThat(wrongId.err()).contains("Input/output error");
        assertThat(huge.exit()).isNotZero();
        assertThat(huge.err()).contains("Input/output error");
        assertThat(logLinesNaming("ManifestCorrupted")).as(m.warpd().output()).isEqualTo(1);
        assertThat(logLinesNaming("ObjectTooLarge")).as(m.warpd().output()).isEqualTo(1);
        assertThat(m.warpd().output()).doesNotContain("unexpected error").doesNotContain("Exception in thread");
        assertThat(m.warpd().isAlive()).isTrue();
        assertThat(cleanOnMount()).isEqualTo(expected);
    }
}
