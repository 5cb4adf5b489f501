package io.warpdata.daemon.control;

import java.util.Optional;

/**
 * Who may run what over the control socket. Reaching the socket at all is governed by its file
 * mode (0660, owner and group); beyond that, {@link Access#OPEN} operations (status, stats,
 * info, warm, refresh) are for every peer, {@link Access#PRIVILEGED} ones (gc, verify, publish)
 * only for root, the daemon's own user, or members of the control group. Publish asks more: it
 * runs only for root and the daemon's own user (the daemon would read the caller's files with its
 * own rights), which {@code PublishOperation} checks, and warpctl publishes in its own process
 * for anyone else.
 */
public final class AccessPolicy {
    /** How much an operation needs. */
    public enum Access { OPEN, PRIVILEGED }

    /** A named group with its gid. */
    public record Group(String name, int gid) {
    }

    private final int daemonUid;
    private final String daemonUser;
    private final Optional<Group> controlGroup;

    public AccessPolicy(int daemonUid, String daemonUser, Optional<Group> controlGroup) {
        this.daemonUid = daemonUid;
        this.daemonUser = daemonUser;
        this.controlGroup = controlGroup;
    }

    /** True if {@code peer} may run privileged operations. */
    public boolean privileged(Peer peer) {
        return peer.isRoot() || peer.uid() == daemonUid
                || controlGroup.map(g -> peer.groups().contains(g.gid())).orElse(false);
    }

    /**
     * Allows or refuses {@code op} for {@code peer}.
     *
     * @throws ControlException of type {@link ControlException#ACCESS_DENIED}, saying who may and how
     */
    public void check(String op, Access access, Peer peer) {
        if (access == Access.OPEN || privileged(peer)) {
            return;
        }
        // "root, the daemon's user root" read oddly when warpd runs as root (audit 37).
        String who = (daemonUid == 0 ? "root" : "root, the daemon's user " + daemonUser)
                + controlGroup.map(g -> " or members of group " + g.name()).orElse("");
        String how = controlGroup
                .map(g -> "run it as root (sudo warpctl ...) or add yourself to group " + g.name()
                        + ": sudo usermod -aG " + g.name() + " " + peer.userName() + " (then log in again)")
                .orElse("run it as root (sudo warpctl ...)" + (daemonUid == 0 ? "" : " or as user " + daemonUser)
                        + ", or have warpd started with --control-group GROUP (control-group = GROUP in its config"
                        + " file) and join that group");
        throw new ControlException(ControlException.ACCESS_DENIED,
                peer.describe() + " may not run '" + op + "': only " + who + " may", how);
    }

    public Optional<Group> controlGroup() {
        return controlGroup;
    }
}
