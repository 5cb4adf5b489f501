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
