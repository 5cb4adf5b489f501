package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PageCacheHintsTest {
    @TempDir
    Path dir;

    @Test
    void theKernelTakesTheAdviceForAFileAndThereIsNoneForAMissingOne() throws IOException {
        Path file = Files.write(dir.resolve("block"), new byte[256 * 1024]);
        PageCacheHints hints = PageCacheHints.shared();
        assertThat(hints).as("libc loads on Linux").isNotSameAs(PageCacheHints.NONE);
        assertThat(hints.willNeed(file)).isTrue();
        assertThat(hints.willNeed(dir.resolve("evicted"))).isFalse();
        assertThat(PageCacheHints.NONE.willNeed(file)).isFalse();
    }
}
