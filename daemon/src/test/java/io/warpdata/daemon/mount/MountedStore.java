package io.warpdata.daemon.mount;

import io.warpdata.store.S3ProxyFixture;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * What the format, tag and view ITs share: a real S3Proxy on loopback, warpd from the shaded jar
 * mounted on a temporary directory over one prefix of it, and warpctl (the jar, as a user runs
 * it) pointed at the same store and warpd's socket. {@link #close()} stops warpd, unmounts,
 * stops the server and removes the directory, leaving nothing behind.
 */
final class MountedStore implements AutoCloseable {
    final Path work;
    final Path mount;
    final Path cache;
    final S3ProxyFixture s3;
    private final String prefix;
    private final WarpdProcess warpd;

    private MountedStore(Path work, S3ProxyFixture s3, String prefix, String heap, String... warpdArgs) {
        this.work = work;
        this.s3 = s3;
        this.prefix = prefix;
        this.mount = work.resolve("mnt");
        this.cache = work.resolve("cache");
        try {
            Files.createDirectories(mount);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        this.warpd = WarpdProcess.startWithHeap(heap, mount, remote(), cache, s3.env(), warpdArgs);
    }

    /**
     * Starts the server and warpd over {@code s3://BUCKET/prefix}.
     *
     * @param warpdArgs extra warpd options, e.g. {@code --pointer-ttl 1s}
     */
    static MountedStore start(String prefix, String... warpdArgs) {
        return startWithHeap("512m", prefix, warpdArgs);
    }

    /** As {@link #start}, warpd with heap {@code heap} ({@code -Xmx}). */
    static MountedStore startWithHeap(String heap, String prefix, String... warpdArgs) {
        Path work;
        try {
            work = Files.createTempDirectory("warp-" + prefix + "-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        S3ProxyFixture s3 = S3ProxyFixture.start();
        try {
            return new MountedStore(work, s3, prefix, heap, warpdArgs);
        } catch (RuntimeException | Error e) {
            s3.close();
            throw e;
        }
    }

    /** warpd's process id. */
    long warpdPid() {
        return warpd.pid();
    }

    /** The store warpd and warpctl use. */
    String remote() {
        return "s3://" + S3ProxyFixture.BUCKET + "/" + prefix;
    }

    /** warpctl from the shaded jar with the store's credentials, {@code --remote} and warpd's socket. */
    Shell.Result warpctl(String... args) {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>(List.of(java, "-jar", WarpdProcess.JAR.toString(), "warpctl",
                "--remote", remote(), "--socket", cache.resolve("warpd.sock").toString()));
        cmd.addAll(List.of(args));
        return Shell.run(work, s3.env(), 300, cmd);
    }

    /** Debian's python3 running {@code script} (a file in the work directory). */
    Shell.Result python(String script, String... args) {
        List<String> cmd = new ArrayList<>(List.of("/usr/bin/python3", work.resolve(script).toString()));
        cmd.addAll(List.of(args));
        return Shell.run(work, Map.of(), 300, cmd);
    }

    @Override
    public void close() throws IOException {
        try {
            warpd.close();
        } finally {
            WarpdProcess.unmount(mount);
            s3.close();
            if (!WarpdProcess.isMounted(mount)) {
                try (Stream<Path> all = Files.walk(work)) {
                    all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
        }
    }
}
