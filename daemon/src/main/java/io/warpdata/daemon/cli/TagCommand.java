package io.warpdata.daemon.cli;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.warpdata.catalog.Catalog;
import io.warpdata.manifest.DatasetRef;
import io.warpdata.manifest.VersionHash;
import io.warpdata.manifest.ManifestValidationException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code warpctl tag DATASET[@REF] TAG [--force]} and {@code warpctl tag --delete DATASET TAG}:
 * names a version for good. Tags never move: re-tagging another version fails unless
 * {@code --force}. Runs on the store; a warpd on the default socket is asked to re-read its
 * pointers afterwards, so {@code /warp/ws/name@TAG} shows at once.
 */
@Command(name = "tag", description = "Name a version with a tag (DATASET[@REF]: latest, a version prefix, a tag or"
        + " a branch). Tags never move: re-tagging fails unless --force.")
final class TagCommand implements Callable<Integer> {
    @ParentCommand
    WarpctlCommand root;

    @Parameters(index = "0", paramLabel = "DATASET[@REF]", description = "What to tag (default ref: latest).")
    String dataset;

    @Parameters(index = "1", paramLabel = "TAG", description = "[a-z0-9][a-z0-9._-]*, not all hex digits.")
    String tag;

    @Option(names = "--force", description = "Move an existing tag to this version (mounts follow within about"
            + " two pointer TTLs, 30 s by default; files already open keep reading the old version).")
    boolean force;

    @Option(names = "--delete", description = "Delete the tag (DATASET without @REF).")
    boolean delete;

    @Override
    public Integer call() {
        DatasetRef ref = WarpctlCommand.datasetRef(dataset);
        String name = tagName(tag);
        TagOutput out;
        String text;
        try (Remote remote = root.openRemote()) {
            Catalog catalog = remote.catalog();
            if (delete) {
                WarpctlCommand.requireDatasetOnly(ref, "--delete", "warpctl tag --delete " + ref.id() + " " + name);
                VersionHash was = catalog.deleteTag(ref.id(), name);
                out = new TagOutput(ref.id().toString(), name, true, was.hex(), null);
                text = "deleted tag " + ref.id() + "@" + name + " (it named " + was.hex() + ", which stays published as "
                        + ref.id() + "@" + was.shortHex(16) + "; to tag it again: warpctl tag " + ref.id() + "@"
                        + was.shortHex(16) + " " + name + ")";
            } else {
                Catalog.Located target = catalog.locate(ref);
                Optional<VersionHash> before = force ? catalog.tag(ref.id(), name) : Optional.empty();
                boolean written = catalog.tag(ref.id(), name, target.version(), root.context.user(), force);
                out = new TagOutput(ref.id().toString(), name, null, target.version().hex(), written);
                text = written ? "tagged " + ref.id() + "@" + name + " -> " + target.version().hex()
                        + before.filter(v -> !v.equals(target.version())).map(v -> " (moved: it named " + v.hex()
                                + "; every node follows within about two pointer TTLs)").orElse("")
                        : ref.id() + "@" + name + " already names " + target.version().hex() + "; nothing written";
            }
        }
        DaemonCalls.refreshDaemon(root, delete ? "the deletion" : "the tag");
        return root.print(out, text);
    }

    static String tagName(String tag) {
        if (DatasetRef.LATEST.equals(tag)) {
            throw new UsageException("'latest' is the default branch, not a tag", "Pick another tag name, e.g. v1.");
        }
        try {
            return DatasetRef.requireRefName("tag", tag);
        } catch (ManifestValidationException e) {
            throw new UsageException(e.getMessage(), "Name tags like 'v1', 'paper-2026' or 'rc.3'.");
        }
    }

    /** What {@code warpctl tag --json} prints: {@code deleted} and the {@code version} it named, or {@code version} and {@code written}. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record TagOutput(String dataset, String tag, Boolean deleted, String version, Boolean written) {
    }
}
