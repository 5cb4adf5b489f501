package io.warpdata.daemon.control;

import java.util.Set;

/**
 * Who is at the other end of a control connection, from {@code SO_PEERCRED}: the effective uid
 * and gid at connect time, the user's name, and every group the user belongs to (primary and
 * supplementary, resolved from the user database because the kernel does not pass them).
 */
public record Peer(int uid, int gid, String userName, Set<Integer> groups) {
    public Peer {
        if (uid < 0 || gid < 0) {
            throw new IllegalArgumentException("negative uid/gid " + uid + "/" + gid);
        }
        userName = userName == null || userName.isEmpty() ? Integer.toString(uid) : userName;
        groups = Set.copyOf(groups);
        if (!groups.contains(gid)) {
            throw new IllegalArgumentException("groups " + groups + " must contain the primary gid " + gid);
        }
    }

    public boolean isRoot() {
        return uid == 0;
    }

    /** For messages: {@code alice (uid 1000)}. */
    public String describe() {
        return userName.equals(Integer.toString(uid)) ? "uid " + uid : userName + " (uid " + uid + ")";
    }
}
