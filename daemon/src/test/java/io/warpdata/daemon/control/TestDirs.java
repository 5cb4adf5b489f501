package io.warpdata.daemon.control;

import io.warpdata.daemon.warpd.MountPoint;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Cleanup for tests that mount under a temporary directory. */
final class TestDirs {
    private TestDirs() {
    }

    /**
     * Deletes {@code dir} once {@code mount} (inside it) is gone: the kernel may take a moment to
     * drop a mount after its daemon closes, and a walk must never descend into a live mount.
     * Leaves everything in place if the mount is still there after 10 s.
     */
    static void deleteAfterUnmount(Path dir, Path mount) throws IOException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (MountPoint.mountAt(mount).isPresent() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        if (MountPoint.mountAt(mount).isPresent()) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
