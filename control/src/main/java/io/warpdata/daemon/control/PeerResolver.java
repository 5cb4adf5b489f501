package io.warpdata.daemon.control;

import java.io.IOException;

import java.nio.channels.SocketChannel;
import java.util.Optional;

import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;

/**
 * Turns a connection's {@code SO_PEERCRED} credentials into a {@link Peer}. The JDK hands the
 * uid and gid over as names (or as the number when the name is unknown), so they are mapped
 * back to numbers, and the supplementary groups looked up, in the {@link UserDatabase}.
 */
public final class PeerResolver {
    private final UserDatabase users;

    public PeerResolver(UserDatabase users) {
        this.users = users;
    }

    /**
     * @throws ControlException if the credentials cannot be read or mapped to numbers
     */
    public Peer resolve(SocketChannel channel) {
        UnixDomainPrincipal principal;
        try {
            principal = channel.getOption(ExtendedSocketOptions.SO_PEERCRED);
        } catch (IOException | UnsupportedOperationException e) {
            throw new ControlException(ControlException.INTERNAL, "cannot read the peer's credentials (SO_PEERCRED): " + e,
                    "run warpd on Linux with a JDK that supports SO_PEERCRED on Unix domain sockets", e);
        }
        return resolve(principal.user().getName(), principal.group().getName());
    }

    /** Resolves a user and group name (or number) as SO_PEERCRED reports them. */
    public Peer resolve(String user, String group) {
        int uid = number(user).or(() -> users.uid(user)).orElseThrow(() -> unknown("user", user));
        int gid = number(group).or(() -> users.gid(group)).orElseThrow(() -> unknown("group", group));
        String name = users.userName(uid).orElse(user);
        return new Peer(uid, gid, name, users.groupsOf(name, gid));
    }

    private static ControlException unknown(String what, String name) {
        return new ControlException(ControlException.INTERNAL, "peer " + what + " '" + name + "' is not in the user database",
                "check /etc/passwd and /etc/group");
    }

    private static Optional<Integer> number(String s) {
        if (s.isEmpty() || !s.chars().allMatch(Character::isDigit)) {
            return Optional.empty();
        }
        return Optional.of(Integer.parseInt(s));
    }
}
