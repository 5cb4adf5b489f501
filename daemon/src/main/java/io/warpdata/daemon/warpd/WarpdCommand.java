package io.warpdata.daemon.warpd;

import io.warpdata.manifest.WarpException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code warpd}: mounts a store and serves it in the foreground until SIGTERM or SIGINT, then
 * unmounts cleanly (DESIGN.md sections 8 and 9).
 */
@Command(name = "warpd", mixinStandardHelpOptions = true, versionProvider = io.warpdata.daemon.WarpVersion.Warpd.class, sortOptions = false,
        description = "Mounts versioned datasets from an S3-compatible store (or a local directory) as a read-only file tree.",
        footer = {"", "Settings come from, in order: options, --config FILE (keys = option names, e.g. cache-size=200GB),",
                "the environment (WARP_REMOTE, WARP_S3_ENDPOINT, WARP_CACHE_DIR, WARP_CACHE_SIZE_GB, WARP_MODE, WARP_SOCKET,",
                "WARP_POINTER_TTL, WARP_METRICS_LISTEN),",
                "defaults. AWS credentials and region come from the AWS SDK's default chain."})
public final class WarpdCommand implements Callable<Integer> {

    @Option(names = "--mount", paramLabel = "DIR", description = "Empty directory to mount on, e.g. /warp.")
    String mount;

    @Option(names = "--remote", paramLabel = "URI", description = "s3://bucket/prefix or file:///dir (WARP_REMOTE).")
    String remote;

    @Option(names = "--endpoint", paramLabel = "URL", description = "S3-compatible endpoint for non-AWS servers (WARP_S3_ENDPOINT).")
    String endpoint;

    @Option(names = "--cache-dir", paramLabel = "DIR", description = "Disk cache and stats.json; in --mode remote only publish-staging/ (WARP_CACHE_DIR, default ~/.cache/warpdata).")
    String cacheDir;

    @Option(names = "--cache-size", paramLabel = "SIZE", converter = SizeText.class, description = "Disk cache limit of the data blocks, e.g. 500MB, 200GB, 1TiB (WARP_CACHE_SIZE_GB, default 100GB); kept member index files (an eighth of it, at least 1GiB) and passthrough copies (an eighth, at most 8GiB) come on top (docs/cache.md).")
    String cacheSize;

    @Option(names = "--socket", paramLabel = "PATH", description = "Control socket (WARP_SOCKET; default /run/warp/warpd.sock as root, else $XDG_RUNTIME_DIR/warp/warpd.sock).")
    String socket;

    @Option(names = "--socket-group", paramLabel = "GROUP",
            description = "Group that may connect to the control socket (mode 0660; WARP_SOCKET_GROUP); default: only warpd's user and root.")
    String socketGroup;

    @Option(names = "--control-group", paramLabel = "GROUP",
            description = "Group whose members may run gc and cache verify through warpd (WARP_CONTROL_GROUP; publish through warpd is for its own user and root only).")
    String controlGroup;

    @Option(names = "--mode", paramLabel = "MODE", converter = ModeText.class,
            description = "auto | remote | hybrid | local (WARP_MODE, default auto).")
    String mode;

    @Option(names = "--pointer-ttl", paramLabel = "DURATION", converter = DurationText.class,
            description = "How long latest, branch and tag pointers are trusted before a (conditional) re-read, e.g. 30s, 2m (WARP_POINTER_TTL, default 30s).")
    String pointerTtl;

    @Option(names = "--metrics-listen", paramLabel = "[HOST:]PORT",
            description = "Serve Prometheus metrics over HTTP at /metrics on this address; a bare port means 127.0.0.1"
                    + " (WARP_METRICS_LISTEN; default: off, 'warpctl metrics' still works).")
    String metricsListen;

    @Option(names = "--mirror", paramLabel = "URL",
            description = "A cache in front of the store, tried in order (repeatable): http(s)://HOST[:PORT]/BASE"
                    + " (nginx, Squid, any HTTP cache; set its slice to the block size, 1 MiB) or"
                    + " s3://BUCKET/PREFIX[?endpoint=URL] (a tier warpd fills). Every byte is verified; a failing"
                    + " mirror is skipped for 30 s (WARP_MIRRORS; docs/fleet.md).")
    java.util.List<String> mirrors;

    @Option(names = "--mirror-timeout", paramLabel = "DURATION", converter = DurationText.class,
            description = "The longest a mirror may stay silent within one read (to connect, before its headers, between two"
                    + " parts of its body), e.g. 2s, 500ms, at most 30s; an answer that keeps coming is waited for, up to 60 s"
                    + " (WARP_MIRROR_TIMEOUT, default 2s).")
    String mirrorTimeout;

    @Option(names = "--passthrough", paramLabel = "on|off",
            description = "on: where the kernel allows it (Linux 6.9+, warpd with CAP_SYS_ADMIN), a whole file (a Parquet"
                    + " shard, a big file) read whole is copied locally, verified, and read by the kernel itself when"
                    + " opened again; every open of any file then costs a round trip to warpd. off (default): files open"
                    + " without one (WARP_PASSTHROUGH; docs/cache.md).")
    String passthrough;

    @Option(names = "--allow-other", description = "Let other users read the mount (needs user_allow_other in /etc/fuse.conf unless root).")
    boolean allowOther;

    @Option(names = "--config", paramLabel = "FILE", description = "Properties file with the same keys as the options.")
    Path configFile;

    private WarpdCommand() {
    }

    /** Runs warpd with {@code args} in the foreground; returns the exit code. */
    public static int run(String[] args) {
        return commandLine().execute(args);
    }

    /** warpd's command line: what runs the daemon, and what its completion and man page are generated from. */
    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new WarpdCommand());
        cl.setParameterExceptionHandler(WarpdCommand::usageError);
        return cl;
    }

    /**
     * A command line that does not parse (a misspelt option, a size or duration of the wrong
     * form): two lines as warpd's other errors, then exit 2, instead of picocli's whole usage
     * after the one line that matters.
     */
    private static int usageError(CommandLine.ParameterException ex, String[] args) {
        java.io.StringWriter suggestions = new java.io.StringWriter();
        CommandLine.UnmatchedArgumentException.printSuggestions(ex, new java.io.PrintWriter(suggestions, true));
        String hint = suggestions.toString().strip().replaceAll("\\s+", " ");
        java.io.PrintWriter err = ex.getCommandLine().getErr();
        err.println("warpd: " + ex.getMessage());
        err.println("  " + (hint.isEmpty() ? "" : hint + (hint.endsWith(".") ? " " : ". ")) + "See 'warpd --help' for the options.");
        err.flush();
        return 2;
    }

    @Override
    public Integer call() throws InterruptedException {
        if (heapTooSmall(Runtime.getRuntime().maxMemory())) {
            System.err.println("warpd: a heap of " + (Runtime.getRuntime().maxMemory() >> 20) + " MiB is too small: warpd"
                    + " needs at least " + (MIN_HEAP_BYTES >> 20) + " MiB to read large files without running out of"
                    + " memory (and leaving its mount dead)");
            System.err.println("  Set WARP_HEAP=" + (MIN_HEAP_BYTES >> 20) + "m or more (the default, 384m, is what the"
                    + " README's figures use), or drop a smaller -Xmx from WARP_JAVA_OPTS.");
            return 2;
        }
        String unbounded = unboundedHeapWarning(
                java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments(),
                Runtime.getRuntime().maxMemory());
        if (unbounded != null) {
            System.err.println(unbounded);
        }
        DaemonConfig config;
        WarpDaemon daemon;
        // Installed before mounting, so that a stop request at any moment after the mount unmounts.
        AtomicReference<WarpDaemon> running = new AtomicReference<>();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            WarpDaemon d = running.get();
            if (d != null) {
                d.close();
            }
        }, "warpd-shutdown"));
        // SIGTERM/SIGINT are a normal stop at any moment, the start included: unmount what is
        // mounted, close, exit 0 (the JVM's default handling exits 143/130; it did for a stop
        // just after the mount appeared, audit 28). The hook covers every other way the JVM may go down.
        for (String signal : new String[] {"TERM", "INT"}) {
            sun.misc.Signal.handle(new sun.misc.Signal(signal), s -> new Thread(() -> {
                WarpDaemon d = running.get();
                if (d != null) {
                    d.close();
                    if (d.mountStarted()) {
                        // The main thread ends the start (its control socket is closed as it is
                        // added) and returns 0; exiting here could leave that socket file behind.
                        return;
                    }
                }
                System.exit(0);
            }, "warpd-stop-" + s.getName()).start());
        }
        io.warpdata.daemon.control.ControlSettings control;
        try {
            Properties file = loadConfigFile();
            config = DaemonConfig.resolve(cliOptions(), file, System.getenv(),
                    Path.of(System.getProperty("user.home")), (int) WarpDaemon.uid());
            control = new io.warpdata.daemon.control.ControlSettings(config.socket(),
                    DaemonConfig.accessGroup(DaemonConfig.SOCKET_GROUP, socketGroup, file, System.getenv()).orElse(null),
                    DaemonConfig.accessGroup(DaemonConfig.CONTROL_GROUP, controlGroup, file, System.getenv()).orElse(null));
            control.check();
            // Handed to the hook before anything opens: a stop request at any moment of the start unmounts.
            daemon = WarpDaemon.start(config, running::set);
        } catch (WarpDaemon.StartStoppedException e) {
            System.err.println("warpd: " + e.getMessage());
            return 0;
        } catch (WarpException e) {
            System.err.println("warpd: " + e.getMessage());
            System.err.println("  " + e.nextStep());
            return 1;
        }
        try {
            daemon.addService(ControlSocket.start(daemon, control, Clock.systemUTC()));
        } catch (WarpException e) {
            daemon.close();
            System.err.println("warpd: " + e.getMessage());
            System.err.println("  " + e.nextStep());
            return 1;
        }
        if (daemon.stopping()) {
            // Stopped during the start, after the mount: it is unmounted already (audit 29: "mounted" came after "unmounted").
            return 0;
        }
        // Before "mounted": whoever waits for that line (a script, a test) has this one too.
        daemon.metricsUrl().ifPresent(url -> System.out.println("warpd: metrics at " + url));
        if (!config.mirrors().isEmpty()) {
            System.out.println("warpd: mirrors, tried in this order before the store: " + String.join(", ",
                    config.mirrors().stream().map(io.warpdata.blobcache.mirror.MirrorSpec::describe).toList())
                    + " (timeout " + config.mirrorTimeout().toMillis() + " ms)");
        }
        System.out.println("warpd: mounted " + config.remote() + " at " + config.mountPoint() + " (mode " + config.mode().text() + ")");
        System.out.flush();
        daemon.awaitClosed();
        return daemon.unmountedFromOutside() ? WarpDaemon.UNMOUNTED_EXIT : 0;
    }

    /**
     * A {@code --cache-size} checked while the command line is parsed: a value that is not a size
     * is a usage error (exit 2) naming the option, not a failure to start.
     */
    static final class SizeText implements CommandLine.ITypeConverter<String> {
        @Override
        public String convert(String value) {
            try {
                if (io.warpdata.daemon.ByteSize.parse(value) <= 0) {
                    throw new CommandLine.TypeConversionException("a cache of 0 bytes holds nothing; pass e.g. 200GB");
                }
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
            return value;
        }
    }

    /** A {@code --mode} checked while the command line is parsed, like {@link SizeText} (exit 2, audit 23). */
    static final class ModeText implements CommandLine.ITypeConverter<String> {
        @Override
        public String convert(String value) {
            try {
                io.warpdata.blobcache.cache.CacheMode.parse(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
            return value;
        }
    }

    /**
     * The heap below which warpd refuses to start: 160 MiB. With 64-96 MiB it mounted, then ran
     * out of memory on the first large file read and left the mount dead (audit 23); 160 MiB
     * read it.
     */
    static final long MIN_HEAP_BYTES = 160L << 20;

    /**
     * What warpd says when its JVM was started with no heap bound ({@code java -jar warp.jar
     * warpd} as typed, not {@code scripts/warpd} or the service, which give it 384 MiB) and the
     * JVM's own default, a quarter of RAM, is over 1 GiB: its resident memory then grows with the
     * heap, to 1.2 GB in audit 51 against 445-520 MiB with the launcher's bound. Null when bounded
     * (-Xmx, -XX:MaxHeapSize, a RAM percentage or size, also from JAVA_TOOL_OPTIONS) or small.
     */
    static String unboundedHeapWarning(java.util.List<String> jvmArgs, long maxMemory) {
        for (String a : jvmArgs) {
            if (a.startsWith("-Xmx") || a.startsWith("-XX:MaxHeapSize=") || a.startsWith("-XX:MaxRAMPercentage=")
                    || a.startsWith("-XX:MaxRAM=")) {
                return null;
            }
        }
        if (maxMemory <= (1L << 30)) {
            return null;
        }
        return "warpd: started without a heap bound, so the JVM's default applies (" + (maxMemory >> 20)
                + " MiB, a quarter of this machine's memory) and warpd's resident memory can grow past 1 GB;"
                + " scripts/warpd and the service start it with -Xmx384m (WARP_HEAP). Add -Xmx384m to the java"
                + " command line to bound it.";
    }

    /** The JVM's heap limit as warpd's: G1 reports a few MiB under -Xmx, hence the slack. */
    static boolean heapTooSmall(long maxMemory) {
        return maxMemory < MIN_HEAP_BYTES - (16L << 20);
    }

    /** A {@code --pointer-ttl} checked while the command line is parsed, like {@link SizeText}. */
    static final class DurationText implements CommandLine.ITypeConverter<String> {
        @Override
        public String convert(String value) {
            java.time.Duration d;
            try {
                d = DaemonConfig.duration(value);
            } catch (WarpException e) {
                throw new CommandLine.TypeConversionException(e.getMessage() + "; " + e.nextStep());
            }
            if (d.isNegative() || d.isZero()) {
                throw new CommandLine.TypeConversionException("'" + value + "' is not a positive duration; give one like 500ms, 30s, 2m or 1h.");
            }
            return value;
        }
    }

    Map<String, String> cliOptions() {
        Map<String, String> m = new LinkedHashMap<>();
        put(m, DaemonConfig.MOUNT, mount);
        put(m, DaemonConfig.REMOTE, remote);
        put(m, DaemonConfig.ENDPOINT, endpoint);
        put(m, DaemonConfig.CACHE_DIR, cacheDir);
        put(m, DaemonConfig.CACHE_SIZE, cacheSize);
        put(m, DaemonConfig.SOCKET, socket);
        put(m, DaemonConfig.MODE, mode);
        put(m, DaemonConfig.POINTER_TTL, pointerTtl);
        put(m, DaemonConfig.METRICS_LISTEN, metricsListen);
        if (mirrors != null && !mirrors.isEmpty()) {
            if (mirrors.stream().anyMatch(String::isBlank)) {
                // --mirror "$CACHE_URL" with the variable unset read straight from the store, silently (audit 26).
                throw new ConfigException("an empty --mirror was given",
                        "Give the mirror's URL (is a variable meant to hold it unset?), or drop --mirror.");
            }
            m.put(DaemonConfig.MIRROR, String.join(" ", mirrors));
        }
        put(m, DaemonConfig.MIRROR_TIMEOUT, mirrorTimeout);
        put(m, DaemonConfig.PASSTHROUGH, passthrough);
        if (allowOther) {
            m.put(DaemonConfig.ALLOW_OTHER, "true");
        }
        return m;
    }

    private static void put(Map<String, String> m, String key, String value) {
        if (value != null) {
            m.put(key, value);
        }
    }

    private Properties loadConfigFile() {
        Properties p = new Properties();
        if (configFile == null) {
            return p;
        }
        try (Reader r = Files.newBufferedReader(configFile)) {
            p.load(r);
        } catch (IOException e) {
            throw new ConfigException("cannot read config file " + configFile + ": " + e.getMessage(),
                    "Pass an existing, readable --config file (java.util.Properties format).");
        }
        return p;
    }
}
