package io.warpdata.daemon;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses sizes as users write them: {@code 500MB}, {@code 200GB}, {@code 1TiB}, {@code 1.5G},
 * {@code 4096}. SI units (KB, MB, GB, TB) are powers of 1000, IEC units (KiB, MiB, GiB, TiB)
 * and the bare letters (K, M, G, T) powers of 1024; a plain number is bytes. Case-insensitive.
 */
public final class ByteSize {
    private static final Pattern SIZE = Pattern.compile("^\\s*([0-9]+(?:\\.[0-9]+)?)\\s*([a-zA-Z]*)\\s*$");

    private ByteSize() {
    }

    /**
     * @return the size in bytes
     * @throws IllegalArgumentException naming the text and the accepted forms
     */
    public static long parse(String text) {
        Matcher m = text == null ? null : SIZE.matcher(text);
        if (m == null || !m.matches()) {
            throw invalid(text);
        }
        double number = Double.parseDouble(m.group(1));
        double bytes = number * multiplier(m.group(2).toLowerCase(Locale.ROOT), text);
        if (bytes >= Long.MAX_VALUE) {
            throw new IllegalArgumentException("size '" + text + "' is too large");
        }
        return Math.round(bytes);
    }

    private static double multiplier(String unit, String text) {
        return switch (unit) {
            case "", "b" -> 1;
            case "kb" -> 1e3;
            case "mb" -> 1e6;
            case "gb" -> 1e9;
            case "tb" -> 1e12;
            case "k", "kib" -> 1L << 10;
            case "m", "mib" -> 1L << 20;
            case "g", "gib" -> 1L << 30;
            case "t", "tib" -> 1L << 40;
            default -> throw invalid(text);
        };
    }

    private static IllegalArgumentException invalid(String text) {
        return new IllegalArgumentException("'" + text + "' is not a size; write e.g. 500MB, 200GB, 1TiB or a number of bytes");
    }

    /** A short human form, e.g. {@code 200.0 GB}. */
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
