package io.warpdata.daemon.control;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Sizes as users write them: {@code 500MB}, {@code 200GB}, {@code 1TiB}, {@code 1048576}. KB/MB/GB/TB are powers of 1000, KiB/MiB/GiB/TiB of 1024. */
public final class ByteSizes {
    private static final Pattern SIZE = Pattern.compile("^\\s*(\\d+(?:\\.\\d+)?)\\s*([kmgtp]?)(i?)(b?)\\s*$", Pattern.CASE_INSENSITIVE);

    private ByteSizes() {
    }

    /**
     * @throws IllegalArgumentException naming the text if it is not a size
     */
    public static long parse(String text) {
        Matcher m = SIZE.matcher(text == null ? "" : text);
        if (!m.matches() || (m.group(2).isEmpty() && !m.group(3).isEmpty())) {
            throw new IllegalArgumentException("'" + text + "' is not a size (examples: 500MB, 200GB, 1TiB, 1048576)");
        }
        int power = m.group(2).isEmpty() ? 0 : "kmgtp".indexOf(m.group(2).toLowerCase(Locale.ROOT)) + 1;
        double base = m.group(3).isEmpty() ? 1000 : 1024;
        double bytes = Double.parseDouble(m.group(1)) * Math.pow(base, power);
        if (bytes > Long.MAX_VALUE) {
            throw new IllegalArgumentException("'" + text + "' is too large");
        }
        return (long) bytes;
    }

    /** {@code 1.5 GB}-style, decimal units. */
    public static String format(long bytes) {
        String[] units = {"B", "KB", "MB", "GB", "TB", "PB"};
        double v = bytes;
        int u = 0;
        while (v >= 1000 && u < units.length - 1) {
            v /= 1000;
            u++;
        }
        return u == 0 ? bytes + " B" : String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }
}
