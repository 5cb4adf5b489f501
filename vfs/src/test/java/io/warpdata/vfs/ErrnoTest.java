package io.warpdata.vfs;

import io.warpdata.blobcache.cache.BlockVerificationException;
import io.warpdata.catalog.AmbiguousVersionException;
import io.warpdata.catalog.DatasetNotFoundException;
import io.warpdata.store.StoreUnavailableException;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.ManifestCorruptedException;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

class ErrnoTest {
    private final AtomicLong now = new AtomicLong();
    private final Errno errno = new Errno(now::get);

    @Test
    void missingThingsAreEnoent() {
        assertThat(errno.of(new NoSuchEntryException("/ws/x"), "getattr", "/ws/x")).isEqualTo(Errno.ENOENT);
        assertThat(errno.of(new DatasetNotFoundException("ws/x", "memory://test", List.of()), "getattr", "/ws/x"))
                .isEqualTo(Errno.ENOENT);
        assertThat(errno.of(new AmbiguousVersionException("ws/x@abcdabcd", List.of("ws/x@abcdabcd1", "ws/x@abcdabcd2")), "getattr", "/ws/x@abcdabcd"))
                .isEqualTo(Errno.ENOENT);
        assertThat(errno.notFoundCount()).isEqualTo(3);
        assertThat(errno.ioErrorCount()).isZero();
    }

    @Test
    void storeCorruptionAndVerificationFailuresAreEioAndCountedByType() {
        assertThat(errno.ioErrorsByType()).as("the usual types count from 0 before the first error")
                .containsEntry("StoreUnavailable", 0L).containsEntry("VerificationFailed", 0L);
        BlobId blob = BlobId.of(new byte[] {1});
        assertThat(errno.of(new StoreUnavailableException("timeout reading x", null), "read", "/ws/a@h/t/x")).isEqualTo(Errno.EIO);
        assertThat(errno.of(new BlockVerificationException(blob, 3), "read", "/ws/a@h/t/x")).isEqualTo(Errno.EIO);
        assertThat(errno.of(new BlockVerificationException(blob, 4), "read", "/ws/a@h/t/x")).isEqualTo(Errno.EIO);
        assertThat(errno.of(new ManifestCorruptedException("k", "$", "bad"), "getattr", "/ws/a@h")).isEqualTo(Errno.EIO);
        assertThat(errno.of(new IllegalStateException("bug"), "read", "/ws/a@h/t/x")).isEqualTo(Errno.EIO);
        assertThat(errno.ioErrorCount()).isEqualTo(5);
        // The two verification failures of one file are one line, the latest's, with a count.
        assertThat(errno.recentErrors()).hasSize(4).last().asString().contains("/ws/a@h/t/x").contains("bug");
        assertThat(errno.recentErrors().get(1)).contains("VerificationFailed", "Block 4 of blob " + blob.hex(), "(2 times since");
        assertThat(errno.ioErrorsByType()).containsEntry("VerificationFailed", 2L).containsEntry("StoreUnavailable", 1L)
                .containsEntry("ManifestCorrupted", 1L).containsEntry("IllegalStateException", 1L);
    }

    @Test
    void aMemberNameWithANewlineOrEscapeIsOneLineInTheLogAndStatus() {
        errno.of(new StoreUnavailableException("down", null), "read", "/ws/a@h/img/x\n[main] FORGED\u001b[2J.png");
        assertThat(errno.recentErrors()).last().asString().contains("x\\x0a[main] FORGED\\x1b[2J.png")
                .doesNotContain("\n", "\u001b");
    }

    /**
     * Audit 45: four DataLoader workers retrying the same files in one outage filled all 20 lines
     * within a second, pushing out the errors before them. A line that comes again is kept once,
     * last, with how often and since when.
     */
    @Test
    void theSameErrorAgainIsOneLineWithACount() {
        errno.of(new ManifestCorruptedException("k", "$", "bad"), "getattr", "/ws/a@h");
        for (int i = 0; i < 100; i++) {
            // The message's numbers change (an offset): the same error all the same (the review).
            errno.of(new StoreUnavailableException("Failed to read at offset " + i, null), "read", "/ws/a@h/t/x" + (i % 4));
        }
        List<String> recent = errno.recentErrors();
        assertThat(recent).hasSize(5);
        assertThat(recent.get(0)).contains("ManifestCorrupted").doesNotContain("times since");
        assertThat(recent.get(4)).contains("/ws/a@h/t/x3", "offset 99", "(25 times since ");
    }

    @Test
    void wrongTypesMapToTheirPosixErrors() {
        assertThat(errno.of(new WrongNodeTypeException("read", Node.Type.DIRECTORY), "read", "/ws")).isEqualTo(Errno.EISDIR);
        assertThat(errno.of(new WrongNodeTypeException("list", Node.Type.FILE), "readdir", "/f")).isEqualTo(Errno.ENOTDIR);
        assertThat(errno.of(new WrongNodeTypeException("readlink", Node.Type.SYMLINK), "readlink", "/l")).isEqualTo(Errno.EINVAL);
        assertThat(errno.ioErrorCount()).isZero();
    }

    @Test
    void floodOfErrorsIsStillAnsweredAndCounted() {
        for (int i = 0; i < 1000; i++) {
            assertThat(errno.of(new StoreUnavailableException("down", null), "read", "/ws/a@h/t/x" + i)).isEqualTo(Errno.EIO);
        }
        assertThat(errno.suppressedLogLines()).isEqualTo(980);
        // status shows the latest errors, not the first 20 the log let through
        assertThat(errno.recentErrors()).hasSize(20).last().asString().contains("/ws/a@h/t/x999");
        now.addAndGet(11_000_000_000L);
        assertThat(errno.of(new StoreUnavailableException("down", null), "read", "/ws/a@h/t/x")).isEqualTo(Errno.EIO);
        assertThat(errno.ioErrorCount()).isEqualTo(1001);
        assertThat(errno.suppressedLogLines()).isEqualTo(980);
    }
}
