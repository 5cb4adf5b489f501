package io.warpdata.daemon.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What tells publish that an input is no longer the file it first read (audits 45 and 46). */
class FileStampTest {
    @TempDir
    Path tmp;

    @Test
    void theSameFileUntouchedIsTheSame() throws Exception {
        Path f = Files.write(tmp.resolve("a"), new byte[] {1, 2, 3});
        FileStamp stamp = FileStamp.of(f);
        assertThatCode(() -> stamp.requireSame(f, "later")).doesNotThrowAnyException();
        FileStamp walked = FileStamp.of(Files.readAttributes(f, BasicFileAttributes.class));
        assertThatCode(() -> walked.requireSame(f, "later")).as("a walk's attributes, no change time")
                .doesNotThrowAnyException();
    }

    @Test
    void aRewriteOfTheSameSizeEvenWithItsTimeRestoredIsNotTheSame() throws Exception {
        Path f = Files.write(tmp.resolve("a"), new byte[] {1, 2, 3});
        FileTime then = Files.getLastModifiedTime(f);
        FileStamp stamp = FileStamp.of(f);
        Thread.sleep(50); // past the kernel's coarse clock tick
        Files.write(f, new byte[] {4, 5, 6});
        org.junit.jupiter.api.Assumptions.assumeTrue(FileStamp.of(f).modified() != stamp.modified(),
                "a file system whose timestamps are coarser than 50 ms");
        assertThatThrownBy(() -> stamp.requireSame(f, "while it was read")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining(f + " changed while it was read (it was written to)");
        Files.setLastModifiedTime(f, then); // touch -m: only the change time tells
        assertThatThrownBy(() -> stamp.requireSame(f, "while it was read")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining(f + " changed while it was read (its inode changed: written with its time put back");
    }

    @Test
    void anotherFileInItsPlaceOrAnotherSizeIsNamed() throws Exception {
        Path f = Files.write(tmp.resolve("a"), new byte[] {1, 2, 3});
        FileStamp stamp = FileStamp.of(f);
        Path other = Files.write(tmp.resolve("b"), new byte[] {1, 2, 3});
        Files.move(other, f, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        assertThatThrownBy(() -> stamp.requireSame(f, "during its upload")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("it is another file now");
        FileStamp again = FileStamp.of(f);
        Files.write(f, new byte[] {1}, java.nio.file.StandardOpenOption.APPEND);
        assertThatThrownBy(() -> again.requireSame(f, "during its upload")).hasMessageContaining("3 bytes then, 4 now");
    }

    /**
     * A write within the clock tick of a file's last change keeps its time: a stamp taken in that
     * tick could not tell it. A first stamp is taken once the tick has passed.
     */
    @Test
    void aStampWithinItsFilesClockTickIsRacy() {
        long now = 1_700_000_000_123_456_789L;
        assertThat(stamp(now - 1_000_000, -1).racy(now, now)).as("changed 1 ms before").isTrue();
        assertThat(stamp(now - 1_000_000_000L, -1).racy(now, now)).as("1 s before").isFalse();
        assertThat(stamp(now - 30_000_000_000L, now - 1_000_000).racy(now, now)).as("its inode changed 1 ms before").isTrue();
        long dayAhead = now + 86_400_000_000_000L;
        assertThat(stamp(dayAhead, -1).racy(now, now)).as("a day ahead: a write now gets an earlier time").isFalse();
        assertThat(stamp(dayAhead, now - 1_000_000).racy(now, now))
                .as("a day ahead, but its inode changed 1 ms before (review 56)").isTrue();
        long wholeSecond = now - now % 1_000_000_000L - 1_000_000_000L;
        assertThat(stamp(wholeSecond, -1).racy(now, now))
                .as("whole seconds (a file system that keeps no more): 1-2 s before is within its tick").isTrue();
        assertThat(stamp(now - 5_000_000_000L, -1).racy(now - 5_000_000_000L, now))
                .as("changed while a listing that began then ran").isTrue();
    }

    private static FileStamp stamp(long modified, long changed) {
        return new FileStamp(1, 3, modified, changed);
    }

    /** A clock the test moves: sleeping moves it, and is counted. */
    private static final class TestClock implements FileStamp.Clock {
        long now = 1_700_000_000_000_000_000L;
        final List<Long> sleeps = new ArrayList<>();

        @Override
        public long nanos() {
            return now;
        }

        @Override
        public void sleep(long nanos) {
            sleeps.add(nanos);
            now += nanos;
        }
    }

    /** A listing waits once, a tick past the latest racy change, and stamps again only the racy files. */
    @Test
    void aListingWaitsOnceForItsRacyFilesAndStampsOnlyThoseAgain() {
        TestClock clock = new TestClock();
        long since = clock.now;
        List<FileStamp> listed = List.of(stamp(since - 3_600_000_000_000L, -1), stamp(since - 1_000_000, -1),
                stamp(since + 5_000_000, -1));
        clock.now += 10_000_000; // the listing took 10 ms
        List<FileStamp> restamped = new ArrayList<>();
        List<FileStamp> settled = FileStamp.settle(listed, since, s -> s, s -> Path.of("f"), s -> {
            restamped.add(s);
            return stamp(s.modified(), -1); // not written since: the same time, now a tick old
        }, clock);
        assertThat(clock.sleeps).as("one wait, to a tick past the latest change").containsExactly(15_000_000L);
        assertThat(restamped).containsExactly(listed.get(1), listed.get(2));
        assertThat(settled).isEqualTo(listed);
        assertThat(FileStamp.settle(settled, clock.now, s -> s, s -> Path.of("f"), s -> s, clock)).isEqualTo(listed);
        assertThat(clock.sleeps).as("nothing racy: no wait").hasSize(1);
    }

    /** A file written again within every tick publish waits is refused, naming it, after three waits. */
    @Test
    void aFileThatKeepsChangingIsSaidToBeStillBeingWritten() {
        TestClock clock = new TestClock();
        assertThatThrownBy(() -> FileStamp.settle(List.of(stamp(clock.now, -1)), clock.now, s -> s,
                s -> Path.of("/data/part-0.parquet"), s -> stamp(clock.now, -1), clock))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("/data/part-0.parquet is still being written");
        assertThat(clock.sleeps).hasSize(FileStamp.SETTLE_TRIES);
    }

    @Test
    @org.junit.jupiter.api.Timeout(10)
    void aFileJustWrittenIsStampedOnceItsTickHasPassed() throws Exception {
        Path f = Files.write(tmp.resolve("a"), new byte[] {1, 2, 3});
        FileStamp stamp = FileStamp.settled(f);
        long after = FileStamp.WALL.nanos();
        assertThat(stamp.racy(after, after)).as("stamped a tick after its last change").isFalse();
        assertThat(stamp).isEqualTo(FileStamp.of(f));

        Path ahead = Files.write(tmp.resolve("b"), new byte[] {1});
        Files.setLastModifiedTime(ahead, FileTime.from(java.time.Instant.now().plusSeconds(86_400)));
        TestClock clock = new TestClock();
        clock.now = FileStamp.of(ahead).changed() + 1_000_000; // 1 ms after the time was set
        FileStamp.settled(ahead, clock);
        // Its change time is then, when the time was set: a tick is waited for that, not for the day ahead.
        assertThat(clock.sleeps).as("one wait, for the change time").hasSize(1);
        assertThat(clock.sleeps.get(0)).isEqualTo(FileStamp.TICK_NANOS - 1_000_000);
    }

    /**
     * A folder's listing stamps its files changed in the last tick again once it has passed: one
     * wait, for the file just written, none for the one an hour old.
     */
    @Test
    void aListingStampsItsFilesChangedInTheLastTickAgainOnceItHasPassed() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("in"));
        Path old = Files.write(dir.resolve("old"), new byte[] {1});
        Files.setLastModifiedTime(old, FileTime.from(java.time.Instant.now().minusSeconds(3600)));
        Path fresh = Files.write(dir.resolve("new"), new byte[] {2, 3});
        TestClock clock = new TestClock();
        clock.now = FileStamp.of(fresh).modified() + 1_000_000; // listed 1 ms after it was written
        List<ArtifactPacker.SourceFile> listed = new ArtifactPacker(tmp.resolve("staging"), 1 << 20).scan("a", dir, clock);
        assertThat(listed).hasSize(2);
        assertThat(clock.sleeps).as("one wait, to a tick past the new file's time").containsExactly(
                FileStamp.TICK_NANOS - 1_000_000);
        for (ArtifactPacker.SourceFile f : listed) {
            assertThat(f.stamp().racy(clock.now, clock.now)).as(f.member()).isFalse();
        }
    }
}
