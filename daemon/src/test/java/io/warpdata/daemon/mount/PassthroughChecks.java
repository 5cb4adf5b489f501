package io.warpdata.daemon.mount;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.function.Predicate;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** What the passthrough ITs share: the kernel's support, warpd's stats.json, its local copies. */
final class PassthroughChecks {
    private static final ObjectMapper JSON = new ObjectMapper();

    private PassthroughChecks() {
    }

    /** Whether the running kernel has FUSE passthrough (Linux 6.9+). */
    static boolean kernelHasPassthrough() throws IOException {
        String[] v = Files.readString(Path.of("/proc/sys/kernel/osrelease")).trim().split("[.-]");
        int major = Integer.parseInt(v[0]);
        int minor = Integer.parseInt(v[1]);
        return major > 6 || (major == 6 && minor >= 9);
    }

    /** {@code cache}'s stats.json (rewritten every second) once {@code ready} holds of it. */
    static JsonNode stats(Path cache, Predicate<JsonNode> ready) throws Exception {
        Path file = cache.resolve("stats.json");
        JsonNode s = null;
        for (int i = 0; i < 150; i++) {
            try {
                s = Files.exists(file) ? JSON.readTree(file.toFile()) : null;
            } catch (IOException torn) {
                s = null;
            }
            if (s != null && ready.test(s)) {
                return s;
            }
            Thread.sleep(100);
        }
        assertThat(s).as("stats.json was written").isNotNull();
        assertThat(ready.test(s)).as("stats.json never showed the expected counters: " + s.path("read")).isTrue();
        return s;
    }

    /**
     * Reads {@code file} until {@code cache} holds a copy of it: a copy is begun at an open or a
     * close that finds every block of the file cached, the second read at the earliest (the
     * first read's blocks may still be on their way to disk when it closes).
     */
    static void readUntilCopied(Path file, byte[] want, Path cache) throws Exception {
        for (int n = 0; n < 50; n++) {
            assertThat(Files.readAllBytes(file)).isEqualTo(want);
            if (copyOf(cache, want) != null) {
                return;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("no copy of " + file + " was made");
    }

    /** The copy in {@code cache} whose bytes are {@code want}, or null. */
    static Path copyOf(Path cache, byte[] want) throws IOException {
        try (Stream<Path> s = Files.list(cache.resolve("v1/copies"))) {
            return s.filter(p -> {
                try {
                    return Files.size(p) == want.length && Arrays.equals(Files.readAllBytes(p), want);
                } catch (IOException gone) {
                    return false;
                }
            }).findFirst().orElse(null);
        }
    }
}
