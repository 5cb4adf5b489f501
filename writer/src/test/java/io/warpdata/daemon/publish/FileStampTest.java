package io.warpdata.daemon.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
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
        assertThat(new FileStamp(1, 3, now - 1_000_000, -1).racy(now, now)).as("changed 1 ms before").isTrue();
        assertThat(new FileStamp(1, 3, now - 1_000_000_000L, -1).racy(now, now)).as("1 s before").isFalse();
        assertThat(new FileStamp(1, 3, now - 30_000_000_000L, now - 1_000_000).racy(now, now))
                .as("its inode changed 1 ms before").isTrue();
        assertThat(new FileStamp(1, 3, now + 86_400_000_000_000L, -1).racy(now, now))
                .as("a day ahead: a write now gets an earlier time").isFalse();
        long wholeSecond = now - now % 1_000_000_000L - 1_000_000_000L;
        assertThat(new FileStamp(1, 3, wholeSecond, -1).racy(now, now))
                .as("whole seconds (a file system that keeps no more): 1-2 s before is within its tick").isTrue();
        assertThat(new FileStamp(1, 3, now - 5_000_000_000L, -1).racy(now - 5_000_000_000L, now))
                .as("changed while a listing that began then ran").isTrue();
    }

    @Test
    @org.junit.jupiter.api.Timeout(10)
    void aFileJustWrittenIsStampedOnceItsTickHasPassed() throws Exception {
        Path f = Files.write(tmp.resolve("a"), new byte[] {1, 2, 3});
        FileStamp stamp = FileStamp.settled(f);
        long after = FileStamp.wallNanos();
        assertThat(after).as("stamped a tick after its last change").isGreaterThanOrEqualTo(stamp.latest() + stamp.tickNanos());
        assertThat(stamp).isEqualTo(FileStamp.of(f));

        Path ahead = Files.write(tmp.resolve("b"), new byte[] {1});
        Files.setLastModifiedTime(ahead, FileTime.from(java.time.Instant.now().plusSeconds(86_400)));
        assertThat(FileStamp.settled(ahead).modified()).as("a time ahead needs no wait")
                .isEqualTo(FileStamp.of(ahead).modified());
    }

    /** A folder's listing waits once for what changed just before or during it, and stamps those files again. */
    @Test
    @org.junit.jupiter.api.Timeout(10)
    void aListingStampsItsFilesChangedInTheLastTickAgainOnceItHasPassed() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("in"));
        Path old = Files.write(dir.resolve("old"), new byte[] {1});
        Files.setLastModifiedTime(old, FileTime.from(java.time.Instant.now().minusSeconds(3600)));
        Files.write(dir.resolve("new"), new byte[] {2, 3});
        java.util.List<ArtifactPacker.SourceFile> listed = new ArtifactPacker(tmp.resolve("staging"), 1 << 20).scan("a", dir);
        long after = FileStamp.wallNanos();
        assertThat(listed).hasSize(2);
        for (ArtifactPacker.SourceFile f : listed) {
            assertThat(f.stamp().racy(after, after)).as(f.member()).isFalse();
            assertThat(after).as(f.member()).isGreaterThanOrEqualTo(f.stamp().latest() + f.stamp().tickNanos());
        }
    }
}
