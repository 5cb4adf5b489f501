package io.warpdata.daemon.control;

import java.nio.file.Path;
import java.util.Map;

/**
 * Where the control socket lives unless {@code --socket} says otherwise: {@code $WARP_SOCKET};
 * else {@code /run/warp/warpd.sock} for root; else {@code $XDG_RUNTIME_DIR/warp/warpd.sock};
 * else {@code /tmp/warp-<uid>/warpd.sock} (the server refuses that directory if someone else
 * owns it).
 */
public final class SocketPaths {
    public static final Path ROOT_SOCKET = Path.of("/run/warp/warpd.sock");

    private SocketPaths() {
    }

    /** The default socket for a process with effective uid {@code uid} and environment {@code env}. */
    public static Path defaultSocket(Map<String, String> env, int uid) {
        String explicit = env.get("WARP_SOCKET");
        if (explicit != null && !explicit.isBlank()) {
            return Path.of(explicit);
        }
        if (uid == 0) {
            return ROOT_SOCKET;
        }
        String runtime = env.get("XDG_RUNTIME_DIR");
        if (runtime != null && !runtime.isBlank()) {
            return Path.of(runtime, "warp", "warpd.sock");
        }
        return Path.of("/tmp", "warp-" + uid, "warpd.sock");
    }

    /**
     * The socket a client (warpctl, and the Python package alike) talks to: as
     * {@link #defaultSocket}, except that a user other than root whose own default socket does not
     * exist talks to the installed service's, {@link #ROOT_SOCKET}, when that one exists: being in
     * the {@code warp} group is then all it takes (README, "Install"). {@code WARP_SOCKET} still wins.
     */
    public static Path clientSocket(Map<String, String> env, int uid) {
        return clientSocket(env, uid, ROOT_SOCKET);
    }

    /** As {@link #clientSocket(Map, int)}, with the service's socket at {@code serviceSocket} (tests). */
    static Path clientSocket(Map<String, String> env, int uid, Path serviceSocket) {
        Path own = defaultSocket(env, uid);
        String explicit = env.get("WARP_SOCKET");
        if ((explicit != null && !explicit.isBlank()) || uid == 0 || java.nio.file.Files.exists(own)) {
            return own;
        }
        return java.nio.file.Files.exists(serviceSocket) ? serviceSocket : own;
    }

    /** The default for this process. */
    public static Path defaultSocket() {
        return defaultSocket(System.getenv(), ProcessIdentity.uid());
    }
}
