package io.warpdata.daemon.cli;

import io.warpdata.catalog.Catalog;
import io.warpdata.manifest.DatasetRef;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code warpctl latest WS/NAME REF}: points latest (the default branch) at the version REF
 * names, e.g. back to where it was before a publish or view moved it. Compare-and-swap like
 * every pointer move: the head is read past every cache, and the write fails with
 * {@code PointerMoved} if someone moved latest in between. Versions are never changed or deleted
 * by this: only the pointer moves.
 */
@Command(name = "latest", description = "Point WS/NAME's latest at the version REF names (a version prefix, a tag or a"
        + " branch), e.g. back to an earlier version. Compare-and-swap: fails if latest moves meanwhile.")
final class LatestCommand implements Callable<Integer> {
    @ParentCommand
    WarpctlCommand root;

    @Parameters(index = "0", paramLabel = "WS/NAME", description = "The dataset whose latest moves.")
    String dataset;

    @Parameters(index = "1", arity = "0..1", paramLabel = "REF", description = "A version prefix (8+ hex digits), a tag"
            + " or a branch of WS/NAME (or write WS/NAME@REF alone).")
    String ref;

    @Override
    public Integer call() {
        DatasetRef id = WarpctlCommand.datasetRef(dataset);
        if (ref == null) {
            // 'latest WS/NAME@REF', as tag and branch take a version (audit 33): latest moves to REF.
            if (id.ref() instanceof DatasetRef.Latest) {
                throw new UsageException("latest needs the version to point latest at",
                        "Write: warpctl latest " + id.id() + " REF (a version prefix, a tag or a branch), or warpctl"
                                + " latest " + id.id() + "@REF");
            }
            ref = id.ref().toString();
            id = WarpctlCommand.datasetRef(id.id().toString());
        }
        // The REF given is where latest moves; @X on the dataset is the user's other candidate (audit 32:
        // the advice dropped REF and moved latest to X).
        WarpctlCommand.requireDatasetOnly(id, "latest", "warpctl latest " + id.id() + " " + ref + " (REF is the version"
                + " latest moves to; to move it to " + id.ref() + ": warpctl latest " + id.id() + " " + id.ref() + ")");
        DatasetRef target = WarpctlCommand.datasetRef(id.id() + "@" + ref);
        LatestOutput out;
        String text;
        try (Remote remote = root.openRemote()) {
            Catalog catalog = remote.catalog();
            Catalog.Head head = catalog.head(id.id(), null);
            Catalog.Located to = catalog.locate(target);
            String by = root.context.user();
            boolean moved = catalog.moveBranch(id.id(), null, to.version(), by, head);
            Optional<String> from = head.version().map(v -> v.hex());
            out = new LatestOutput(id.id().toString(), from.orElse(null), to.version().hex(), moved);
            text = moved ? "latest of " + id.id() + ": " + from.map(h -> h.substring(0, 12)).orElse("(none)") + " -> "
                    + to.version().hex() : "latest of " + id.id() + " already names " + to.version().hex()
                    + "; nothing written";
        }
        DaemonCalls.refreshDaemon(root, "latest");
        return root.print(out, text);
    }

    /** What {@code warpctl latest --json} prints; {@code from} is null when there was no latest. */
    record LatestOutput(String dataset, String from, String version, boolean moved) {
    }
}
