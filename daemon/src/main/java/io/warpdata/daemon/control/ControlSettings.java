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
        Optional.ofNullable(socketGroup).ifPresent(g -> group(users, g, "--socket-group"));
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

    private static AccessPolicy.Group group(UserDatabase users, String name, String flag) {
        return users.gid(name).map(gid -> new AccessPolicy.Group(name, gid))
                .orElseThrow(() -> new ControlException(ControlException.BAD_REQUEST, flag + " " + name + ": no such group",
                        "create it (sudo groupadd " + name + ") or name an existing group"));
    }
}
