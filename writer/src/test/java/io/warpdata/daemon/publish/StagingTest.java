package io.warpdata.daemon.publish;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Staging directories of killed publishes are removed by the next one; running ones are not. */
class StagingTest {
    @TempDir
    Path parent;

    @Test
    void theNextPublishRemovesWhatAKilledOneLeftAndKeepsWhatRunningOnesUse() throws Exception {
        Path killed = parent.resolve("warp-publish-111");
        Files.createDirectories(killed.resolve("a"));
        Files.write(killed.resolve("a/a-00000.tar"), new byte[100_000]);
        // Its publish died holding nothing, while writing (the folder changed just now: audit 42,
        // a warpd restarted at once left its full copy until a publish a minute later).
        Files.createFile(killed.resolve(Staging.LOCK));
        Path starting = Files.createDirectories(parent.resolve(".warp-publish-000")); // being made, not locked yet
        Files.createFile(starting.resolve(Staging.LOCK));
        Path crashedWhileMade = Files.createDirectories(parent.resolve(".warp-publish-666")); // before its lock file
        Files.setLastModifiedTime(crashedWhileMade, FileTime.from(Instant.now().minus(Duration.ofMinutes(5))));
        Path otherKind = parent.resolve("warp-view-222");
        Files.createDirectories(otherKind);
        Files.createFile(otherKind.resolve(Staging.LOCK));
        Path oldLeftover = Files.createDirectories(parent.resolve("warp-publish-333")); // before lock files: a day old
        Files.setLastModifiedTime(oldLeftover, FileTime.from(Instant.now().minus(Duration.ofDays(2))));
        Path recentWithoutLock = Files.createDirectories(parent.resolve("warp-publish-444"));
        Path otherProcess = Files.createDirectories(parent.resolve("warp-publish-555"));
        Path lock = otherProcess.resolve(Staging.LOCK);
        Files.createFile(lock);
        FileTime twoMinutesAgo = FileTime.from(Instant.now().minus(Duration.ofMinutes(2)));
        for (Path d : new Path[] {otherKind, otherProcess}) {
            Files.setLastModifiedTime(d, twoMinutesAgo);
        }
        Process holder = new ProcessBuilder("/usr/bin/python3", "-c",
                "import fcntl,sys; f=open(sys.argv[1],'w'); fcntl.lockf(f, fcntl.LOCK_EX); print('locked', flush=True);"
                        + " sys.stdin.read()", lock.toString()).start();
        assertThat(new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8))
                .readLine()).isEqualTo("locked");
        try (Staging running = Staging.create(parent, "warp-publish-", "room")) {
            try (Staging next = Staging.create(parent, "warp-publish-", "room")) {
                assertThat(killed).as("its publish is gone").doesNotExist();
                assertThat(oldLeftover).as("no lock file, two days old").doesNotExist();
                assertThat(recentWithoutLock).as("no lock file, but new: maybe an older warpctl's").exists();
                assertThat(otherProcess).as("locked by a live process").exists();
                assertThat(running.dir()).as("locked by this process").exists();
                assertThat(otherKind).as("another prefix").exists();
                assertThat(starting).as("being made within the minute: maybe a publish about to lock it").exists();
                assertThat(crashedWhileMade).as("being made, five minutes ago, with no lock file").doesNotExist();
                assertThat(running.dir().getFileName().toString()).as("renamed once locked").startsWith("warp-publish-");
                assertThat(next.dir()).isDirectory();
            }
            assertThat(running.dir()).exists();
        } finally {
            holder.getOutputStream().close();
            holder.waitFor();
        }
        assertThat(Staging.removeLeftovers(parent, "warp-publish-")).as("the live one exited: its lock is free").isZero();
        assertThat(otherProcess).as("empty but for its lock file").doesNotExist();
        try (var left = Files.list(parent)) {
            assertThat(left.map(p -> p.getFileName().toString()))
                    .containsExactlyInAnyOrder("warp-view-222", "warp-publish-444", ".warp-publish-000");
        }
    }
}
