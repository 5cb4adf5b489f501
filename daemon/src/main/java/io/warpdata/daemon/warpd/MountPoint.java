package io.warpdata.daemon.warpd;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Gets a mount point ready: clears a stale FUSE mount left by a daemon that died (listed in
 * /proc/self/mountinfo, but stat fails with "Transport endpoint is not connected"), refuses a
 * live mount or a non-empty directory with a message saying what to do, creates a missing
 * directory.
 */
public final class MountPoint {
    private static final Logger LOG = LoggerFactory.getLogger(MountPoint.class);
    private static final Path MOUNTINFO = Path.of("/proc/self/mountinfo");
    private static final String NOT_CONNECTED = "Transport endpoint is not connected";

    private MountPoint() {
    }

    /** One line of /proc/self/mountinfo: where, what type, from what source. */
    public record Mount(Path mountPoint, String fsType, String source) {
    }

    /**
     * @throws ConfigException if the directory cannot be used, saying what to do instead
     */
    public static Optional<Path> prepare(Path dir) {
        Optional<Mount> mounted = mountAt(dir);
        if (mounted.isPresent()) {
            Mount m = mounted.get();
            if (!m.fsType().startsWith("fuse")) {
                throw new ConfigException(dir + " has a " + m.fsType() + " file system (" + m.source() + ") mounted on it",
                        "Choose another --mount directory, or unmount it first.");
            }
            if (!isStale(dir)) {
                throw new ConfigException(dir + " is busy: a " + m.fsType() + " file system (" + m.source()
                        + ") is already mounted there, probably another warpd",
                        "Stop that daemon (systemctl stop warpd, or kill its pid), or unmount it with 'fusermount -u "
                                + dir + "', then start warpd again.");
            }
            LOG.warn("{} has a stale {} mount left by a daemon that died; clearing it", dir, m.fsType());
            unmountLazily(dir);
            if (mountAt(dir).isPresent() && isStale(dir)) {
                throw new ConfigException("could not clear the stale mount at " + dir,
                        "Run 'fusermount -u -z " + dir + "' (or 'umount -l " + dir + "' as root), then start warpd again.");
            }
        }
        Path created = null;
        try {
            if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
                created = dir.toAbsolutePath().normalize();
                while (created.getParent() != null && !Files.exists(created.getParent(), LinkOption.NOFOLLOW_LINKS)) {
                    created = created.getParent();
                }
                Files.createDirectories(dir);
                // Said once: a misspelt --mount otherwise leaves a tree of new directories unnoticed.
                LOG.info("created the mount point {} (it did not exist)", dir);
            }
        } catch (IOException e) {
            throw new ConfigException("cannot create mount point " + dir + ": " + e.getMessage(),
                    "Create it yourself (mkdir -p " + dir + ") with permissions for the daemon's user, or choose another --mount.");
        }
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            throw new ConfigException(dir + " is not a directory", "Pass an empty directory as --mount.");
        }
        try (Stream<Path> entries = Files.list(dir)) {
            List<String> names = entries.limit(3).map(p -> p.getFileName().toString()).toList();
            if (!names.isEmpty()) {
                throw new ConfigException(dir + " is not empty (it holds " + String.join(", ", names)
                        + (names.size() == 3 ? ", ..." : "") + ")",
                        "warpd mounts only on an empty directory: choose an empty one or move those files away.");
            }
        } catch (IOException e) {
            throw new ConfigException("cannot read mount point " + dir + ": " + e.getMessage(),
                    "Check its permissions, or choose another --mount.");
        }
        return Optional.ofNullable(created);
    }

    /**
     * Removes the mount point {@link #prepare} created, and the folders it created above it up to
     * {@code top}, while they are empty: for a warpd that did not get to mount (no FUSE access, a
     * bad store), which left a new directory behind.
     */
    static void removeCreated(Path dir, Path top) {
        for (Path d = dir.toAbsolutePath().normalize(); d != null && d.startsWith(top); d = d.getParent()) {
            try {
                Files.delete(d);
            } catch (IOException e) {
                return; // not empty, or not ours to remove: leave it and what is above
            }
        }
    }

    /**
     * Whether {@code dir} is a mount point whose FUSE server is gone (ENOTCONN). The directory is
     * listed, not just stat'ed: Warp mounts with long attribute timeouts, so the kernel may answer
     * a stat of a dead mount's root from its cache; opendir always reaches the server.
     */
    static boolean isStale(Path dir) {
        try {
            Files.readAttributes(dir, BasicFileAttributes.class);
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
                entries.iterator().hasNext();
            }
            return false;
        } catch (IOException | DirectoryIteratorException e) {
            if (e instanceof DirectoryIteratorException d) {
                return String.valueOf(d.getCause().getMessage()).contains(NOT_CONNECTED);
            }
            String msg = String.valueOf(e.getMessage());
            return msg.contains(NOT_CONNECTED) || (e instanceof java.nio.file.FileSystemException f
                    && String.valueOf(f.getReason()).contains(NOT_CONNECTED));
        }
    }

    /** The topmost mount at exactly {@code dir}, per /proc/self/mountinfo. */
    public static Optional<Mount> mountAt(Path dir) {
        try {
            return find(parse(Files.readAllLines(MOUNTINFO)), dir);
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /**
     * The Warp mounts ({@code fuse.warp}) of this machine whose warpd is gone (ENOTCONN): what
     * {@code warpctl doctor} reports after a crash (audit 23: it said only "a stale socket?").
     */
    public static List<Path> deadWarpMounts() {
        try {
            return parse(Files.readAllLines(MOUNTINFO)).stream()
                    .filter(m -> m.fsType().equals("fuse.warp"))
                    .map(Mount::mountPoint)
                    .filter(MountPoint::staleWithin2s)
                    .toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    /**
     * {@link #isStale}, asked on a thread of its own for at most 2 s: a live warpd that is stuck
     * would keep opendir waiting, and doctor is what one runs then (review). Not answering in time
     * is not dead.
     */
    private static boolean staleWithin2s(Path dir) {
        java.util.concurrent.CompletableFuture<Boolean> stale = new java.util.concurrent.CompletableFuture<>();
        Thread t = new Thread(() -> stale.complete(isStale(dir)), "doctor-mount-probe");
        t.setDaemon(true);
        t.start();
        try {
            return stale.get(2, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    static Optional<Mount> find(List<Mount> mounts, Path dir) {
        Path want = dir.toAbsolutePath().normalize();
        Mount found = null;
        for (Mount m : mounts) {
            if (m.mountPoint().equals(want)) {
                found = m;
            }
        }
        return Optional.ofNullable(found);
    }

    /** Parses mountinfo lines: field 5 is the mount point; after " - " come fstype and source. */
    static List<Mount> parse(List<String> lines) {
        List<Mount> out = new ArrayList<>();
        for (String line : lines) {
            String[] fields = line.split(" ");
            int sep = -1;
            for (int i = 6; i < fields.length; i++) {
                if (fields[i].equals("-")) {
                    sep = i;
                    break;
                }
            }
            if (fields.length < 5 || sep < 0 || sep + 2 >= fields.length) {
                continue;
            }
            out.add(new Mount(Path.of(unescape(fields[4])), fields[sep + 1], unescape(fields[sep + 2])));
        }
        return out;
    }

    /** mountinfo writes space, tab, newline and backslash as octal escapes (\040 ...). */
    static String unescape(String s) {
        if (s.indexOf('\\') < 0) {
            return s;
        }
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 3 < s.length()
                    && s.substring(i + 1, i + 4).chars().allMatch(d -> d >= '0' && d <= '7')) {
                b.append((char) Integer.parseInt(s.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    /** {@code fusermount -u -z} (lazy: detaches even if something still has it open). */
    public static void unmountLazily(Path dir) {
        for (List<String> cmd : List.of(List.of("fusermount", "-u", "-z", dir.toString()),
                List.of("fusermount3", "-u", "-z", dir.toString()),
                List.of("umount", "-l", dir.toString()))) {
            try {
                Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
                String out = new String(p.getInputStream().readAllBytes());
                if (p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0) {
                    return;
                }
                LOG.debug("{} failed: {}", String.join(" ", cmd), out.trim());
            } catch (IOException e) {
                LOG.debug("{} not runnable: {}", cmd.get(0), e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Whether {@code /etc/fuse.conf} lets non-root users pass allow_other. */
    static boolean userAllowOther() {
        try {
            return Files.readAllLines(Path.of("/etc/fuse.conf")).stream()
                    .map(String::trim).anyMatch(l -> l.equals("user_allow_other"));
        } catch (IOException e) {
            return false;
        }
    }
}
