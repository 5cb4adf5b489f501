package io.warpdata.daemon.publish;

import io.warpdata.manifest.Binding;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.DatasetRef;
import io.warpdata.manifest.ManifestValidationException;
import io.warpdata.manifest.RefType;
import io.warpdata.manifest.WarpException;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What to publish: tables (name -> Parquet paths or globs), artifacts (name -> a directory, or tar
 * paths or globs), bindings, whether to move {@code latest} and which branch to move (both by
 * compare-and-swap from where they were when the publish began), the target shard size for
 * packed directories, and whether a tensor warehouse whose summary violates its thresholds may
 * be published ({@code --allow-threshold-violations}), and whether rows whose bound value names
 * no member of the artifact may be published ({@code --allow-missing-members}; the count is
 * recorded in the artifact's facts). Paths are resolved against {@link #workDir()}.
 */
public record PublishRequest(DatasetId dataset,
                             SortedMap<String, List<String>> tables,
                             SortedMap<String, List<String>> artifacts,
                             List<Binding> bindings,
                             boolean setLatest,
                             long shardSize,
                             Path workDir,
                             Optional<String> branch,
                             boolean allowThresholdViolations,
                             boolean allowMissingMembers,
                             boolean shardFiles,
                             boolean tensorHashes,
                             boolean tensorHeaders) {
    /** 256 MiB: large enough that S3 request costs vanish, small enough to re-upload cheaply. */
    public static final long DEFAULT_SHARD_SIZE = 256L << 20;

    public PublishRequest {
        Objects.requireNonNull(dataset, "dataset");
        tables = copy(tables);
        artifacts = copy(artifacts);
        bindings = List.copyOf(bindings);
        Objects.requireNonNull(workDir, "workDir");
        Objects.requireNonNull(branch, "branch");
        branch.ifPresent(PublishRequest::requireBranchName);
        if (tables.isEmpty() && artifacts.isEmpty()) {
            throw new InvalidInputException("Nothing to publish for " + dataset,
                    "Give at least one --table NAME=PATH or --artifact NAME=DIR.");
        }
    }

    /**
     * A request whose safetensors files' headers are written deflated beside their tensor hashes
     * when {@code tensorHashes} ({@code tensor_headers}, manifest format 5, every shard's files
     * hashed); {@code tensorHeaders} false hashes only the files of shards of 64 MiB or more and
     * writes no headers, as the release before did, for its readers ({@code --no-tensor-headers}).
     */
    public PublishRequest(DatasetId dataset, SortedMap<String, List<String>> tables, SortedMap<String, List<String>> artifacts,
                          List<Binding> bindings, boolean setLatest, long shardSize, Path workDir, Optional<String> branch,
                          boolean allowThresholdViolations, boolean allowMissingMembers, boolean shardFiles,
                          boolean tensorHashes) {
        this(dataset, tables, artifacts, bindings, setLatest, shardSize, workDir, branch, allowThresholdViolations,
                allowMissingMembers, shardFiles, tensorHashes, true);
    }

    /**
     * A request whose safetensors members' tensors are hashed ({@code tensor_hashes}, manifest
     * format 4: a tensor read through the mount fetches about its own bytes); {@code tensorHashes}
     * false leaves them out, for readers of an older release ({@code --no-tensor-hashes}).
     */
    public PublishRequest(DatasetId dataset, SortedMap<String, List<String>> tables, SortedMap<String, List<String>> artifacts,
                          List<Binding> bindings, boolean setLatest, long shardSize, Path workDir, Optional<String> branch,
                          boolean allowThresholdViolations, boolean allowMissingMembers, boolean shardFiles) {
        this(dataset, tables, artifacts, bindings, setLatest, shardSize, workDir, branch, allowThresholdViolations,
                allowMissingMembers, shardFiles, true);
    }

    /**
     * A request whose WebDataset tars are also shown as the files they were
     * ({@code ARTIFACT.tars/}, manifest format 3); {@code shardFiles} false leaves them out, for
     * readers of an older release ({@code --no-shard-files}).
     */
    public PublishRequest(DatasetId dataset, SortedMap<String, List<String>> tables, SortedMap<String, List<String>> artifacts,
                          List<Binding> bindings, boolean setLatest, long shardSize, Path workDir, Optional<String> branch,
                          boolean allowThresholdViolations, boolean allowMissingMembers) {
        this(dataset, tables, artifacts, bindings, setLatest, shardSize, workDir, branch, allowThresholdViolations,
                allowMissingMembers, true);
    }

    /** A request that refuses bound values naming no member. */
    public PublishRequest(DatasetId dataset, SortedMap<String, List<String>> tables, SortedMap<String, List<String>> artifacts,
                          List<Binding> bindings, boolean setLatest, long shardSize, Path workDir, Optional<String> branch,
                          boolean allowThresholdViolations) {
        this(dataset, tables, artifacts, bindings, setLatest, shardSize, workDir, branch, allowThresholdViolations, false);
    }

    /** A request that refuses a tensor warehouse beyond its thresholds. */
    public PublishRequest(DatasetId dataset, SortedMap<String, List<String>> tables, SortedMap<String, List<String>> artifacts,
                          List<Binding> bindings, boolean setLatest, long shardSize, Path workDir, Optional<String> branch) {
        this(dataset, tables, artifacts, bindings, setLatest, shardSize, workDir, branch, false, false);
    }

    /** A request that moves no branch but (maybe) latest. */
    public PublishRequest(DatasetId dataset, SortedMap<String, List<String>> tables, SortedMap<String, List<String>> artifacts,
                          List<Binding> bindings, boolean setLatest, long shardSize, Path workDir) {
        this(dataset, tables, artifacts, bindings, setLatest, shardSize, workDir, Optional.empty(), false, false);
    }

    /**
     * Checks a branch name: {@code [a-z0-9][a-z0-9._-]*}, not all hex of 8+ characters, not
     * {@code latest} (that is {@code --set-latest}).
     *
     * @throws InvalidInputException naming the rule otherwise
     */
    public static String requireBranchName(String name) {
        if (DatasetRef.LATEST.equals(name)) {
            throw new InvalidInputException("Branch 'latest' is the default branch", "Move it with 'warpctl latest"
                    + " WS/NAME REF' (publish and view: --set-latest); name other branches like 'dev'.");
        }
        try {
            return DatasetRef.requireRefName("branch", name);
        } catch (ManifestValidationException e) {
            throw new InvalidInputException(e.getMessage(), "Name branches like 'dev' or 'exp-2026.11'.");
        }
    }

    private static SortedMap<String, List<String>> copy(Map<String, List<String>> m) {
        SortedMap<String, List<String>> out = new TreeMap<>();
        m.forEach((k, v) -> out.put(k, List.copyOf(v)));
        return Collections.unmodifiableSortedMap(out);
    }

    /**
     * Parses repeated {@code NAME=SPEC} options; a name given twice collects all its specs.
     *
     * @throws InvalidInputException on a value without '=' or with an empty side
     */
    public static Map<String, List<String>> parseNamed(List<String> values, String option) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (String v : values) {
            int eq = v.indexOf('=');
            if (eq <= 0 || eq == v.length() - 1) {
                throw new InvalidInputException("Option " + option + " " + v + " is not of the form NAME=PATH",
                        "Write e.g. " + option + " main=./data/*.parquet (quote globs).");
            }
            out.computeIfAbsent(v.substring(0, eq), k -> new ArrayList<>()).add(v.substring(eq + 1));
        }
        return out;
    }

    /**
     * Parses {@code TABLE.COLUMN=ARTIFACT:image|audio|video|file}.
     *
     * @throws InvalidInputException if it does not have that form
     */
    public static Binding parseBinding(String text) {
        int eq = text.indexOf('=');
        int dot = eq < 0 ? -1 : text.lastIndexOf('.', eq);
        int colon = text.lastIndexOf(':');
        if (eq < 0 || dot <= 0 || dot == eq - 1 || colon <= eq + 1 || colon == text.length() - 1) {
            throw new InvalidInputException("Binding '" + text + "' is not of the form TABLE.COLUMN=ARTIFACT:TYPE",
                    "Write e.g. --bind main.image_path=images:image (types: image, audio, video, file).");
        }
        try {
            return new Binding(text.substring(0, dot), text.substring(dot + 1, eq), text.substring(eq + 1, colon),
                    RefType.fromJson(text.substring(colon + 1).toLowerCase(Locale.ROOT)));
        } catch (WarpException e) {
            throw new InvalidInputException("Binding '" + text + "' is invalid: " + e.getMessage(),
                    "Write e.g. --bind main.image_path=images:image (types: image, audio, video, file).");
        }
    }
}
