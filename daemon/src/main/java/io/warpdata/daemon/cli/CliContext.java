package io.warpdata.daemon.cli;

import io.warpdata.blobcache.cache.BlobReader;
import io.warpdata.store.BlobStore;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.Objects;

/**
 * What a warpctl run sees of the world: environment, output streams, working directory, clock,
 * and how to open stores and readers. Injected so that tests run commands in-process.
 */
public record CliContext(Map<String, String> env, PrintStream out, PrintStream err, Path cwd, Clock clock,
                         StoreOpener stores, ReaderFactory readers, boolean stderrIsTerminal) {
    public CliContext {
        env = Map.copyOf(env);
        Objects.requireNonNull(out, "out");
        Objects.requireNonNull(err, "err");
        Objects.requireNonNull(cwd, "cwd");
        Objects.requireNonNull(clock, "clock");
        Objects.requireNonNull(stores, "stores");
        Objects.requireNonNull(readers, "readers");
    }

    /** Who runs the command, as pointer moves and manifests record it: {@code $USER}, else the JVM's user name. */
    public String user() {
        return env.getOrDefault("USER", System.getProperty("user.name", "unknown"));
    }

    /** Where a publish or a view stages its files: {@code --staging-dir} (relative to the working directory), else the temp directory. */
    public Path stagingParent(Path stagingDir) {
        return stagingDir != null ? cwd.resolve(stagingDir) : Path.of(System.getProperty("java.io.tmpdir"));
    }

    /** Opens the store a {@code --remote} URI names. */
    @FunctionalInterface
    public interface StoreOpener {
        /**
         * @param remote {@code s3://bucket/prefix} or {@code file:///dir}
         * @param endpoint S3 endpoint override, or null for AWS
         * @throws io.warpdata.store.StoreException if the store cannot be opened
         */
        BlobStore open(String remote, String endpoint);
    }

    /** Makes the verified reader that {@code head} reads shards through. */
    @FunctionalInterface
    public interface ReaderFactory {
        BlobReader open(BlobStore store);
    }
}
