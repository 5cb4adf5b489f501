package io.warpdata.daemon.control.ops;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A range of shard positions as users write it, Python slice style: {@code 0:50} (0 to 49),
 * {@code 10:} (10 to the end), {@code :5}, or a single position {@code 7}.
 */
public record ShardRange(int from, int toExclusive) {
    public static final ShardRange ALL = new ShardRange(0, Integer.MAX_VALUE);
    private static final Pattern RANGE = Pattern.compile("^\\s*(\\d*)\\s*(:?)\\s*(\\d*)\\s*$");

    public ShardRange {
        if (from < 0 || toExclusive < from) {
            throw new IllegalArgumentException("bad shard range " + from + ":" + toExclusive);
        }
    }

    /**
     * @throws IllegalArgumentException naming the text if it is not a range
     */
    public static ShardRange parse(String text) {
        Matcher m = RANGE.matcher(text);
        if (!m.matches() || (m.group(1).isEmpty() && m.group(3).isEmpty())
                || (m.group(2).isEmpty() && m.group(1).isEmpty())) {
            throw new IllegalArgumentException("'" + text + "' is not a shard range (examples: 0:50, 10:, :5, 7)");
        }
        int from = m.group(1).isEmpty() ? 0 : Integer.parseInt(m.group(1));
        if (m.group(2).isEmpty()) {
            return new ShardRange(from, from + 1);
        }
        int to = m.group(3).isEmpty() ? Integer.MAX_VALUE : Integer.parseInt(m.group(3));
        if (to < from) {
            throw new IllegalArgumentException("shard range '" + text + "' ends before it starts");
        }
        return new ShardRange(from, to);
    }

    public <T> List<T> select(List<T> shards) {
        int to = Math.min(toExclusive, shards.size());
        return from >= to ? List.of() : shards.subList(from, to);
    }
}
