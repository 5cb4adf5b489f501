package io.warpdata.daemon.cli;

import io.warpdata.daemon.control.ControlProtocol;
import io.warpdata.daemon.control.protocol.Wire;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.warpdata.store.BlobStore;
import io.warpdata.store.BlobStores;
import io.warpdata.manifest.DatasetRef;
import io.warpdata.manifest.ManifestValidationException;
import io.warpdata.manifest.WarpException;
import io.warpdata.store.StoreUnavailableException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The warpctl client. Exit codes: 0 ok, 1 the operation failed, 2 usage error. Expected errors
 * ({@link WarpException}) print as {@code error: <message>} and {@code   what to do: <next step>};
 * stack traces only with {@code --debug}. With {@code --json} an error is one JSON object on stderr:
 * {@code {"error":{"type":..,"message":..,"next_step":..}}}.
 */
@Command(name = "warpctl", mixinStandardHelpOptions = true, versionProvider = io.warpdata.daemon.WarpVersion.Warpctl.class,
        description = "Publish, inspect and manage Warp datasets.",
        subcommandsRepeatable = false)
public final class WarpctlCommand implements Runnable {
    @Option(names = "--remote", scope = ScopeType.INHERIT, paramLabel = "URI",
            description = "Store: s3://bucket/prefix or file:///dir (default: $WARP_REMOTE).")
    String remote;

    @Option(names = "--endpoint", scope = ScopeType.INHERIT, paramLabel = "URL",
            description = "S3 endpoint for non-AWS servers (default: $WARP_S3_ENDPOINT).")
    String endpoint;

    @Option(names = "--json", scope = ScopeType.INHERIT, description = "Machine-readable output.")
    boolean json;

    @Option(names = "--debug", scope = ScopeType.INHERIT, description = "Show stack traces of errors.")
    boolean debug;

    @Option(names = "--socket", scope = ScopeType.INHERIT, paramLabel = "PATH",
            description = "warpd's control socket (default: $WARP_SOCKET, /run/warp/warpd.sock as root, else"
                    + " $XDG_RUNTIME_DIR/warp/warpd.sock).")
    Path socket;

    final CliContext context;

    WarpctlCommand(CliContext context) {
        this.context = Objects.requireNonNull(context, "context");
    }

    /**
     * Every subcommand, in help order. Register new subcommands here and nowhere else. Whether
     * one runs in this process (on the store) or through warpd (on its socket) is its own
     * business; all share the root's options ({@code --socket}, {@code --json}, {@code --remote},
     * {@code --endpoint}, {@code --debug}), which may stand before or after the subcommand.
     */
    static List<Object> subcommands() {
        return List.of(
                new PublishCommand(),
                new TagCommand(),
                new BranchCommand(),
                new LatestCommand(),
                new ViewCommand(),
                new InfoCommand(),
                new InspectCommand(),
                new SchemaCommand(),
                new HeadCommand(),
                new StreamCommand(),
                new CatCommand(),
                new ListRemoteCommand(),
                new StatusCommand(),
                new MetricsCommand(),
                new WarmCommand(),
                new PrefetchCommand(),
                new CacheCommand(),
                new RefreshCommand(),
                new DoctorCommand(),
                new InitCommand());
    }

    /** Runs warpctl with {@code args} in this process's environment; returns the exit code. */
    public static int run(String[] args) {
        return run(args, defaultContext());
    }

    /** Runs warpctl with {@code args} in {@code context}; returns the exit code (0 ok, 1 failed, 2 usage). */
    public static int run(String[] args, CliContext context) {
        return commandLine(context).execute(args);
    }

    /**
     * warpctl's whole command line (every subcommand, option and description) in {@code context}:
     * what runs a command, and what shell completion and man pages are generated from.
     */
    public static CommandLine commandLine(CliContext context) {
        WarpctlCommand root = new WarpctlCommand(context);
        CommandLine cl = new CommandLine(root);
        for (Object sub : subcommands()) {
            cl.addSubcommand(sub);
        }
        cl.addSubcommand(new HelpCommand());
        withHelpOptions(cl, cl.getCommandSpec().version());
        cl.setOut(new PrintWriter(context.out(), true));
        cl.setErr(new PrintWriter(context.err(), true));
        cl.setParameterExceptionHandler((ex, args) -> usageError(context, ex, args));
        cl.setExecutionExceptionHandler((ex, cmd, parseResult) -> report(root, ex));
        return cl;
    }

    /**
     * {@code -h}/{@code --help} (and {@code -V}/{@code --version}) on every command at every depth,
     * given here once rather than on each annotation: a command that has a required parameter
     * then prints its help instead of "Missing required parameter".
     */
    private static void withHelpOptions(CommandLine cl, String[] version) {
        for (CommandLine sub : cl.getSubcommands().values()) {
            CommandLine.Model.CommandSpec spec = sub.getCommandSpec();
            if (spec.userObject() instanceof HelpCommand) {
                continue;
            }
            spec.mixinStandardHelpOptions(true);
            if (spec.version().length == 0) {
                spec.version(version);
            }
            withHelpOptions(sub, version);
        }
    }

    /**
     * A command line that does not parse (unknown option, missing parameter, a value of the wrong
     * form): exit 2, as {@code error:} and {@code what to do:} lines, or under {@code --json} as
     * the same JSON object as every other error.
     */
    private static int usageError(CliContext context, CommandLine.ParameterException ex, String[] args) {
        CommandLine bad = ex.getCommandLine();
        String name = bad.getCommandSpec().qualifiedName();
        java.io.StringWriter suggestions = new java.io.StringWriter();
        CommandLine.UnmatchedArgumentException.printSuggestions(ex, new PrintWriter(suggestions, true));
        String hint = suggestions.toString().strip().replaceAll("\\s+", " ");
        String next = (hint.isEmpty() ? "" : hint + " ") + "See '" + name + " --help' for its usage.";
        String message = ex.getMessage();
        if (java.util.Arrays.asList(args).contains("--json")) {
            try {
                context.err().println(Wire.json().writeValueAsString(
                        errorOutput(new ControlProtocol.ErrorBody("Usage", message, next, java.util.Map.of()))));
                return 2;
            } catch (Exception jsonFailure) {
                // fall through to the plain form
            }
        }
        context.err().println("error: " + message);
        context.err().println("  what to do: " + next);
        return 2;
    }

    /** {@link #commandLine(CliContext)} in this process's environment. */
    public static CommandLine commandLine() {
        return commandLine(defaultContext());
    }

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing command");
    }

    /**
     * The next step of a failure. warpctl's own commands that read the store (stream, head, cat,
     * info, schema, inspect...) read it themselves, not through warpd: when the store is down,
     * they fail where the mount and Python's warpdata still serve what warpd has cached, and
     * the store's own advice ("cached data keeps serving") read as if they should have worked.
     */
    private static String nextStep(WarpException w) {
        if (w instanceof StoreUnavailableException) {
            return "Check that the store (or --endpoint) is up and reachable (warpctl doctor). This command reads the"
                    + " store itself; until the store is back, the mount and Python's warpdata serve what warpd has cached.";
        }
        return w.nextStep();
    }

    private static int report(WarpctlCommand root, Exception ex) {
        var err = root.context.err();
        if (root.json && ex instanceof WarpException w) {
            try {
                err.println(Wire.json().writeValueAsString(
                        errorOutput(new ControlProtocol.ErrorBody(w.type(), w.getMessage(), nextStep(w), w.details()))));
            } catch (Exception jsonFailure) {
                err.println("error: " + w.getMessage());
            }
            if (root.debug) {
                ex.printStackTrace(err);
            }
            return w instanceof UsageException ? 2 : 1;
        }
        if (ex instanceof WarpException w) {
            err.println("error: " + w.getMessage());
            err.println("  what to do: " + nextStep(w));
            if (root.debug) {
                ex.printStackTrace(err);
            }
            return w instanceof UsageException ? 2 : 1;
        }
        if (root.json) {
            // --json promises one JSON object on stderr for every error, this one too (audit 46).
            try {
                err.println(Wire.json().writeValueAsString(errorOutput(new ControlProtocol.ErrorBody(io.warpdata.daemon.control.ControlException.INTERNAL,
                        "unexpected failure: " + ex, "Run again with --debug for details, and report it if it persists.",
                        java.util.Map.of()))));
                if (root.debug) {
                    ex.printStackTrace(err);
                }
                return 1;
            } catch (Exception jsonFailure) {
                // fall through to the plain form
            }
        }
        err.println("error: unexpected failure: " + ex);
        if (root.debug) {
            ex.printStackTrace(err);
        } else {
            err.println("  what to do: run again with --debug for details, and report it if it persists.");
        }
        return 1;
    }

    static CliContext defaultContext() {
        return new CliContext(System.getenv(), System.out, System.err, Path.of("").toAbsolutePath(),
                Clock.systemUTC(), DefaultStores::open, DefaultStores::reader, stderrIsTerminal());
    }

    /** Exact on Linux: fd 2 is a terminal iff it links to a tty device. */
    private static boolean stderrIsTerminal() {
        try {
            String target = Files.readSymbolicLink(Path.of("/proc/self/fd/2")).toString();
            return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
        } catch (Exception e) {
            return false;
        }
    }

    // ---- helpers for subcommands ----

    /** The store this command names: --remote, else $WARP_REMOTE; empty if neither is given. */
    Optional<String> remoteUri() {
        return given(remote, "WARP_REMOTE");
    }

    /** The S3 endpoint this command names: --endpoint, else $WARP_S3_ENDPOINT; empty if neither is given. */
    Optional<String> endpointUrl() {
        return given(endpoint, "WARP_S3_ENDPOINT");
    }

    private Optional<String> given(String option, String variable) {
        return Optional.ofNullable(option != null ? option : context.env().get(variable)).filter(s -> !s.isBlank());
    }

    /**
     * Opens the store named by --remote / $WARP_REMOTE to read what it holds: a {@code file://}
     * directory that does not exist is refused as such (audit 32: {@code tag} said "Nothing is
     * published there" of a mistyped directory).
     */
    Remote openRemote() {
        return openRemote(false);
    }

    /** As {@link #openRemote()}; {@code mayCreate}: a publish, which makes a new store's directory. */
    Remote openRemote(boolean mayCreate) {
        String uri = remoteUri().orElseThrow(() -> new UsageException("No store given",
                "Pass --remote s3://bucket/prefix (or file:///dir), or set WARP_REMOTE."));
        BlobStore store = context.stores().open(uri, endpointUrl().orElse(null));
        if (!mayCreate) {
            try {
                BlobStores.requireExisting(store);
            } catch (RuntimeException e) {
                store.close();
                throw e;
            }
        }
        return new Remote(store);
    }

    /**
     * Refuses a {@code ref} that names a version (WS/NAME@REF) where {@code what} takes the
     * dataset alone; {@code write} is the command line to write instead.
     */
    static void requireDatasetOnly(DatasetRef ref, String what, String write) {
        if (!(ref.ref() instanceof DatasetRef.Latest)) {
            throw new UsageException(what + " takes the dataset without @" + ref.ref(), "Write: " + write);
        }
    }

    static DatasetRef datasetRef(String text) {
        try {
            return DatasetRef.parse(text);
        } catch (ManifestValidationException e) {
            throw new UsageException("'" + text + "' is not a dataset: " + e.getMessage(),
                    "Name a dataset as workspace/name or workspace/name@<version prefix>.");
        }
    }

    /** Prints {@code json} as JSON under {@code --json}, else the line {@code text}; returns 0, the exit code. */
    int print(Object json, String text) {
        if (this.json) {
            printJson(json);
        } else {
            context.out().println(text);
        }
        return 0;
    }

    void printJson(Object value) {
        try {
            ObjectMapper mapper = Wire.json().copy().enable(SerializationFeature.INDENT_OUTPUT);
            context.out().println(mapper.writeValueAsString(value));
        } catch (Exception e) {
            throw new IllegalStateException("cannot render JSON", e);
        }
    }

    /**
     * An error with --json, on stderr: {@code {"error":{"type","message","next_step", ...details}}},
     * as warpd sends one (a lost publish's {@code version} among the details).
     */
    static com.fasterxml.jackson.databind.node.ObjectNode errorOutput(ControlProtocol.ErrorBody error) {
        com.fasterxml.jackson.databind.node.ObjectNode n = ControlProtocol.object();
        n.set("error", error.json());
        return n;
    }
}
