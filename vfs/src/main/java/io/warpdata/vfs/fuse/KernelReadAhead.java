package io.warpdata.vfs.fuse;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Raises the kernel's read-ahead for a mounted Warp file system.
 *
 * <p>The kernel caps a FUSE mount's read-ahead at its backing device's default (128 KiB)
 * whatever {@code max_readahead} the file system asks for, so a sequential scan keeps only one
 * 128 KiB request in flight and pays a whole FUSE round trip (plus a cache-file read) per
 * request. Root, or a holder of CAP_SYS_ADMIN, may raise it through
 * {@code /sys/class/bdi/MAJOR:MINOR/read_ahead_kb} once the mount exists; without the right to,
 * the mount works as before, only slower on scans.
 */
public final class KernelReadAhead {
    private static final Logger LOG = LoggerFactory.getLogger(KernelReadAhead.class);

    private KernelReadAhead() {
    }

    /**
     * Sets the read-ahead of the file system mounted at {@code mountPoint} to {@code bytes}.
     *
     * @return whether it was set (false, with one log line, when not permitted or not found)
     */
    public static boolean raise(Path mountPoint, int bytes) {
        Path knob;
        try {
            knob = knob(((Number) Files.getAttribute(mountPoint, "unix:dev")).longValue());
            Files.writeString(knob, Integer.toString(bytes / 1024));
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            LOG.info("kernel read-ahead for {} left at its default ({}); sequential scans are slower", mountPoint,
                    e.toString());
            return false;
        }
        LOG.debug("kernel read-ahead for {} set to {} KiB via {}", mountPoint, bytes / 1024, knob);
        return true;
    }

    /** The sysfs file of the backing device {@code dev} (st_dev, encoded as glibc does). */
    static Path knob(long dev) {
        long major = ((dev >>> 8) & 0xfff) | ((dev >>> 32) & ~0xfffL);
        long minor = (dev & 0xff) | ((dev >>> 12) & ~0xffL);
        return Path.of("/sys/class/bdi/" + major + ":" + minor + "/read_ahead_kb");
    }
}
