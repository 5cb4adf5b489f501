package io.warpdata.daemon.cli;

import io.warpdata.daemon.control.protocol.ByteCount;
import io.warpdata.daemon.control.protocol.Calls;
import io.warpdata.daemon.control.protocol.Names;
import io.warpdata.daemon.control.protocol.PathList;
import io.warpdata.daemon.control.protocol.PublishCall;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import io.warpdata.daemon.control.ControlClient;
import io.warpdata.daemon.publish.InputPaths;
import io.warpdata.manifest.DatasetId;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * {@code warpctl publish} routed through a running warpd: the client expands paths and globs
 * itself (as the calling user, against its working directory) and sends absolute paths; the
 * daemon checks the caller could read each of them, publishes with its own store credentials
 * and refreshes the mount before it answers.
 */
public final class DaemonPublish {
    private DaemonPublish() {
    }

    /**
     * @param tables    table name -> specs as given to {@code --table} (paths or globs)
     * @param artifacts artifact name -> specs as given to {@code --artifact}
     * @param bindings  {@code --bind} values as given
     * @param branch    the branch to move ({@code --branch}), if any
     * @param progress  receives the daemon's one-line progress messages
     * @return the daemon's result: dataset, version, counts, {@code summary}
     * @throws io.warpdata.manifest.WarpException an input that does not exist (before anything is
     *         sent), or the daemon's typed error (AccessDenied, InvalidInput, ...)
     */
    public static PublishCall.Reply publish(ControlClient client, DatasetId dataset, Map<String, List<String>> tables,
                                   Map<String, List<String>> artifacts, List<String> bindings, boolean setLatest,
                                   Optional<String> branch, long shardSize, Path cwd, Consumer<String> progress) {
        return publish(client, dataset, tables, artifacts, bindings, setLatest, branch, shardSize, cwd, false, false,
                true, true, true, progress);
    }

    /**
     * As above; {@code allowThresholdViolations} publishes a tensor warehouse whose summary
     * violates its thresholds ({@code --allow-threshold-violations}); {@code allowMissingMembers}
     * publishes rows whose bound value names no member ({@code --allow-missing-members});
     * {@code shardFiles} false leaves WebDataset tars out of the mount's {@code ARTIFACT.tars/}
     * ({@code --no-shard-files}); {@code tensorHashes} false publishes no tensor hashes
     * ({@code --no-tensor-hashes}); {@code tensorHeaders} false publishes them as the release
     * before did, for its readers ({@code --no-tensor-headers}).
     */
    public static PublishCall.Reply publish(ControlClient client, DatasetId dataset, Map<String, List<String>> tables,
                                   Map<String, List<String>> artifacts, List<String> bindings, boolean setLatest,
                                   Optional<String> branch, long shardSize, Path cwd, boolean allowThresholdViolations,
                                   boolean allowMissingMembers, boolean shardFiles, boolean tensorHashes,
                                   boolean tensorHeaders,
                                   Consumer<String> progress) {
        Map<String, PathList> t = new LinkedHashMap<>();
        tables.forEach((name, specs) -> t.put(name, expand(specs, cwd, "--table " + name)));
        Map<String, PathList> a = new LinkedHashMap<>();
        artifacts.forEach((name, specs) -> a.put(name, expand(specs, cwd, "--artifact " + name)));
        PublishCall.Request request = new PublishCall.Request(dataset.toString(), t, a, Names.of(bindings), setLatest,
                shardSize > 0 ? new ByteCount(shardSize) : null, branch.orElse(null), allowThresholdViolations,
                allowMissingMembers, shardFiles, tensorHashes, io.warpdata.manifest.ManifestCodec.FORMAT_VERSION,
                tensorHeaders ? null : false);
        return client.call(Calls.PUBLISH, request, e -> {
            if (e.message() != null) {
                progress.accept(e.message());
            }
        });
    }

    private static PathList expand(List<String> specs, Path cwd, String what) {
        List<String> out = new ArrayList<>();
        for (String spec : specs) {
            for (Path p : InputPaths.expand(spec, cwd, what)) {
                out.add(p.toAbsolutePath().normalize().toString());
            }
        }
        return new PathList(out);
    }
}
