package io.warpdata.daemon.cli;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.warpdata.catalog.Catalog;
import io.warpdata.daemon.publish.PublishRequest;
import io.warpdata.manifest.DatasetRef;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.util.concurrent.Callable;

/**
 * {@code warpctl branch DATASET[@REF] BRANCH} creates or moves a branch to the version REF names
 * (default latest); {@code warpctl branch --delete DATASET BRANCH} deletes it. Both are
 * compare-and-swap on the pointer as read now. The versions a branch named stay published.
 */
@Command(name = "branch", description = "Point branch BRANCH of a dataset at the version DATASET[@REF] names (default:"
        + " latest), creating it if new; or delete it with --delete. Versions stay published.")
final class BranchCommand implements Callable<Integer> {
    @ParentCommand
    WarpctlCommand root;

    @Parameters(index = "0", paramLabel = "DATASET[@REF]", description = "The version to point at (default ref: latest).")
    String dataset;

    @Parameters(index = "1", paramLabel = "BRANCH", description = "[a-z0-9][a-z0-9._-]*, not all hex digits, not latest.")
    String branch;

    @Option(names = "--delete", description = "Delete the branch (DATASET without @REF); its versions stay published.")
    boolean delete;

    @Override
    public Integer call() {
        DatasetRef ref = WarpctlCommand.datasetRef(dataset);
        String name;
        try {
            name = PublishRequest.requireBranchName(branch);
        } catch (io.warpdata.daemon.publish.InvalidInputException e) {
            throw new UsageException(e.getMessage(), e.nextStep());
        }
        BranchOutput out;
        String text;
        try (Remote remote = root.openRemote()) {
            Catalog catalog = remote.catalog();
            if (delete) {
                WarpctlCommand.requireDatasetOnly(ref, "--delete", "warpctl branch --delete " + ref.id() + " " + name);
                String was = catalog.deleteBranch(ref.id(), name).hex();
                out = new BranchOutput(ref.id().toString(), name, true, was, null);
                text = "deleted branch " + ref.id() + "@" + name + " (it named " + was + ", which stays published as "
                        + ref.id() + "@" + was.substring(0, 16) + ")";
            } else {
                Catalog.Head head = catalog.head(ref.id(), name);
                Catalog.Located target = catalog.locate(ref);
                String by = root.context.user();
                boolean moved = catalog.moveBranch(ref.id(), name, target.version(), by, head);
                out = new BranchOutput(ref.id().toString(), name, null, target.version().hex(), moved);
                text = moved ? "branch " + ref.id() + "@" + name + ": " + head.version().map(v -> v.shortHex(12))
                        .orElse("(new)") + " -> " + target.version().hex()
                        : ref.id() + "@" + name + " already names " + target.version().hex() + "; nothing written";
            }
        }
        DaemonCalls.refreshDaemon(root, delete ? "the deletion" : "the branch");
        return root.print(out, text);
    }

    /** What {@code warpctl branch --json} prints: {@code deleted} and the version it named, or {@code version} and {@code moved}. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record BranchOutput(String dataset, String branch, Boolean deleted, String version, Boolean moved) {
    }
}
