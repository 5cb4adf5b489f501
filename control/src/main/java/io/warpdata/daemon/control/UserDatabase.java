package io.warpdata.daemon.control;

import java.util.Optional;
import java.util.Set;

/** Users and groups by name and number, as {@code /etc/passwd} and {@code /etc/group} list them. */
public interface UserDatabase {

    /** The uid of user {@code name}, or empty if unknown. */
    Optional<Integer> uid(String name);

    /** The name of user {@code uid}, or empty if unknown. */
    Optional<String> userName(int uid);

    /** The primary gid of user {@code uid}, or empty if unknown. */
    Optional<Integer> primaryGid(int uid);

    /** The gid of group {@code name}, or empty if unknown. */
    Optional<Integer> gid(String name);

    /** The name of group {@code gid}, or empty if unknown. */
    Optional<String> groupName(int gid);

    /**
     * Every group {@code userName} is in: its primary group plus those listing it as a member.
     * Empty for an unknown user.
     */
    Set<Integer> groupsOf(String userName, int primaryGid);
}
