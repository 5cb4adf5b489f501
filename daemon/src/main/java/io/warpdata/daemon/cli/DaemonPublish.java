package io.warpdata.daemon.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warpdata.daemon.control.ControlClient;
import io.warpdata.daemon.control.ControlProtocol;
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
    public static JsonNode publish(ControlClient client, DatasetId dataset, Map<String, List<String>> tables,
                                   Map<String, List<String>> artifacts, List<String> bindings, boolean setLatest,
                                   Optional<String> branch, long shardSize, Path cwd, Consumer<String> progress) {
        return publish(client, dataset, tables, artifacts, bindings, setLatest, branch, shardSize, cwd, false, false,
                progress);
    }

    /**
     * As above; {@code allowThresholdViolations} publishes a tensor warehouse whose summary
     * violates its thresholds ({@code --allow-threshold-violations}); {@code allowMissingMembers}
     * publishes rows whose bound value names no member ({@code --allow-missing-members}).
     */
    public static JsonNode publish(ControlClient client, DatasetId dataset, Map<String, List<String>> tables,
                                   Map<String, List<String>> artifacts, List<String> bindings, boolean setLatest,
                                   Optional<String> branch, long shardSize, Path cwd, boolean allowThresholdViolations,
                                   boolean allowMissingMembers, Consumer<String> progress) {
        ObjectNode args = ControlProtocol.object().put("dataset", dataset.toString()).put("set_latest", setLatest);
        if (allowThresholdViolations) {
            args.put("allow_threshold_violations", true);
        }
        if (allowMissingMembers) {
            args.put("allow_missing_members", true);
        }
        branch.ifPresent(b -> args.put("branch", b));
        if (shardSize > 0) {
            args.put("shard_size", shardSize);
        }
        ObjectNode t = args.putObject("tables");
        tables.forEach((name, specs) -> expand(t.putArray(name), specs, cwd, "--table " + name));
        ObjectNode a = args.putObject("artifacts");
        artifacts.forEach((name, specs) -> expand(a.putArray(name), specs, cwd, "--artifact " + name));
        bindings.forEach(args.putArray("bindings")::add);
        return client.call("publish", args, e -> {
            if (e.has("message")) {
                progress.accept(e.get("message").asText());
            }
        });
    }

    private static void expand(ArrayNode out, List<String> specs, Path cwd, String what) {
        for (String spec : specs) {
            for (Path p : InputPaths.expand(spec, cwd, what)) {
                out.add(p.toAbsolutePath().normalize().toString());
            }
        }
    }
}
