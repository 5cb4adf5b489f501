package io.warpdata.daemon.publish;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** A tmpfs of a given size mounted on a test's folder, to fill a disk on purpose; root only (else the test is skipped). */
public final class SmallTmpfs implements AutoCloseable {
    private final Path dir;

    private SmallTmpfs(Path dir) {
        this.dir = dir;
    }

    /** Mounts a tmpfs of {@code size} (e.g. "1m") on {@code dir}, made if needed. */
    public static SmallTmpfs mount(Path dir, String size) throws IOException, InterruptedException {
        org.junit.jupiter.api.Assumptions.assumeTrue(io.warpdata.daemon.control.ProcessIdentity.uid() == 0,
                "mounting a tmpfs needs root");
        Files.createDirectories(dir);
        Process mount = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", dir.toString())
                .redirectErrorStream(true).start();
        assertThat(mount.waitFor()).as(new String(mount.getInputStream().readAllBytes())).isZero();
        return new SmallTmpfs(dir);
    }

    public Path dir() {
        return dir;
    }

    @Override
    public void close() throws IOException, InterruptedException {
        new ProcessBuilder("umount", "-l", dir.toString()).inheritIO().start().waitFor();
    }
}
