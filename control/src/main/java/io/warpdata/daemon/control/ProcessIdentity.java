package io.warpdata.daemon.control;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The effective uid and gid of this process, read from the owner of {@code /proc/self}. */
public final class ProcessIdentity {
    private ProcessIdentity() {
    }

    public static int uid() {
        return attr("unix:uid");
    }

    public static int gid() {
        return attr("unix:gid");
    }

    private static int attr(String name) {
        try {
            return (Integer) Files.getAttribute(Path.of("/proc/self"), name);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read /proc/self to learn our own uid", e);
        }
    }
}
