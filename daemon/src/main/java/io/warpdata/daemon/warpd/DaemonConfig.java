package io.warpdata.daemon.warpd;

import io.warpdata.blobcache.cache.CacheMode;
import io.warpdata.daemon.ByteSize;
import io.warpdata.daemon.control.SocketPaths;

import java.nio.file.Path;
import java.util.LinkedHashMap;
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
 */
public record DaemonConfig(Path mountPoint, String remote, Optional<String> endpoint, Path cacheDir,
                           long cacheSizeBytes, Path socket, CacheMode mode, boolean allowOther) {
    /** Option names, which are also the config file's keys. */
    public static final String MOUNT = "mount";
    public static final String REMOTE = "remote";
    public static final String ENDPOINT = "endpoint";
    public static final String CACHE_DIR = "cache-dir";
    public static final String CACHE_SIZE = "cache-size";
    public static final String SOCKET = "socket";
    public static final String MODE = "mode";
    public static final String ALLOW_OTHER = "allow-other";

    public static final long DEFAULT_CACHE_SIZE_GB = 100;

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
            fromEnv.put(CACHE_SIZE, gb.trim() + "GB");
        }
        putIfSet(fromEnv, MODE, env.get("WARP_MODE"));
        putIfSet(fromEnv, SOCKET, env.get("WARP_SOCKET"));

        Map<String, String> merged = new LinkedHashMap<>(fromEnv);
        for (String key : file.stringPropertyNames()) {
            if (!knownKey(key)) {
                throw new ConfigException("unknown key '" + key + "' in the config file",
                        "Use the option names as keys: mount, remote, endpoint, cache-dir, cache-size, socket, mode, allow-other.");
            }
            putIfSet(merged, key, file.getProperty(key));
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
        return new DaemonConfig(Path.of(mount).toAbsolutePath().normalize(), remote,
                Optional.ofNullable(merged.get(ENDPOINT)), cacheDir.toAbsolutePath().normalize(), cacheSize,
                socket.toAbsolutePath().normalize(), mode, allowOther);
    }

    private static boolean knownKey(String key) {
        return switch (key) {
            case MOUNT, REMOTE, ENDPOINT, CACHE_DIR, CACHE_SIZE, SOCKET, MODE, ALLOW_OTHER -> true;
            default -> false;
        };
    }

    private static void putIfSet(Map<String, String> map, String key, String value) {
        if (value != null && !value.isBlank()) {
            map.put(key, value.trim());
        }
    }

    /** Where warpd writes its counters every second. */
    public Path statsFile() {
        return cacheDir.resolve("stats.json");
    }
}
