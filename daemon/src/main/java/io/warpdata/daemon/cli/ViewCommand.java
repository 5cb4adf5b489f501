package io.warpdata.daemon.cli;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.warpdata.daemon.publish.PublishProgress;
import io.warpdata.daemon.publish.PublishRequest;
import io.warpdata.daemon.view.ViewPublisher;
import io.warpdata.daemon.view.ViewQuery;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.DatasetRef;
import io.warpdata.manifest.Manifest;
import io.warpdata.manifest.ManifestValidationException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Callable;

/**
 * {@code warpctl view SOURCE[@REF] --as WS/NAME [--table T] [--where SQL] [--order-by SQL]
 * [--limit N] [--sample N | --fraction F] [--stratify-by COL] [--seed S]
 * [--set-latest | --branch B | --tag T]}: publishes the rows a query selects, and the members
 * they name, as a version of WS/NAME that shares its parent's shard blobs (zero copy).
 */
@Command(name = "view", description = "Publish a view: the rows of a table that a query selects, and the members"
        + " they name, as a new version that reads from the parent's shards (no member byte is copied).")
final class ViewCommand implements Callable<Integer> {
    @ParentCommand
    WarpctlCommand root;

    @Parameters(index = "0", paramLabel = "SOURCE[@REF]", description = "The parent (default ref: latest).")
    String source;

    @Option(names = "--as", required = true, paramLabel = "WS/NAME", description = "The view's dataset id.")
    String as;

    @Option(names = "--table", paramLabel = "T", description = "The table to select rows of (default: main, or the"
            + " only table).")
    String table;

    @Option(names = "--where", paramLabel = "SQL", description = "DuckDB condition over the table's columns.")
    String where;

    @Option(names = "--order-by", paramLabel = "SQL", description = "DuckDB ordering, e.g. a distance to a vector.")
    String orderBy;

    @Option(names = "--limit", paramLabel = "N", description = "At most N rows (after ordering).")
    Long limit;

    @Option(names = "--sample", paramLabel = "N", description = "A seeded uniform sample of N rows.")
    Long sample;

    @Option(names = "--fraction", paramLabel = "F", description = "A seeded uniform sample of this fraction (0-1].")
    BigDecimal fraction;

    @Option(names = "--stratify-by", paramLabel = "COL", description = "Split the sample evenly over COL's values.")
    String stratifyBy;

    @Option(names = "--seed", paramLabel = "S", defaultValue = "0", description = "Sample seed (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--set-latest", description = "Move WS/NAME's latest to the view. Without it latest moves only"
            + " when WS/NAME is new and no --branch or --tag is given: an existing dataset's latest is never taken over"
            + " by accident (the command says how to read or point at the view).")
    boolean setLatest;

    @Option(names = "--branch", paramLabel = "B", description = "Move branch B of WS/NAME to the view.")
    String branch;

    @Option(names = "--tag", paramLabel = "T", description = "Tag the view (tags never move).")
    String tag;

    @Option(names = "--staging-dir", paramLabel = "DIR", description = "Where the source table is staged"
            + " (default: the system temp directory).")
    Path stagingDir;

    @Override
    public Integer call() {
        DatasetRef ref = WarpctlCommand.datasetRef(source);
        DatasetId target;
        try {
            target = DatasetId.parse(as);
        } catch (ManifestValidationException e) {
            throw new UsageException("--as '" + as + "' is not a dataset id: " + e.getMessage(),
                    "Name the view as workspace/name (lowercase letters, digits, '_', '-').");
        }
        Optional<String> b = Optional.ofNullable(branch).map(PublishRequest::requireBranchName);
        Optional<String> t = Optional.ofNullable(tag).map(TagCommand::tagName);
        CliContext ctx = root.context;
        String creator = ctx.user();
        Path staging = ctx.stagingParent(stagingDir);
        PublishProgress bars = ctx.stderrIsTerminal() && !root.json ? new TerminalProgress(ctx.err()) : PublishProgress.NONE;
        // The options are checked before the store is opened: a command that only has to say no
        // answers without a store client, a round trip or DuckDB (docs/views.md, "How long").
        try {
            query(table != null ? table : "main");
        } catch (io.warpdata.daemon.view.ViewException malformed) {
            throw new UsageException(malformed.getMessage(), malformed.nextStep()); // options that cannot go together: exit 2
        }
        ViewPublisher.Result result;
        try (Remote remote = root.openRemote()) {
            String tableName = table != null ? table : defaultTable(remote.catalog().resolve(ref).manifest(), ref);
            ViewQuery query = query(tableName);
            result = new ViewPublisher(remote.store, remote.catalog(), ctx.clock(), creator, staging, bars)
                    .publish(ref, query, new ViewPublisher.Target(target, setLatest, b, t));
        }
        // A running warpd shows the view (and a new workspace) when this returns, as after a publish.
        DaemonCalls.refreshDaemon(root, "the view");
        if (sample != null && result.rows() < sample) {
            // Not an error (the whole table, or all of each group, is a fair sample of itself), but
            // the manifest records "sample: N" and 'info' shows it: say so before someone relies on N.
            ctx.err().println("note: the view holds " + result.rows() + " rows, fewer than --sample " + sample
                    + ": the table" + (where != null ? " after --where" : "") + " has no more"
                    + (stratifyBy != null ? ", or some of its --stratify-by groups are smaller than their share" : "")
                    + " (its manifest records sample: " + sample + ")");
        }
        return root.print(new ViewOutput(result.dataset().toString(), result.version().hex(),
                result.parentId() + "@" + result.parent().hex(), result.rows(), result.members(),
                result.manifestWritten(), result.bytesUploaded(), result.moved(),
                result.dataset() + "@" + result.version().shortHex(16), result.latestHint().orElse(null)),
                result.summary());
    }

    /** The query the options describe, of {@code tableName}; checks them (ViewException). */
    private ViewQuery query(String tableName) {
        return new ViewQuery(tableName, Optional.ofNullable(where), Optional.ofNullable(orderBy),
                limit == null ? OptionalLong.empty() : OptionalLong.of(limit),
                sample == null ? OptionalLong.empty() : OptionalLong.of(sample), Optional.ofNullable(fraction),
                Optional.ofNullable(stratifyBy), seed);
    }

    /** {@code main} if the source has it, else its only table. */
    private static String defaultTable(Manifest m, DatasetRef ref) {
        if (m.tables().containsKey("main") || m.tables().size() != 1) {
            if (!m.tables().containsKey("main") && !m.tables().isEmpty()) {
                throw new UsageException(ref + " has no table 'main' and several others",
                        "Pass --table with one of: " + String.join(", ", m.tables().keySet()) + ".");
            }
            return "main";
        }
        return m.tables().firstKey();
    }

    /** What {@code warpctl view --json} prints; {@code latest_not_moved} only when latest was not moved to it. */
    record ViewOutput(String dataset, String version, String parent, long rows, Map<String, Long> members,
                      boolean manifestWritten,
                      long bytesUploaded, List<String> pointersMoved, String ref,
                      @JsonInclude(JsonInclude.Include.NON_NULL) String latestNotMoved) {
    }
}
