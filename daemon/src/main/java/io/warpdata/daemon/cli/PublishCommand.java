package io.warpdata.daemon.cli;

import io.warpdata.daemon.control.ops.PublishOperation;
import io.warpdata.daemon.control.protocol.Calls;
import io.warpdata.daemon.control.protocol.PublishCall;
import io.warpdata.daemon.control.protocol.StatusCall;
import java.util.Objects;
import io.warpdata.daemon.publish.PublishProgress;
import io.warpdata.daemon.publish.PublishRequest;
import io.warpdata.daemon.publish.PublishResult;
import io.warpdata.daemon.publish.Publisher;
import io.warpdata.daemon.control.ControlClient;
import io.warpdata.daemon.control.ProcessIdentity;
import io.warpdata.daemon.control.SocketPaths;
import io.warpdata.manifest.Binding;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.ManifestValidationException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.Callable;

/** {@code warpctl publish ws/name --table NAME=GLOB --artifact NAME=DIR_OR_TARS [--bind ..] [--set-latest]}. */
@Command(name = "publish", description = "Publish a new dataset version to the store.")
final class PublishCommand implements Callable<Integer> {
    @ParentCommand
    WarpctlCommand root;

    @Parameters(index = "0", paramLabel = "DATASET", description = "workspace/name")
    String dataset;

    @Option(names = "--table", paramLabel = "NAME=PATH_OR_GLOB",
            description = "Parquet files of a table (repeatable; quote globs).")
    List<String> tables = new ArrayList<>();

    @Option(names = "--artifact", paramLabel = "NAME=DIR_OR_TAR_GLOB",
            description = "A directory to pack, or existing tar/WebDataset shards (repeatable).")
    List<String> artifacts = new ArrayList<>();

    @Option(names = "--bind", paramLabel = "TABLE.COLUMN=ARTIFACT:TYPE",
            description = "Column values are member paths of ARTIFACT; TYPE image|audio|video|file.")
    List<String> bindings = new ArrayList<>();

    @Option(names = "--branch", paramLabel = "BRANCH",
            description = "Move branch BRANCH to the new version (created if new; compare-and-swap: if someone else"
                    + " moves it while this publish runs, this one fails and says so).")
    String branch;

    @Option(names = "--set-latest", description = "Point latest (the default branch) at the new version.")
    boolean setLatest;

    @Option(names = "--shard-size", paramLabel = "SIZE", defaultValue = "256MiB", converter = SizeConverter.class,
            description = "Target tar shard size for packed directories (default: ${DEFAULT-VALUE}).")
    long shardBytes;

    @Option(names = "--staging-dir", paramLabel = "DIR",
            description = "Where packed shards are staged (default: the system temp directory; through warpd, its"
                    + " cache directory). Given, warpctl publishes in its own process, staging there.")
    Path stagingDir;

    @Option(names = "--threads", paramLabel = "N", defaultValue = "8", description = "Parallel uploads.")
    int threads;

    @Option(names = "--progress", description = "Show progress bars even when stderr is not a terminal.")
    boolean progress;

    @Option(names = "--allow-threshold-violations", description = "Publish a tensor warehouse whose validation"
            + " summary violates the thresholds in its manifest.json (refused by default, as training refuses it).")
    boolean allowThresholdViolations;

    @Option(names = "--allow-missing-members", description = "Publish even if some rows' bound values name no member"
            + " of the artifact (refused by default); the count is recorded in the artifact's facts"
            + " (missing_members) and views skip those values.")
    boolean allowMissingMembers;

    @Option(names = "--no-shard-files", description = "WebDataset tars: show their members only, not also the tar"
            + " files in ARTIFACT.tars/ (that needs manifest format 3, which releases before it refuse; see"
            + " README, Upgrading).")
    boolean noShardFiles;

    @Option(names = "--no-tensor-hashes", description = "Safetensors files: publish no hash per tensor, so that a"
            + " tensor read through the mount fetches the blocks around it rather than about its own bytes (the"
            + " hashes need manifest format 4, which releases before it refuse; see README, Upgrading).")
    boolean noTensorHashes;

    @Option(names = "--no-tensor-headers", description = "Safetensors files: publish as the release before this one"
            + " did, for its readers: tensor hashes only for shards of 64 MiB or more and no deflated headers (those"
            + " need manifest format 5, which releases before it refuse; see README, Upgrading).")
    boolean noTensorHeaders;

    @Option(names = "--no-daemon", description = "Publish in this process even when a warpd serving the same"
            + " store is reachable (by default the daemon publishes, so the version shows in its mount at once).")
    boolean noDaemon;

    @Override
    public Integer call() {
        CliContext ctx = root.context;
        DatasetId id;
        try {
            id = DatasetId.parse(dataset);
        } catch (ManifestValidationException e) {
            throw new UsageException("'" + dataset + "' is not a dataset id: " + e.getMessage(),
                    "Name the dataset as workspace/name (lowercase letters, digits, '_', '-').");
        }
        if (tables.isEmpty() && artifacts.isEmpty()) {
            throw new UsageException("Nothing to publish: no --table and no --artifact given",
                    "Give the version's contents, e.g. warpctl publish " + dataset + " --table 'main=./data/*.parquet'"
                            + " --artifact images=./images/ (each repeatable).");
        }
        List<Binding> parsedBindings;
        Map<String, List<String>> namedTables;
        Map<String, List<String>> namedArtifacts;
        try {
            // The command line's own forms, checked before anything is asked of warpd (exit code 2).
            parsedBindings = bindings.stream().map(PublishRequest::parseBinding).toList();
            namedTables = PublishRequest.parseNamed(tables, "--table");
            namedArtifacts = PublishRequest.parseNamed(artifacts, "--artifact");
        } catch (io.warpdata.daemon.publish.InvalidInputException malformed) {
            throw new UsageException(malformed.getMessage(), malformed.nextStep());
        }
        if (threads < 1 || threads > 256) {
            throw new UsageException("--threads " + threads + " is out of range", "Pass --threads between 1 and 256.");
        }
        if (shardBytes < 4096) {
            throw new UsageException("--shard-size " + shardBytes + " byte(s) is too small", "Pass --shard-size of at least 4KiB.");
        }
        if (branch != null) {
            PublishRequest.requireBranchName(branch);
        }
        // warpd stages in its own cache directory: a --staging-dir (most often the advice of a full
        // one) is honoured by publishing here (audit 31: it was ignored through warpd).
        Optional<PublishCall.Reply> viaDaemon = noDaemon || stagingDir != null ? Optional.empty()
                : publishThroughDaemon(ctx, id, namedTables, namedArtifacts, bindings, shardBytes);
        if (viaDaemon.isPresent()) {
            return root.print(viaDaemon.get(), viaDaemon.get().summary());
        }
        PublishRequest request = new PublishRequest(id, new TreeMap<>(namedTables), new TreeMap<>(namedArtifacts),
                parsedBindings, setLatest,
                shardBytes, ctx.cwd(), Optional.ofNullable(branch), allowThresholdViolations, allowMissingMembers,
                !noShardFiles, !noTensorHashes, !noTensorHeaders);
        Path staging = ctx.stagingParent(stagingDir);
        PublishProgress bars = progress || (ctx.stderrIsTerminal() && !root.json)
                ? new TerminalProgress(ctx.err()) : PublishProgress.NONE;
        String creator = ctx.user();
        PublishResult result;
        try (Remote remote = root.openRemote(true)) {
            result = new Publisher(remote.store, remote.catalog(), ctx.clock(), creator, staging, threads, bars).publish(request);
        }
        // Published in this process (--no-daemon, or warpd serves another store): a warpd on the
        // socket still shows the version when this returns.
        DaemonCalls.refreshDaemon(root, "the version");
        return root.print(PublishOperation.reply(result), result.summary());
    }

    /** The uid owning the control socket (the warpd that made it), or -1 if it cannot be told. */
    static int socketOwner(Path sock) {
        try {
            return (Integer) java.nio.file.Files.getAttribute(sock, "unix:uid");
        } catch (java.io.IOException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * What to say when a warpd older than this warpctl published what formats 3 or 4 would carry:
     * a warpd before them ignores the options it does not know, and left out what this warpctl
     * would have written, in a version of another id (audit 42). Such a warpd does not say which
     * manifest format it wrote (nor does one of the releases just before this one, which wrote
     * them: hence "if").
     *
     * @param newFormats whether the publish asked for what formats 3 or 4 carry: tars with their
     *                   file names, or a safetensors dataset with its tensors' hashes
     */
    static Optional<String> olderDaemonNote(PublishCall.Reply reply, boolean newFormats, String daemonVersion) {
        if (reply.formatVersion() != null || !newFormats) {
            return Optional.empty();
        }
        return Optional.of("warpctl: warpd (" + daemonVersion + ") is older than this warpctl and did not say which"
                + " manifest format it wrote: one from before commit 00a20612 (2026-11-29) leaves WebDataset tars' file"
                + " names (ARTIFACT.tars/) out of this version, one from before 7f889ead per-tensor hashes, and one from"
                + " before 2026-11-30 does not check a safetensors dataset's _tensor_index.parquet against its headers."
                + " Upgrade warpd, or publish with --no-daemon.");
    }

    /** Whether the artifacts asked for what formats 3 or 4 carry ({@link #olderDaemonNote}). */
    private boolean asksNewFormats(Map<String, List<String>> artifacts, Path cwd) {
        for (List<String> specs : artifacts.values()) {
            for (String spec : specs) {
                if (!noShardFiles && spec.contains(".tar")) {
                    return true;
                }
                if (!noTensorHashes && Files.isRegularFile(cwd.resolve(spec).resolve("dataset_manifest.json"))) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Publishes through a running warpd when one is reachable and serves the store this command
     * names (or no store is named): the daemon then shows the new version in its mount as soon as
     * this returns. Sources are expanded here, as the calling user, and read by the daemon only
     * where this user may read them.
     */
    private Optional<PublishCall.Reply> publishThroughDaemon(CliContext ctx, DatasetId id, Map<String, List<String>> namedTables,
                                                            Map<String, List<String>> namedArtifacts,
                                                            List<String> bindingSpecs, long shardBytes) {
        Path sock = root.socket != null ? root.socket : SocketPaths.clientSocket(ctx.env(), ProcessIdentity.uid());
        if (!ControlClient.reachable(sock)) {
            return Optional.empty();
        }
        int me = ProcessIdentity.uid();
        int warpdUid = socketOwner(sock);
        try (ControlClient client = ControlClient.connect(sock)) {
            Optional<String> wanted = root.remoteUri();
            StatusCall.Reply status = client.call(Calls.STATUS);
            String served = Objects.requireNonNullElse(status.remote(), "");
            if (me != 0 && warpdUid >= 0 && me != warpdUid) {
                // warpd publishes only for its own user and root (PublishOperation): it would read
                // this user's files with its own rights. Audit 37: every member of the socket's
                // group who typed the README's publish was refused, and told to pass --no-daemon.
                ctx.err().println("warpctl: warpd at " + sock + " runs as uid " + warpdUid + " and publishes only for its"
                        + " own user and root: publishing here, with your own rights and store credentials (as"
                        + " --no-daemon)");
                // To warpd's store when none is named (the review: "No store given", or the user's own store).
                if (wanted.isEmpty() && !served.isEmpty()) {
                    root.remote = served;
                    if (root.endpointUrl().isEmpty() && status.endpoint() != null && !status.endpoint().isEmpty()) {
                        root.endpoint = status.endpoint();
                    }
                }
                return Optional.empty();
            }
            if (wanted.isPresent() && !sameRemote(wanted.get(), served)) {
                return Optional.empty();
            }
            Optional<String> wantedEndpoint = root.endpointUrl();
            // Another S3 server holding a bucket of the same name is another store. Compared only
            // for an S3 store this command names, and a warpd that says where it goes ("" for
            // AWS's own; null from a warpd too old to say, taken as before: the same store).
            if (wanted.isPresent() && served.regionMatches(true, 0, "s3://", 0, 5) && wantedEndpoint.isPresent()
                    && status.endpoint() != null && !sameEndpoint(wantedEndpoint.get(), status.endpoint())) {
                ctx.err().println("warpctl: warpd at " + sock + " serves " + served + " at " + (status.endpoint().isEmpty()
                        ? "AWS's own endpoint" : status.endpoint()) + "; publishing directly to " + wantedEndpoint.get()
                        + " as --endpoint (or WARP_S3_ENDPOINT) says");
                return Optional.empty();
            }
            ctx.err().println("warpctl: publishing through warpd at " + sock + " (" + served
                    + (status.endpoint() == null || status.endpoint().isEmpty() ? "" : " at " + status.endpoint()) + ")");
            // Ctrl-C: tell warpd (closing our side cancels the publish there) and wait for its last
            // word, so that the user learns whether it stopped in time or had already moved the
            // pointers (warpd checks before each blob, the manifest and the pointers).
            java.util.concurrent.atomic.AtomicBoolean interrupted = new java.util.concurrent.atomic.AtomicBoolean();
            java.util.concurrent.CountDownLatch told = new java.util.concurrent.CountDownLatch(1);
            Thread hook = new Thread(() -> {
                interrupted.set(true);
                client.finishSending();
                try {
                    told.await(30, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException gone) {
                    Thread.currentThread().interrupt();
                }
            });
            Runtime.getRuntime().addShutdownHook(hook);
            try {
                PublishCall.Reply reply = DaemonPublish.publish(client, id, namedTables, namedArtifacts, bindingSpecs,
                        setLatest, Optional.ofNullable(branch),
                        shardBytes, ctx.cwd(), allowThresholdViolations, allowMissingMembers, !noShardFiles,
                        !noTensorHashes, !noTensorHeaders, ctx.err()::println);
                if (interrupted.get()) {
                    ctx.err().println("warpctl: interrupted too late: warpd had already written the version and moved its"
                            + " pointers. " + reply.summary());
                }
                olderDaemonNote(reply, asksNewFormats(namedArtifacts, ctx.cwd()), status.version())
                        .ifPresent(ctx.err()::println);
                return Optional.of(reply);
            } catch (io.warpdata.manifest.WarpException e) {
                if (io.warpdata.daemon.control.ControlException.PUBLISH_TOO_LARGE.equals(e.type())) {
                    // Nothing was read or written: publish here instead, with this process's heap.
                    ctx.err().println("warpctl: " + e.getMessage() + "; publishing in this process instead (as --no-daemon;"
                            + " it needs the store's credentials)");
                    // To warpd's store, as the user asked (no store named: the one warpd serves).
                    if (wanted.isEmpty()) {
                        root.remote = served;
                        if (wantedEndpoint.isEmpty() && status.endpoint() != null && !status.endpoint().isEmpty()) {
                            root.endpoint = status.endpoint();
                        }
                    }
                    return Optional.empty();
                }
                if (interrupted.get() && "Cancelled".equals(e.type())) {
                    ctx.err().println("warpctl: publish cancelled: no pointer moved, latest is unchanged (blobs already"
                            + " uploaded stay; publishing again reuses them)");
                }
                throw e;
            } finally {
                told.countDown();
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException shuttingDown) {
                    // Ctrl-C: the hook is running
                }
            }
        }
    }

    private static boolean sameRemote(String a, String b) {
        return strip(a).equals(strip(b));
    }

    /**
     * Whether two endpoint URLs name one server: scheme and host in any case, a default port
     * written or not, trailing slashes aside, and this machine's own names ({@code localhost},
     * {@code 127.0.0.1}, {@code ::1}) alike; other names are compared, not resolved.
     */
    static boolean sameEndpoint(String a, String b) {
        if (a.isBlank() != b.isBlank()) {
            return false;
        }
        return normalEndpoint(a).equals(normalEndpoint(b));
    }

    private static final java.util.Set<String> LOOPBACK_NAMES = java.util.Set.of("localhost", "127.0.0.1", "[::1]",
            "::1", "ip6-localhost");

    private static String normalEndpoint(String url) {
        try {
            java.net.URI u = new java.net.URI(strip(url));
            String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(java.util.Locale.ROOT);
            int port = u.getPort() == -1 ? ("https".equals(scheme) ? 443 : "http".equals(scheme) ? 80 : -1) : u.getPort();
            String host = u.getHost() == null ? String.valueOf(u.getAuthority()) : u.getHost().toLowerCase(java.util.Locale.ROOT);
            // warpctl reaches warpd on this machine, so this machine's own names are one server
            // (audit 21: localhost and 127.0.0.1 were told apart, and the publish went around warpd).
            if (LOOPBACK_NAMES.contains(host)) {
                host = "loopback";
            }
            return scheme + "://" + host + ":" + port + (u.getRawPath() == null ? "" : u.getRawPath());
        } catch (java.net.URISyntaxException e) {
            return strip(url);
        }
    }

    private static String strip(String uri) {
        String u = uri.trim();
        while (u.endsWith("/")) {
            u = u.substring(0, u.length() - 1);
        }
        return u;
    }
}
