package io.warpdata.daemon.warpd;

import io.warpdata.blobcache.cache.CacheMode;
import io.warpdata.blobcache.mirror.MirrorSpec;
import io.warpdata.daemon.ByteSize;
import io.warpdata.daemon.control.SocketPaths;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;

/**
 * warpd's settings. Each comes from, in order of precedence: the command line, the
 * {@code --config} file (java.util.Properties with the option names as keys, e.g.
 * {@code cache-size=200GB}), the environment ({@code WARP_*}), a default.
 *
 * @param mountPoint where the tree appears
 * @param remote the store URI, {@code s3://bucket/prefix} or {@code file:///dir}
 * @param endpoint an S3-compatible endpoint URL for non-AWS servers
 * @param cacheDir the disk cache (and {@code stats.json})
 * @param cacheSizeBytes the disk cache's size limit
 * @param socket the control socket path
 * @param mode how the cache is used
 * @param allowOther let other users read the mount
 * @param pointerTtl how long a latest or branch pointer is trusted before it is re-read (with a
 *        conditional GET), which is also how often the links the kernel caches are re-checked
 * @param metricsListen where to serve Prometheus metrics over HTTP ({@code /metrics}), or empty: not at all
 * @param mirrors caches in front of the store, in the order they are tried ({@code --mirror}, repeatable;
 *        {@code WARP_MIRRORS}; config key {@code mirror}, a list separated by commas or spaces). Parsed and
 *        checked here; opened by WarpDaemon as the block cache's remote tiers (issue 25)
 * @param mirrorTimeout the longest a mirror may stay silent within one read ({@code --mirror-timeout}, 2 s)
 * @param passthrough ask the kernel for passthrough opens of files warpd keeps a local copy of
 *        ({@code --passthrough on}; {@code off}, the default): see docs/cache.md, "Passthrough"
 */
public record DaemonConfig(Path mountPoint, String remote, Optional<String> endpoint, Path cacheDir,
                           long cacheSizeBytes, Path socket, CacheMode mode, boolean allowOther, Duration pointerTtl,
                           Optional<InetSocketAddress> metricsListen, List<MirrorSpec> mirrors, Duration mirrorTimeout,
                           boolean passthrough) {
    /** Option names, which are also the config file's keys. */
    public static final String MOUNT = "mount";
    public static final String REMOTE = "remote";
    public static final String ENDPOINT = "endpoint";
    public static final String CACHE_DIR = "cache-dir";
    public static final String CACHE_SIZE = "cache-size";
    public static final String SOCKET = "socket";
    public static final String MODE = "mode";
    public static final String ALLOW_OTHER = "allow-other";
    public static final String POINTER_TTL = "pointer-ttl";
    public static final String METRICS_LISTEN = "metrics-listen";
    public static final String MIRROR = "mirror";
    public static final String MIRROR_TIMEOUT = "mirror-timeout";
    /**
     * The longest --mirror-timeout: a read's deadline is 60 s and a mirror is asked only while its
     * timeout and the store's 20 s are left, so a longer one would never be asked.
     */
    static final Duration MAX_MIRROR_TIMEOUT = Duration.ofSeconds(30);
    public static final String PASSTHROUGH = "passthrough";
    /**
     * The control socket's groups ({@code --socket-group}, {@code --control-group}): read by
     * {@link #accessGroup}, not part of the record. Audit 37: the config file refused them, and
     * the installed unit runs {@code warpd --config} alone.
     */
    public static final String SOCKET_GROUP = "socket-group";
    public static final String CONTROL_GROUP = "control-group";

    public static final long DEFAULT_CACHE_SIZE_GB = 100;
    /**
     * 30 s: re-checking a pointer is one conditional GET, so a mount with a link in use costs 2
     * requests a minute, and 1,000 nodes on one bucket about 2,000 (DESIGN section 12); a
     * publish through this warpd shows at once, one made elsewhere within 30 s ({@code warpctl
     * refresh} to see it now).
     */
    public static final Duration DEFAULT_POINTER_TTL = Duration.ofSeconds(30);

    public DaemonConfig {
        Objects.requireNonNull(mountPoint, "mountPoint");
        Objects.requireNonNull(remote, "remote");
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(cacheDir, "cacheDir");
        Objects.requireNonNull(socket, "socket");
        Objects.requireNonNull(mode, "mode");
        if (cacheSizeBytes <= 0) {
            throw new ConfigException("cache size must be positive, was " + cacheSizeBytes,
                    "Pass --cache-size like 200GB.");
        }
        Objects.requireNonNull(pointerTtl, "pointerTtl");
        if (pointerTtl.isNegative() || pointerTtl.isZero()) {
            throw new ConfigException("pointer TTL must be positive, was " + pointerTtl, "Pass --pointer-ttl like 30s.");
        }
        Objects.requireNonNull(metricsListen, "metricsListen");
        mirrors = List.copyOf(mirrors);
        Objects.requireNonNull(mirrorTimeout, "mirrorTimeout");
        if (mirrorTimeout.isNegative() || mirrorTimeout.isZero() || mirrorTimeout.compareTo(MAX_MIRROR_TIMEOUT) > 0) {
            throw new ConfigException("--mirror-timeout must be more than 0 and at most "
                    + MAX_MIRROR_TIMEOUT.toSeconds() + "s (a read has 60 s, and the store keeps 20 s of them), was "
                    + mirrorTimeout.toString().substring(2).toLowerCase(java.util.Locale.ROOT),
                    "Pass --mirror-timeout like 2s or 500ms: it bounds a mirror's silence, not a whole answer.");
        }
    }

    /** Settings without mirrors. */
    public DaemonConfig(Path mountPoint, String remote, Optional<String> endpoint, Path cacheDir, long cacheSizeBytes,
                        Path socket, CacheMode mode, boolean allowOther, Duration pointerTtl,
                        Optional<InetSocketAddress> metricsListen) {
        this(mountPoint, remote, endpoint, cacheDir, cacheSizeBytes, socket, mode, allowOther, pointerTtl, metricsListen,
                List.of(), MirrorSpec.DEFAULT_TIMEOUT, false);
    }

    /** Settings without a metrics endpoint. */
    public DaemonConfig(Path mountPoint, String remote, Optional<String> endpoint, Path cacheDir, long cacheSizeBytes,
                        Path socket, CacheMode mode, boolean allowOther, Duration pointerTtl) {
        this(mountPoint, remote, endpoint, cacheDir, cacheSizeBytes, socket, mode, allowOther, pointerTtl,
                Optional.empty());
    }

    /** Settings with the default pointer TTL. */
    public DaemonConfig(Path mountPoint, String remote, Optional<String> endpoint, Path cacheDir, long cacheSizeBytes,
                        Path socket, CacheMode mode, boolean allowOther) {
        this(mountPoint, remote, endpoint, cacheDir, cacheSizeBytes, socket, mode, allowOther, DEFAULT_POINTER_TTL);
    }

    /**
     * Merges the sources.
     *
     * @param cli options given on the command line (by option name; absent = not given)
     * @param file the config file's entries (empty if none)
     * @param env the environment
     * @param home the user's home directory (for the default cache dir)
     * @param uid the daemon's user id (for the default control socket, shared with warpctl)
     * @throws ConfigException naming a missing or invalid setting and how to give it
     */
    public static DaemonConfig resolve(Map<String, String> cli, Properties file, Map<String, String> env, Path home, int uid) {
        Map<String, String> fromEnv = new LinkedHashMap<>();
        putIfSet(fromEnv, MOUNT, env.get("WARP_MOUNT"));
        putIfSet(fromEnv, REMOTE, env.get("WARP_REMOTE"));
        putIfSet(fromEnv, ENDPOINT, env.get("WARP_S3_ENDPOINT"));
        putIfSet(fromEnv, CACHE_DIR, env.get("WARP_CACHE_DIR"));
        String gb = env.get("WARP_CACHE_SIZE_GB");
        if (gb != null && !gb.isBlank()) {
            if (!gb.trim().matches("[0-9]+(\\.[0-9]+)?")) {
                // Said by name: it was reported as "'20MBGB' is not a size" (audit 31).
                throw new ConfigException("WARP_CACHE_SIZE_GB=" + gb + " is not a number of GB",
                        "Set it to a plain number of gigabytes (WARP_CACHE_SIZE_GB=20), or pass --cache-size 20MB.");
            }
            fromEnv.put(CACHE_SIZE, gb.trim() + "GB");
        }
        putIfSet(fromEnv, MODE, env.get("WARP_MODE"));
        putIfSet(fromEnv, SOCKET, env.get("WARP_SOCKET"));
        putIfSet(fromEnv, POINTER_TTL, env.get("WARP_POINTER_TTL"));
        putIfSet(fromEnv, METRICS_LISTEN, env.get("WARP_METRICS_LISTEN"));
        putIfSet(fromEnv, MIRROR, env.get("WARP_MIRRORS"));
        putIfSet(fromEnv, MIRROR_TIMEOUT, env.get("WARP_MIRROR_TIMEOUT"));
        putIfSet(fromEnv, PASSTHROUGH, env.get("WARP_PASSTHROUGH"));

        Map<String, String> merged = new LinkedHashMap<>(fromEnv);
        for (String key : file.stringPropertyNames()) {
            if (!knownKey(key)) {
                throw new ConfigException("unknown key '" + key + "' in the config file",
                        "Use the option names as keys: mount, remote, endpoint, cache-dir, cache-size, socket, socket-group,"
                                + " control-group, mode, allow-other, pointer-ttl, metrics-listen, mirror, mirror-timeout,"
                                + " passthrough.");
            }
            String value = unquoted(file.getProperty(key));
            if (key.equals(MIRROR) && value.isBlank()) {
                // As an empty --mirror: a template's mirror = "${CACHE_URL}" left empty read from the store, silently (audit 28).
                throw new ConfigException("the config file's mirror is empty",
                        "Give the mirror's URL, or remove the line for no mirror.");
            }
            putIfSet(merged, key, value);
        }
        cli.forEach((k, v) -> putIfSet(merged, k, v));

        String mount = merged.get(MOUNT);
        if (mount == null) {
            throw new ConfigException("no mount point given", "Pass --mount DIR (e.g. --mount /warp).");
        }
        String remote = merged.get(REMOTE);
        if (remote == null) {
            throw new ConfigException("no remote store given",
                    "Pass --remote s3://bucket/prefix (or file:///dir), or set WARP_REMOTE.");
        }
        Path cacheDir = Path.of(merged.getOrDefault(CACHE_DIR, home.resolve(".cache/warpdata").toString()));
        long cacheSize;
        try {
            cacheSize = ByteSize.parse(merged.getOrDefault(CACHE_SIZE, DEFAULT_CACHE_SIZE_GB + "GB"));
        } catch (IllegalArgumentException e) {
            throw new ConfigException("bad cache size: " + e.getMessage(), "Pass --cache-size like 500MB, 200GB or 1TiB.");
        }
        CacheMode mode;
        try {
            mode = CacheMode.parse(merged.getOrDefault(MODE, "auto"));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage(), "Pass --mode auto, remote, hybrid or local.");
        }
        Path socket = merged.containsKey(SOCKET) ? Path.of(merged.get(SOCKET)) : SocketPaths.defaultSocket(env, uid);
        boolean allowOther = Boolean.parseBoolean(merged.getOrDefault(ALLOW_OTHER, "false"));
        Duration pointerTtl = merged.containsKey(POINTER_TTL) ? duration(merged.get(POINTER_TTL)) : DEFAULT_POINTER_TTL;
        Optional<InetSocketAddress> metrics = Optional.ofNullable(merged.get(METRICS_LISTEN)).map(DaemonConfig::listenAddress);
        List<MirrorSpec> mirrors = merged.containsKey(MIRROR) ? mirrors(merged.get(MIRROR), remote, env) : List.of();
        Duration mirrorTimeout;
        try {
            mirrorTimeout = merged.containsKey(MIRROR_TIMEOUT) ? duration(merged.get(MIRROR_TIMEOUT)) : MirrorSpec.DEFAULT_TIMEOUT;
        } catch (ConfigException e) {
            // The general hint names 2m and 1h, which this option refuses (at most 30 s).
            throw new ConfigException("bad --mirror-timeout: " + e.getMessage(), "Pass --mirror-timeout like 2s or 500ms (at most "
                    + MAX_MIRROR_TIMEOUT.toSeconds() + "s).");
        }
        boolean passthrough = switch (merged.getOrDefault(PASSTHROUGH, "off").trim().toLowerCase(java.util.Locale.ROOT)) {
            case "on", "true" -> true;
            case "off", "false" -> false;
            default -> throw new ConfigException("bad passthrough setting '" + merged.get(PASSTHROUGH) + "'",
                    "Pass --passthrough on or off (the default).");
        };
        return new DaemonConfig(Path.of(mount).toAbsolutePath().normalize(), remote,
                Optional.ofNullable(withoutCredentials(merged.get(ENDPOINT))), cacheDir.toAbsolutePath().normalize(), cacheSize,
                socket.toAbsolutePath().normalize(), mode, allowOther, pointerTtl, metrics, mirrors, mirrorTimeout,
                passthrough);
    }

    /**
     * Parses a list of mirrors separated by commas or white space ({@code --mirror} given several
     * times arrives joined by spaces), in order.
     *
     * @throws ConfigException naming the bad entry and the forms warpd takes
     */
    static List<MirrorSpec> mirrors(String text, String remote, Map<String, String> env) {
        List<MirrorSpec> out = new ArrayList<>();
        for (String entry : text.trim().split("[,\\s]+")) {
            if (entry.isEmpty()) {
                continue;
            }
            MirrorSpec spec;
            try {
                spec = MirrorSpec.parse(entry, env);
            } catch (IllegalArgumentException e) {
                throw new ConfigException("bad mirror '" + redact(entry) + "': " + e.getMessage(),
                        "Pass --mirror http(s)://HOST[:PORT]/BASE (an HTTP cache serving the store's keys under BASE) or"
                                + " s3://BUCKET/PREFIX[?endpoint=URL] (an S3-compatible tier); see docs/fleet.md.");
            }
            if (spec instanceof MirrorSpec.S3 s3 && s3.uri().equals(remote.replaceAll("/+$", ""))) {
                throw new ConfigException("the mirror " + s3.uri() + " is the store itself",
                        "Give the S3 tier its own bucket or prefix, e.g. --mirror s3://BUCKET/warp-tier.");
            }
            if (out.stream().anyMatch(m -> m.describe().equals(spec.describe()))) {
                throw new ConfigException("the mirror " + spec.describe() + " is given twice", "Give each mirror once, in the order to try them.");
            }
            out.add(spec);
        }
        return out;
    }

    /** A mirror entry for an error message: without user info or query, which may hold a secret. */
    private static String redact(String entry) {
        // A query may hold a signature, user info a password; a fragment is shown as one.
        return entry.replaceAll("//[^/@?#]*@", "//***@").replaceAll("\\?[^#]*", "?***").replaceAll("#.*$", "#***");
    }

    /**
     * {@code HOST:PORT}, {@code [IPv6]:PORT} or a bare {@code PORT}, which means loopback
     * ({@code 127.0.0.1}): metrics name datasets and paths, so they are not served to the network
     * unless asked for. Port 0 picks a free port (logged at start).
     *
     * @throws ConfigException if the text is not such an address or the host does not resolve
     */
    static InetSocketAddress listenAddress(String text) {
        String t = text.trim();
        String host = "127.0.0.1";
        String port = t;
        int colon = t.lastIndexOf(':');
        if (colon >= 0) {
            host = t.substring(0, colon);
            port = t.substring(colon + 1);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
        }
        int p;
        try {
            p = Integer.parseInt(port);
        } catch (NumberFormatException e) {
            p = -1;
        }
        if (p < 0 || p > 65535 || host.isEmpty()) {
            throw new ConfigException("bad metrics address '" + text + "'",
                    "Pass --metrics-listen PORT (loopback) or HOST:PORT, e.g. --metrics-listen 127.0.0.1:9567.");
        }
        InetSocketAddress address = new InetSocketAddress(host, p);
        if (address.isUnresolved()) {
            throw new ConfigException("cannot resolve the metrics host '" + host + "'",
                    "Pass an IP address or a resolvable name to --metrics-listen, e.g. 127.0.0.1:9567.");
        }
        return address;
    }

    /** {@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h}, or plain seconds. */
    static Duration duration(String text) {
        String t = text.trim().toLowerCase(java.util.Locale.ROOT);
        try {
            if (t.endsWith("ms")) {
                return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2).trim()));
            }
            char unit = t.isEmpty() ? ' ' : t.charAt(t.length() - 1);
            String n = Character.isDigit(unit) ? t : t.substring(0, t.length() - 1).trim();
            long v = Long.parseLong(n);
            return switch (unit) {
                case 's' -> Duration.ofSeconds(v);
                case 'm' -> Duration.ofMinutes(v);
                case 'h' -> Duration.ofHours(v);
                default -> {
                    if (!Character.isDigit(unit)) {
                        throw new NumberFormatException(text);
                    }
                    yield Duration.ofSeconds(v);
                }
            };
        } catch (NumberFormatException e) {
            throw new ConfigException("bad duration '" + text + "'", "Give a duration like 500ms, 30s, 2m or 1h.");
        }
    }

    /**
     * An endpoint URL without the user name and password in it, which the S3 client never uses
     * and {@code warpctl status} showed to everyone who may reach the socket (audit 37). Dropped
     * with a warning rather than refused: a config that worked before keeps starting (the review).
     */
    static String withoutCredentials(String endpoint) {
        if (endpoint == null) {
            return null;
        }
        String bare = endpoint.trim().replaceFirst("^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#@]*@", "$1");
        if (!bare.equals(endpoint.trim())) {
            org.slf4j.LoggerFactory.getLogger(DaemonConfig.class).warn("The endpoint {} carried a user name or password,"
                    + " which the S3 client never uses: dropped. Remove it from the URL and give the store's key pair as"
                    + " AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (in /etc/warp/warpd.env for the installed service).",
                    bare);
        }
        return bare;
    }

    /**
     * A control socket group ({@link #SOCKET_GROUP} or {@link #CONTROL_GROUP}): the command line's,
     * else the config file's, else {@code WARP_SOCKET_GROUP} / {@code WARP_CONTROL_GROUP}, as the
     * other settings are merged (an empty value is none).
     */
    public static Optional<String> accessGroup(String key, String cli, Properties file, Map<String, String> env) {
        String envName = key.equals(SOCKET_GROUP) ? "WARP_SOCKET_GROUP" : "WARP_CONTROL_GROUP";
        for (String v : new String[] {cli, file.getProperty(key) == null ? null : unquoted(file.getProperty(key)),
                env.get(envName)}) {
            if (v != null && !v.isBlank()) {
                return Optional.of(v.trim());
            }
        }
        return Optional.empty();
    }

    private static boolean knownKey(String key) {
        return switch (key) {
            case MOUNT, REMOTE, ENDPOINT, CACHE_DIR, CACHE_SIZE, SOCKET, MODE, ALLOW_OTHER, POINTER_TTL, METRICS_LISTEN, MIRROR,
                 MIRROR_TIMEOUT, PASSTHROUGH, SOCKET_GROUP, CONTROL_GROUP -> true;
            default -> false;
        };
    }

    /**
     * A config file's value without one pair of quotes around it: {@code remote = "s3://b/warp"},
     * as shell, systemd and YAML files quote, was read with the quotes ("unsupported scheme
     * '\"s3'", audit 27). No option's value starts and ends with a quote.
     */
    static String unquoted(String value) {
        if (value == null) {
            return null;
        }
        String v = value.trim();
        if (v.length() >= 2 && (v.charAt(0) == '"' || v.charAt(0) == '\'') && v.charAt(v.length() - 1) == v.charAt(0)) {
            return v.substring(1, v.length() - 1);
        }
        return value;
    }

    private static void putIfSet(Map<String, String> map, String key, String value) {
        if (value != null && !value.isBlank()) {
            map.put(key, value.trim());
        }
    }

    /**
     * Where warpd writes its counters every second: {@code <cache dir>/stats.json}, or nowhere in
     * {@code --mode remote}, which keeps nothing on disk (and so does not overwrite the file of
     * another warpd that uses the same cache directory); its counters stay on the control socket
     * ({@code warpctl status --watch --json}) and on {@code --metrics-listen}.
     */
    public Optional<Path> statsFile() {
        return mode.usesDisk() ? Optional.of(cacheDir.resolve("stats.json")) : Optional.empty();
    }
}
