package io.warpdata.daemon.mount;

import com.fasterxml.jackson.databind.JsonNode;
import io.warpdata.daemon.control.ControlClient;
import io.warpdata.daemon.control.ControlProtocol;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;
import io.warpdata.store.BlobStore;
import io.warpdata.store.S3ProxyFixture;
import io.warpdata.store.s3.S3BlobStore;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The one fixture of the ITs that mount: a real S3 server on loopback, a work directory, warpd
 * from the shaded jar mounted on {@link #mount} over one prefix of the server, and warpctl (the
 * jar, as a user runs it) pointed at the same store and warpd's socket. {@link #close()} stops
 * every warpd it started, unmounts, closes the client and the server and removes the directory,
 * each step even if one before it failed ({@link WarpdProcess#stopAll}): nothing is left behind.
 *
 * <p>The server is one of three: {@link #serve} (S3Proxy in this JVM, objects in memory; its
 * {@link #s3} counts requests and injects faults), {@link #serveOnDisk} (the same, objects as
 * plain files under {@link #s3Data()}: a test edits them as another program would, or stops the
 * server with {@link #stopServer()} and brings it back on the same port and data with
 * {@link #restartServer()}), or {@link #serveFromOwnProcess} (S3Proxy in a process of its own, on
 * disk: {@link #serverProcess()} stops it with SIGSTOP, a server that accepts and never answers).
 * Tests publish through {@link #store()} before they {@link #mount} (or {@link #start}, which
 * does both with nothing published). Tests that need a warpd of their own (its own mount point
 * and cold cache) {@link #startWarpd} one and {@link #stopWarpds()} after.
 */
final class MountedStore implements AutoCloseable {
    final Path work;
    final Path mount;
    final Path cache;
    /** The in-process server (null for {@link #serveFromOwnProcess}, and while {@link #stopServer() stopped}). */
    S3ProxyFixture s3;
    private final S3ProxyProcess process;
    private final Path s3data;
    private final int port;
    private final Map<String, String> env;
    private final String prefix;
    private BlobStore store;
    private WarpdProcess warpd;
    private String heap = "512m";
    private final List<WarpdProcess> others = new ArrayList<>();
    private final List<Path> otherMounts = new ArrayList<>();

    private MountedStore(Path work, String prefix, S3ProxyFixture s3, S3ProxyProcess process, Path s3data) {
        this.work = work;
        this.prefix = prefix;
        this.s3 = s3;
        this.process = process;
        this.s3data = s3data;
        this.port = s3 != null ? s3.port() : -1;
        this.env = Map.copyOf(s3 != null ? s3.env() : process.env());
        this.mount = work.resolve("mnt");
        this.cache = work.resolve("cache");
        try {
            Files.createDirectories(mount);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Starts the server and warpd over {@code s3://BUCKET/prefix}, with nothing published.
     *
     * @param warpdArgs extra warpd options, e.g. {@code --pointer-ttl 1s}
     */
    static MountedStore start(String prefix, String... warpdArgs) {
        return startWithHeap("512m", prefix, warpdArgs);
    }

    /** As {@link #start}, warpd with heap {@code heap} ({@code -Xmx}) here and on every later {@link #mount}. */
    static MountedStore startWithHeap(String heap, String prefix, String... warpdArgs) {
        MountedStore m = serve(prefix);
        m.heap = heap;
        try {
            return m.mount(warpdArgs);
        } catch (RuntimeException | Error e) {
            closeQuietly(m, e);
            throw e;
        }
    }

    /** A server in this JVM keeping objects in memory, and the work directory; no warpd yet. */
    static MountedStore serve(String prefix) {
        Path work = workDir(prefix);
        S3ProxyFixture s3 = S3ProxyFixture.start();
        return new MountedStore(work, prefix, s3, null, null);
    }

    /** A server in this JVM keeping objects as files under {@link #s3Data()}; no warpd yet. */
    static MountedStore serveOnDisk(String prefix) {
        Path work = workDir(prefix);
        Path data = work.resolve("s3");
        S3ProxyFixture s3 = S3ProxyFixture.start(data);
        return new MountedStore(work, prefix, s3, null, data);
    }

    /** A server in a process of its own, keeping objects under {@link #s3Data()}; no warpd yet. */
    static MountedStore serveFromOwnProcess(String prefix) {
        Path work = workDir(prefix);
        Path data = work.resolve("s3");
        S3ProxyProcess p = S3ProxyProcess.start(data);
        try {
            return new MountedStore(work, prefix, null, p, data);
        } catch (RuntimeException | Error e) {
            p.close();
            throw e;
        }
    }

    private static Path workDir(String prefix) {
        try {
            return Files.createTempDirectory("warp-" + prefix + "-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Starts warpd on {@link #mount} with cache {@link #cache} (stopping the one before, if any)
     * and waits until it has mounted.
     */
    MountedStore mount(String... warpdArgs) {
        return mount(Map.of(), warpdArgs);
    }

    /** As {@link #mount(String...)}, with {@code envOverrides} over the server's environment (another endpoint). */
    MountedStore mount(Map<String, String> envOverrides, String... warpdArgs) {
        if (warpd != null) {
            warpd.close();
            warpd = null;
        }
        Map<String, String> e = new LinkedHashMap<>(env);
        e.putAll(envOverrides);
        warpd = WarpdProcess.startWithHeap(heap, mount, remote(), cache, e, warpdArgs);
        return this;
    }

    /** The warpd on {@link #mount}. */
    WarpdProcess warpd() {
        if (warpd == null) {
            throw new IllegalStateException("no warpd on " + mount + ": call mount() first");
        }
        return warpd;
    }

    /** Another warpd, on {@code mountPoint} with cache {@code cacheDir}; stopped by {@link #stopWarpds()} or {@link #close()}. */
    WarpdProcess startWarpd(Path mountPoint, Path cacheDir, String... warpdArgs) {
        otherMounts.add(mountPoint);
        WarpdProcess w = WarpdProcess.start(mountPoint, remote(), cacheDir, env, warpdArgs);
        others.add(w);
        return w;
    }

    /** As {@link #startWarpd}, returning at once: the caller waits for what it wants to see. */
    WarpdProcess launchWarpd(Path mountPoint, Path cacheDir) {
        otherMounts.add(mountPoint);
        WarpdProcess w = WarpdProcess.launch(heap, mountPoint, remote(), cacheDir, env);
        others.add(w);
        return w;
    }

    /** warpd started on {@code mountPoint} expecting it to refuse: its exit code and output. */
    Shell.Result runWarpdToFailure(Path mountPoint, Path cacheDir) {
        return runWarpdToFailure(mountPoint, cacheDir, remote());
    }

    /** As {@link #runWarpdToFailure(Path, Path)}, on another remote of this server. */
    Shell.Result runWarpdToFailure(Path mountPoint, Path cacheDir, String remote) {
        otherMounts.add(mountPoint);
        return WarpdProcess.runToFailure(mountPoint, remote, cacheDir, env);
    }

    /** Stops every warpd this fixture started (SIGTERM, then SIGKILL) and unmounts their mount points. */
    void stopWarpds() {
        try {
            if (warpd != null) {
                warpd.close();
                warpd = null;
            }
        } finally {
            for (WarpdProcess w : others) {
                w.close();
            }
            others.clear();
            for (Path m : otherMounts) {
                WarpdProcess.unmount(m);
            }
            otherMounts.clear();
        }
    }

    /** The store warpd and warpctl use. */
    String remote() {
        return "s3://" + S3ProxyFixture.BUCKET + "/" + prefix;
    }

    /** The environment warpd and warpctl reach the server with (kept while the server is stopped). */
    Map<String, String> env() {
        return env;
    }

    /** warpd's control socket. */
    Path socket() {
        return cache.resolve("warpd.sock");
    }

    /** Where the server keeps its objects as plain files ({@link #serveOnDisk}, {@link #serveFromOwnProcess}). */
    Path s3Data() {
        if (s3data == null) {
            throw new IllegalStateException("the server keeps its objects in memory: use MountedStore.serveOnDisk");
        }
        return s3data;
    }

    /** The file the server keeps for {@code key} under this fixture's prefix. */
    Path onDisk(String key) {
        return s3Data().resolve(S3ProxyFixture.BUCKET).resolve(prefix).resolve(key);
    }

    /** A client of the prefix, for publishing and checking; opened once, closed with the fixture. */
    BlobStore store() {
        if (store == null) {
            store = s3 != null ? s3.openStore(prefix)
                    : S3BlobStore.open(remote(), Optional.of(process.endpoint()), S3BlobStore.Config.defaults()
                            .withCredentials(S3ProxyFixture.ACCESS_KEY, S3ProxyFixture.SECRET_KEY));
        }
        return store;
    }

    /**
     * Writes a sample source under the work directory's {@code dir}: a Parquet table {@code main}
     * of {@code rows} rows from {@code seed} and {@code images} of {@code imageVariant} (see
     * {@link SampleData}).
     */
    Path writeSample(String dir, long rows, long seed, int imageVariant) {
        try {
            Path src = Files.createDirectories(work.resolve(dir));
            SampleData.writeParquet(src, rows, seed);
            SampleData.writeImages(src.resolve("images"), imageVariant);
            return src;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Publishes {@code src} (as {@link #writeSample} lays it out) as {@code id} through {@link #store()}, moving latest. */
    VersionHash publish(DatasetId id, Path src) {
        return SampleData.publish(store(), work, id, src, true);
    }

    /** The server in its own process ({@link #serveFromOwnProcess}), to stop and resume. */
    S3ProxyProcess serverProcess() {
        if (process == null) {
            throw new IllegalStateException("the server runs in this JVM: use MountedStore.serveFromOwnProcess");
        }
        return process;
    }

    /** Stops the in-process server on disk (an outage); {@link #restartServer()} brings it back. */
    void stopServer() {
        s3Data();
        if (store != null) {
            store.close();
            store = null;
        }
        if (s3 != null) {
            S3ProxyFixture stopping = s3;
            s3 = null;
            stopping.close();
        }
    }

    /** Starts the server again on the same port and data, where warpd and warpctl already point. */
    void restartServer() {
        if (s3 != null) {
            throw new IllegalStateException("the server is running: stopServer() first");
        }
        s3 = S3ProxyFixture.start(s3Data(), port);
    }

    /** warpctl from the shaded jar with the store's credentials, {@code --remote} and warpd's socket. */
    Shell.Result warpctl(String... args) {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>(List.of(java, "-jar", WarpdProcess.JAR.toString(), "warpctl",
                "--remote", remote(), "--socket", socket().toString()));
        cmd.addAll(List.of(args));
        return Shell.run(work, env, 300, cmd);
    }

    /** warpctl from the shaded jar with the store's credentials and warpd's socket only ({@code --socket} last). */
    Shell.Result control(String... args) {
        return WarpdProcess.warpctl(socket(), env, args);
    }

    /** warpd's answer to control request {@code op} without arguments, over its socket. */
    JsonNode call(String op) {
        try (ControlClient c = ControlClient.connect(cache.resolve("warpd.sock"))) {
            return c.call(op, ControlProtocol.object());
        }
    }

    /** warpd's read counters ({@code cache.stats}) once they stop moving: fetches may still be landing. */
    Map<String, Long> readCounters() throws InterruptedException {
        Map<String, Long> last = null;
        for (int i = 0; i < 50; i++) {
            Map<String, Long> now = new HashMap<>();
            call("cache.stats").path("counters").fields().forEachRemaining(e -> now.put(e.getKey(), e.getValue().asLong()));
            if (now.equals(last)) {
                return now;
            }
            last = now;
            Thread.sleep(200);
        }
        return last;
    }

    /** Debian's python3 running {@code script} (a file in the work directory). */
    Shell.Result python(String script, String... args) {
        List<String> cmd = new ArrayList<>(List.of("/usr/bin/python3", work.resolve(script).toString()));
        cmd.addAll(List.of(args));
        return Shell.run(work, Map.of(), 300, cmd);
    }

    @Override
    public void close() throws IOException {
        List<AutoCloseable> rest = new ArrayList<>(others);
        rest.add(() -> otherMounts.forEach(WarpdProcess::unmount));
        rest.add(store);
        rest.add(s3);
        rest.add(process);
        WarpdProcess.stopAll(warpd, mount, work, rest.toArray(AutoCloseable[]::new));
    }

    private static void closeQuietly(MountedStore m, Throwable failure) {
        try {
            m.close();
        } catch (IOException | RuntimeException e) {
            failure.addSuppressed(e);
        }
    }
}
