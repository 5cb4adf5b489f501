package io.warpdata.daemon.publish;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * The staging directory of a publish or a view: a fresh directory below {@code --staging-dir}
 * that holds what is written before it is uploaded, and is removed after, best effort.
 */
public final class Staging {
    private Staging() {
    }

    /**
     * A fresh directory below {@code parent} (created if missing), named {@code prefix...}.
     *
     * @param room what the directory must have room for, for the message
     * @throws InvalidInputException if it cannot be created
     */
    public static Path create(Path parent, String prefix, String room) {
        try {
            Files.createDirectories(parent);
            return Files.createTempDirectory(parent, prefix);
        } catch (IOException e) {
            throw new InvalidInputException("Cannot create a staging directory under " + parent + ": " + e,
                    "Pass --staging-dir DIR with " + room + ".", e);
        }
    }

    /** Removes {@code dir} and all below it, best effort: a leftover staging file is not worth failing a finished publish. */
    public static void delete(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    // Left behind; see above.
                }
            });
        } catch (IOException e) {
            // Not listable (already gone, or unreadable): nothing more to do.
        }
    }
}
