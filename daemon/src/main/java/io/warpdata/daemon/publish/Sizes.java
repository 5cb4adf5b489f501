package io.warpdata.daemon.publish;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Byte sizes as users write and read them: {@code 500MB}, {@code 200GB}, {@code 1TiB}. */
public final class Sizes {
    private static final Pattern SIZE = Pattern.compile("^\\s*(\\d+(?:\\.\\d+)?)\\s*([kmgtp]?)(i?)b?\\s*$",
            Pattern.CASE_INSENSITIVE);

    private Sizes() {
    }

    /**
     * Parses a size; decimal units (KB = 1000) and binary ones (KiB = 1024), no unit = bytes.
     *
     * @throws InvalidInputException if it is not a size
     */
    public static long parse(String text) {
        Matcher m = text == null ? null : SIZE.matcher(text);
        if (m == null || !m.matches()) {
            throw new InvalidInputException("'" + text + "' is not a size",
                    "Write sizes like 64MiB, 500MB, 200GB or 1TiB.");
        }
        double n = Double.parseDouble(m.group(1));
        int power = "kmgtp".indexOf(m.group(2).toLowerCase(Locale.ROOT)) + 1;
        double unit = Math.pow(m.group(3).isEmpty() ? 1000 : 1024, power);
        return (long) (n * unit);
    }

    /** Human-readable binary size, e.g. {@code 12.3 MiB}. */
    public static String format(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB"};
        double v = bytes;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }
}
