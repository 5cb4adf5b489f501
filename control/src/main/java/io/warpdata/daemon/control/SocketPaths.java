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
        if ((explicit != null && !explicit.isBlank()) || uid == 0) {
            return own;
        }
        if (java.nio.file.Files.exists(own)) {
            requireOwnTmpDirectory(own, uid);
            return own;
        }
        return java.nio.file.Files.exists(serviceSocket) || unsearchable(serviceSocket.getParent()) ? serviceSocket : own;
    }

    /**
     * Whether {@code dir} exists but this user may not look inside it: the service's socket may
     * be there, and connecting to it says "permission denied" with the group to join, where this
     * user's own absent socket said "start the daemon" (audit 37: /run/warp is 0750 warp:warp).
     */
    static boolean unsearchable(Path dir) {
        return dir != null && java.nio.file.Files.isDirectory(dir) && !java.nio.file.Files.isExecutable(dir);
    }

    /**
     * The {@code /tmp/warp-<uid>} fallback is where anyone may create a folder first: a client
     * talks to a socket there only if the folder is its user's (or root's) and nobody else may
     * write it, as warpd itself demands. A fake server planted there was asked for status and
     * wrote its answer, terminal escapes included, to the user's terminal.
     *
     * @throws ControlException {@link ControlException#SOCKET_UNSAFE} otherwise
     */
    static void requireOwnTmpDirectory(Path socket, int uid) {
        Path dir = socket.getParent();
        if (dir == null || !dir.startsWith(Path.of("/tmp"))) {
            return;
        }
        try {
            int owner = ((Number) java.nio.file.Files.getAttribute(dir, "unix:uid",
                    java.nio.file.LinkOption.NOFOLLOW_LINKS)).intValue();
            int mode = ((Number) java.nio.file.Files.getAttribute(dir, "unix:mode",
                    java.nio.file.LinkOption.NOFOLLOW_LINKS)).intValue();
            boolean link = java.nio.file.Files.isSymbolicLink(dir);
            if (link || (owner != uid && owner != 0) || (mode & 0022) != 0) {
                throw new ControlException(ControlException.SOCKET_UNSAFE, "the socket folder " + dir
                        + (link ? " is a symlink" : owner != uid && owner != 0 ? " belongs to uid " + owner
                        : " can be written by others (mode " + Integer.toOctalString(mode & 07777) + ")")
                        + ": another user could pose as warpd there, so warpctl does not talk to it",
                        "remove " + dir + " if you did not make it, or set XDG_RUNTIME_DIR (a folder of yours)"
                                + " or --socket / WARP_SOCKET to warpd's real socket");
            }
        } catch (java.io.IOException e) {
            // gone meanwhile: connecting will say there is no warpd
        }
    }

    /** The default for this process. */
    public static Path defaultSocket() {
        return defaultSocket(System.getenv(), ProcessIdentity.uid());
    }
}
