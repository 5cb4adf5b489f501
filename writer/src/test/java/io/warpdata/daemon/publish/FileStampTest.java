package io.warpdata.daemon.publish;

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
}
