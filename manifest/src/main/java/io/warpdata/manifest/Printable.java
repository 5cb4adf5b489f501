package io.warpdata.manifest;

/**
 * Text that came from outside (a file or member name, a client's filter, a store's message) made
 * fit for one line of a message or a log: control characters, C0 and C1 (a terminal's escape
 * sequences, a newline that would start a forged log line), as {@code \xNN}; everything else as
 * it is.
 */
public final class Printable {
    private Printable() {
    }

    /** {@code text} with its control characters escaped; {@code "null"} for null. */
    public static String of(String text) {
        if (text == null) {
            return "null";
        }
        StringBuilder b = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            boolean control = c < 0x20 || (c >= 0x7f && c <= 0x9f);
            if (control && b == null) {
                b = new StringBuilder(text.length() + 16).append(text, 0, i);
            }
            if (b != null) {
                if (control) {
                    b.append(String.format("\\x%02x", (int) c));
                } else {
                    b.append(c);
                }
            }
        }
        return b == null ? text : b.toString();
    }
}
