package io.warpdata.daemon.control;

import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.Optional;

/**
 * warpd's control-socket flags, as a picocli mixin ({@code @Mixin ControlSettings control}):
 * {@code --socket}, {@code --socket-group} (who may connect) and {@code --control-group} (who may
 * run privileged operations). Builds the policy and starts the server.
 */
public final class ControlSettings {
    @Option(names = "--socket", paramLabel = "PATH",
            description = "control socket (default: $WARP_SOCKET, /run/warp/warpd.sock as root, else $XDG_RUNTIME_DIR/warp/warpd.sock)")
    Path socket;

    @Option(names = "--socket-group", paramLabel = "GROUP",
            description = "group that may connect to the control socket (mode 0660); default: only the daemon's user and root")
    String socketGroup;

    @Option(names = "--control-group", paramLabel = "GROUP",
            description = "group whose members may run gc and cache verify through the daemon (publish through it is for its own user and root only)")
    String controlGroup;

    public ControlSettings() {
    }

    public ControlSettings(Path socket, String socketGroup, String controlGroup) {
        this.socket = socket;
        this.socketGroup = socketGroup;
        this.controlGroup = controlGroup;
    }

    public Path socket() {
        return socket != null ? socket : SocketPaths.defaultSocket();
    }

    /**
     * The policy for a daemon running as this process's user.
     *
     * @throws ControlException if the control group does not exist
     */
    public AccessPolicy policy(UserDatabase users) {
        int uid = ProcessIdentity.uid();
        String name = users.userName(uid).orElse(Integer.toString(uid));
        return new AccessPolicy(uid, name, Optional.ofNullable(controlGroup).map(g -> group(users, g, "--control-group")));
    }

    /**
     * Refuses, before anything is mounted, what {@link #start} would: a group that does not
     * exist, an unsafe socket directory or socket path, a socket another daemon serves (audit 37:
     * warpd mounted, then unmounted with the error).
     *
     * @throws ControlException naming what is wrong
     */
    public void check() {
        UserDatabase users = EtcUserDatabase.system();
        Optional.ofNullable(socketGroup).ifPresent(g -> {
            int gid = group(users, g, "--socket-group").gid();
            // A process that is not root may give its files only to its own groups: the unit runs
            // warpd as user warp, and another group failed only at the socket, after the mount (the review).
            java.util.Set<Integer> mine = ownGroups();
            if (ProcessIdentity.uid() != 0 && !mine.isEmpty() && !mine.contains(gid)) {
                int uid = ProcessIdentity.uid();
                String user = users.userName(uid).orElse(Integer.toString(uid));
                throw new ControlException(ControlException.BAD_REQUEST, "--socket-group " + g + ": warpd runs as " + user
                        + " (uid " + uid + "), which is not in group " + g + ", so it cannot give the socket to it",
                        "add " + user + " to the group (sudo usermod -aG " + g + " " + user + ") and start warpd again, or"
                                + " name one of its own groups (id " + user + ")");
            }
        });
        Optional.ofNullable(controlGroup).ifPresent(g -> group(users, g, "--control-group"));
        SocketFile.requireNotServed(socket());
    }

    /**
     * Binds the socket and starts serving {@code operations}.
     *
     * @throws ControlException if a group is unknown, the socket is unsafe, or another daemon serves it
     */
    public ControlServer start(OperationRegistry operations) {
        UserDatabase users = EtcUserDatabase.system();
        Optional<Integer> gid = Optional.ofNullable(socketGroup).map(g -> group(users, g, "--socket-group").gid());
        return ControlServer.start(new ControlServer.Config(socket(), gid), operations, policy(users), new PeerResolver(users));
    }

    /** This process's groups: its gids and supplementary groups, from /proc/self/status (empty if unreadable). */
    static java.util.Set<Integer> ownGroups() {
        java.util.Set<Integer> out = new java.util.HashSet<>();
        try {
            for (String line : java.nio.file.Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Gid:") || line.startsWith("Groups:")) {
                    for (String f : line.substring(line.indexOf(':') + 1).trim().split("\\s+")) {
                        if (!f.isEmpty()) {
                            out.add(Integer.parseInt(f));
                        }
                    }
                }
            }
        } catch (java.io.IOException | NumberFormatException e) {
            // Unknown: the socket's own checks say what goes wrong.
        }
        return out;
    }

    private static AccessPolicy.Group group(UserDatabase users, String name, String flag) {
        return users.gid(name).map(gid -> new AccessPolicy.Group(name, gid))
                .orElseThrow(() -> new ControlException(ControlException.BAD_REQUEST, flag + " " + name + ": no such group",
                        "create it (sudo groupadd " + name + ") or name an existing group"));
    }
}
