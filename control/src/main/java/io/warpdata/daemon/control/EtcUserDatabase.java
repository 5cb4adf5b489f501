package io.warpdata.daemon.control;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * {@link UserDatabase} over {@code /etc/passwd} and {@code /etc/group}, re-read on every call:
 * lookups happen once per connection, and re-reading picks up a user just added to the control
 * group without restarting the daemon. (NSS sources such as LDAP are not consulted; a peer
 * known only there is treated as having just its primary group.)
 */
public final class EtcUserDatabase implements UserDatabase {
    private final Path passwd;
    private final Path group;

    public EtcUserDatabase(Path passwd, Path group) {
        this.passwd = passwd;
        this.group = group;
    }

    public static EtcUserDatabase system() {
        return new EtcUserDatabase(Path.of("/etc/passwd"), Path.of("/etc/group"));
    }

    @Override
    public Optional<Integer> uid(String name) {
        return rows(passwd).stream().filter(r -> r[0].equals(name)).findFirst().map(r -> parse(r[2]));
    }

    @Override
    public Optional<String> userName(int uid) {
        return rows(passwd).stream().filter(r -> parse(r[2]) == uid).findFirst().map(r -> r[0]);
    }

    @Override
    public Optional<Integer> primaryGid(int uid) {
        return rows(passwd).stream().filter(r -> parse(r[2]) == uid).findFirst().map(r -> parse(r[3]));
    }

    @Override
    public Optional<Integer> gid(String name) {
        return rows(group).stream().filter(r -> r[0].equals(name)).findFirst().map(r -> parse(r[2]));
    }

    @Override
    public Optional<String> groupName(int gid) {
        return rows(group).stream().filter(r -> parse(r[2]) == gid).findFirst().map(r -> r[0]);
    }

    @Override
    public Set<Integer> groupsOf(String userName, int primaryGid) {
        Set<Integer> out = new HashSet<>();
        out.add(primaryGid);
        for (String[] r : rows(group)) {
            if (r.length > 3 && Arrays.asList(r[3].split(",")).contains(userName)) {
                out.add(parse(r[2]));
            }
        }
        return out;
    }

    private static int parse(String s) {
        try {
            return Integer.parseInt(s.trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static List<String[]> rows(Path file) {
        List<String[]> out = new ArrayList<>();
        try {
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                String[] r = line.split(":", -1);
                if (r.length >= 3) {
                    out.add(r);
                }
            }
        } catch (NoSuchFileException e) {
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
        return out;
    }
}
