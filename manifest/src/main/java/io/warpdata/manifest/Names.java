package io.warpdata.manifest;

import java.util.regex.Pattern;

/** Validation rules for the names and paths a manifest may hold. */
public final class Names {
    static final Pattern ID_PART = Pattern.compile("^[a-z0-9_-]+$");
    /** Table, artifact and shard names become single path components in the mount. */
    static final Pattern COMPONENT = Pattern.compile("^[A-Za-z0-9_][A-Za-z0-9_.=+-]{0,254}$");
    static final Pattern HEX64 = Pattern.compile("^[0-9a-f]{64}$");

    private Names() {
    }

    public static void requireComponent(String field, String value) {
        if (value == null || !COMPONENT.matcher(value).matches()) {
            throw new ManifestValidationException(field, "'" + value
                    + "' is not a valid name (letters, digits, '_', '.', '=', '+', '-'; not starting with '.' or '-')");
        }
    }

    public static void requireNonNegative(String field, long value) {
        if (value < 0) {
            throw new ManifestValidationException(field, "must not be negative, was " + value);
        }
    }

    /**
     * Checks a member path inside an artifact: relative, '/'-separated, no empty, '.' or '..'
     * components, no NUL, no URI scheme. Returns the path unchanged.
     */
    public static String requireMemberPath(String field, String path) {
        if (path == null || path.isEmpty()) {
            throw new ManifestValidationException(field, "empty member path");
        }
        if (path.startsWith("/")) {
            throw new ManifestValidationException(field, "absolute member path '" + path + "'");
        }
        if (path.indexOf('\0') >= 0 || path.indexOf('\\') >= 0) {
            throw new ManifestValidationException(field, "member path with NUL or backslash '" + path + "'");
        }
        if (path.matches("^[A-Za-z][A-Za-z0-9+.-]*:.*")) {
            throw new ManifestValidationException(field, "member path looks like a URI '" + path + "'");
        }
        int start = 0;
        while (start <= path.length()) {
            int end = path.indexOf('/', start);
            if (end < 0) {
                end = path.length();
            }
            String part = path.substring(start, end);
            if (part.isEmpty() || part.equals(".") || part.equals("..")) {
                throw new ManifestValidationException(field, "member path '" + path
                        + "' has an empty, '.' or '..' component");
            }
            if (part.length() > 255) {
                throw new ManifestValidationException(field, "member path component longer than 255 bytes in '" + path + "'");
            }
            start = end + 1;
        }
        return path;
    }
}
