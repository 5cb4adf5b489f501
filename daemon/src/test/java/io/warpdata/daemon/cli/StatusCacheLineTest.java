package io.warpdata.daemon.cli;

import io.warpdata.daemon.control.protocol.CacheCalls;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code warpctl status}'s "cache:" line, from what a running warpd reports of its cache (audit 35). */
class StatusCacheLineTest {
    @TempDir
    Path tmp;

    private CacheCalls.Stats stats(long used, long limit, long floor, long free) {
        return new CacheCalls.Stats("auto", tmp.toString(), used, limit, floor, free, 0, 0, 0, Map.of(), List.of(), List.of(), 0, 0);
    }

    @Test
    void aCacheWithRoomIsOneLineOfUseAndFreeSpace() throws Exception {
        Files.createDirectories(tmp.resolve("v1/tmp"));
        List<String> lines = StatusCommand.cacheLines(Doctor.cacheCheck(stats(3L << 20, 1L << 30, 1L << 20, 4L << 30)));
        assertThat(lines).hasSize(1);
        assertThat(lines.get(0)).startsWith("  cache:      " + tmp).contains("used of its", "free on its disk")
                .doesNotContain("WARN");
    }

    /** Audit 35: the disk full under a running warpd was in its log and in doctor, not in status. */
    @Test
    void aDiskUnderTheFreeSpaceFloorIsAWarningWithItsFix() throws Exception {
        Files.createDirectories(tmp.resolve("v1/tmp"));
        List<String> lines = StatusCommand.cacheLines(Doctor.cacheCheck(stats(0, 1L << 30, 2L << 30, 1L << 30)));
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0)).startsWith("  cache:      WARN ").contains("under the free-space floor",
                "caches nothing new");
        assertThat(lines.get(1)).startsWith("              fix: free space on that disk");
    }

    @Test
    void aCacheFolderDeletedUnderWarpdIsAWarning() {
        List<String> lines = StatusCommand.cacheLines(Doctor.cacheCheck(stats(5L << 20, 1L << 30, 1L << 20, 4L << 30)));
        assertThat(lines.get(0)).contains("WARN", "is gone (deleted while warpd runs)");
    }

    /** Session 30's review: status, run by health checks every few seconds, wrote doctor's probe file into warpd's cache. */
    @Test
    void statusWritesNothingIntoWarpdsCache() throws Exception {
        Path dir = java.nio.file.Files.createDirectories(tmp.resolve("c").resolve("v1/tmp"));
        java.nio.file.attribute.FileTime before = java.nio.file.Files.getLastModifiedTime(dir);
        Thread.sleep(20);
        CacheCalls.Stats c = new CacheCalls.Stats("auto", tmp.resolve("c").toString(), 0, 1L << 30, 1L << 20,
                java.nio.file.Files.getFileStore(tmp).getUsableSpace(), 0, 0, 0, Map.of(), List.of(), List.of(), 0, 0);
        Doctor.cacheCheck(c, false);
        assertThat(java.nio.file.Files.getLastModifiedTime(dir)).as("no file made and deleted there").isEqualTo(before);
        Doctor.cacheCheck(c, true);
        assertThat(java.nio.file.Files.getLastModifiedTime(dir)).as("doctor's probe does").isNotEqualTo(before);
    }
}
