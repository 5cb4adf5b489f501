package io.warpdata.manifest;

import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/** Validation rules for the names and paths a manifest may hold. */
public final class Names {
    /** A workspace or dataset name; not starting with '-', which a command line would read as an option. */
    static final Pattern ID_PART = Pattern.compile("^[a-z0-9_][a-z0-9_-]*$");
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
     * Checks one file name as the mount shows it: what a member path's component may be (no '/',
     * NUL or backslash, not '.' or '..', at most 255 UTF-8 bytes, well-formed Unicode); spaces,
     * accents and '=' are names like any other. Returns the name unchanged.
     */
    public static String requireFileName(String field, String name) {
        if (name != null && name.indexOf('/') >= 0) {
            throw new ManifestValidationException(field, "'" + name + "' is not a file name (it holds '/')");
        }
        return requireMemberPath(field, name);
    }

    /**
     * Checks a member path inside an artifact: relative, '/'-separated, no empty, '.' or '..'
     * components, no component over 255 UTF-8 bytes, no NUL or backslash, well-formed Unicode.
     * A colon is a character like any other ({@code cam:front.jpg}): a path is only ever a file's
     * name in its artifact, never resolved as a URI. Returns the path unchanged.
     */
    public static String requireMemberPath(String field, String path) {
        memberPathBytes(field, path);
        return path;
    }

    /**
     * {@link #requireMemberPath} returning the UTF-8 form. The rules are applied to the bytes,
     * by {@link #memberPathProblem}, so that the member index, which validates stored paths
     * without decoding them, applies exactly the same rules.
     */
    static byte[] memberPathBytes(String field, String path) {
        if (path == null || path.isEmpty()) {
            throw new ManifestValidationException(field, "empty member path");
        }
        for (int i = 0; i < path.length(); i++) {
            char c = path.charAt(i);
            if (Character.isSurrogate(c)) {
                if (Character.isHighSurrogate(c) && i + 1 < path.length() && Character.isLowSurrogate(path.charAt(i + 1))) {
                    i++;
                } else {
                    throw new ManifestValidationException(field, "member path with an unpaired surrogate '" + path + "'");
                }
            }
        }
        byte[] bytes = path.getBytes(StandardCharsets.UTF_8);
        String problem = memberPathProblem(bytes, 0, bytes.length);
        if (problem != null) {
            throw new ManifestValidationException(field, problem + " '" + path + "'");
        }
        return bytes;
    }

    /** Why {@code b[from, to)} is not a valid member path in UTF-8, or null if it is. */
    static String memberPathProblem(byte[] b, int from, int to) {
        if (from >= to) {
            return "empty member path";
        }
        if (b[from] == '/') {
            return "absolute member path";
        }
        int start = from;
        for (int k = from; k <= to; k++) {
            if (k == to || b[k] == '/') {
                int len = k - start;
                if (len == 0 || (len == 1 && b[start] == '.') || (len == 2 && b[start] == '.' && b[start + 1] == '.')) {
                    return "member path has an empty, '.' or '..' component";
                }
                if (len > 255) {
                    return "member path component longer than 255 bytes";
                }
                start = k + 1;
            } else if (b[k] == 0 || b[k] == '\\') {
                return "member path with NUL or backslash";
            }
        }
        if (!isUtf8(b, from, to)) {
            return "member path is not valid UTF-8";
        }
        return null;
    }

    /** Well-formed UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF. */
    static boolean isUtf8(byte[] b, int from, int to) {
        int i = from;
        while (i < to) {
            int c = b[i] & 0xFF;
            if (c < 0x80) {
                i++;
                continue;
            }
            int n;
            int lo = 0x80;
            int hi = 0xBF;
            if (c >= 0xC2 && c <= 0xDF) {
                n = 1;
            } else if (c >= 0xE0 && c <= 0xEF) {
                n = 2;
                if (c == 0xE0) {
                    lo = 0xA0;
                } else if (c == 0xED) {
                    hi = 0x9F;
                }
            } else if (c >= 0xF0 && c <= 0xF4) {
                n = 3;
                if (c == 0xF0) {
                    lo = 0x90;
                } else if (c == 0xF4) {
                    hi = 0x8F;
                }
            } else {
                return false;
            }
            if (i + n >= to) {
                return false; // truncated sequence
            }
            int c1 = b[i + 1] & 0xFF;
            if (c1 < lo || c1 > hi) {
                return false;
            }
            for (int k = 2; k <= n; k++) {
                int ck = b[i + k] & 0xFF;
                if (ck < 0x80 || ck > 0xBF) {
                    return false;
                }
            }
            i += n + 1;
        }
        return true;
    }
}
