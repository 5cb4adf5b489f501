package io.warpdata.manifest;

import java.util.regex.Pattern;

/**
 * What a user names, parsed once: {@code ws/name} (the latest version, i.e. the default
 * branch), {@code ws/name@<hash prefix>} (a fixed version; at least 8 lowercase hex digits), or
 * {@code ws/name@<tag or branch>}. Like Iceberg's {@code SnapshotRef}, tags and branches share
 * one namespace per dataset, and which of the two a name is belongs to the store, not to the
 * text: the catalog resolves a {@link Named} ref to a tag or a branch.
 *
 * <p>Ref names follow {@link #requireRefName}: {@code [a-z0-9][a-z0-9._-]*}, at most
 * {@value #MAX_REF_NAME} characters, and never all hex of 8 or more characters (that would read
 * as a version prefix). {@code @latest} names the default branch.
 */
public record DatasetRef(DatasetId id, Ref ref) {
    /** {@code @latest}: the default branch, the same as no ref at all. */
    public static final String LATEST = "latest";
    public static final int MAX_REF_NAME = 128;

    private static final Pattern VERSION_PREFIX = Pattern.compile("^[0-9a-f]{8,64}$");
    private static final Pattern REF_NAME = Pattern.compile("^[a-z0-9][a-z0-9._-]*$");

    /** Which version a {@link DatasetRef} asks for. */
    public sealed interface Ref permits Latest, Version, Named {
    }

    /** The latest pointer (the default branch). */
    public record Latest() implements Ref {
        @Override
        public String toString() {
            return LATEST;
        }
    }

    /** A version by its hash or a prefix of at least 8 hex digits. */
    public record Version(String prefix) implements Ref {
        public Version {
            if (prefix == null || !VERSION_PREFIX.matcher(prefix).matches()) {
                throw new ManifestValidationException("version", "'" + prefix
                        + "' is not a version hash or a prefix of at least 8 lowercase hex digits");
            }
        }

        /** Whether this names a whole 64-digit hash (no listing needed to resolve it). */
        public boolean complete() {
            return prefix.length() == 64;
        }

        @Override
        public String toString() {
            return prefix;
        }
    }

    /** A tag or a branch, by name. */
    public record Named(String name) implements Ref {
        public Named {
            requireRefName("ref", name);
            if (name.equals(LATEST)) {
                throw new ManifestValidationException("ref", "'latest' is the default branch; use DatasetRef.Latest");
            }
        }

        @Override
        public String toString() {
            return name;
        }
    }

    public DatasetRef {
        java.util.Objects.requireNonNull(id, "id");
        java.util.Objects.requireNonNull(ref, "ref");
    }

    /**
     * Parses {@code ws/name}, {@code ws/name@latest}, {@code ws/name@<hex prefix>} or
     * {@code ws/name@<tag or branch>}.
     *
     * @throws ManifestValidationException naming what is wrong
     */
    public static DatasetRef parse(String text) {
        int at = text == null ? -1 : text.indexOf('@');
        if (at < 0) {
            return new DatasetRef(DatasetId.parse(text), new Latest());
        }
        return new DatasetRef(DatasetId.parse(text.substring(0, at)), parseRef(text.substring(at + 1)));
    }

    /**
     * The ref part alone (after the '@').
     *
     * @throws ManifestValidationException if it is neither a hex prefix of 8+ digits nor a valid ref name
     */
    public static Ref parseRef(String text) {
        if (text == null || text.isEmpty()) {
            throw new ManifestValidationException("ref", "empty ref after '@' (use a version prefix, a tag or a branch)");
        }
        if (text.equals(LATEST)) {
            return new Latest();
        }
        if (VERSION_PREFIX.matcher(text).matches()) {
            return new Version(text);
        }
        // A short all-hex text ("@abc") is a valid tag name; if no such tag exists, the
        // catalog's "not found" says that a version prefix needs 8 hex digits.
        return new Named(text);
    }

    public static DatasetRef latest(DatasetId id) {
        return new DatasetRef(id, new Latest());
    }

    public static DatasetRef version(DatasetId id, VersionHash version) {
        return new DatasetRef(id, new Version(version.hex()));
    }

    public static DatasetRef named(DatasetId id, String name) {
        return new DatasetRef(id, new Named(name));
    }

    /**
     * Checks a tag or branch name: {@code [a-z0-9][a-z0-9._-]*}, at most {@value #MAX_REF_NAME}
     * characters, and not all hex of 8 or more characters (which would read as a version prefix).
     *
     * @throws ManifestValidationException saying which rule is broken
     */
    public static String requireRefName(String field, String name) {
        if (name != null && name.length() >= 8 && name.length() <= 64 && !isHex(name)
                && isHex(name.toLowerCase(java.util.Locale.ROOT))) {
            throw new ManifestValidationException(field, "'" + name + "' looks like a version hash in capitals;"
                    + " versions are lowercase hex: @" + name.toLowerCase(java.util.Locale.ROOT));
        }
        if (name == null || name.isEmpty() || name.length() > MAX_REF_NAME || !REF_NAME.matcher(name).matches()) {
            throw new ManifestValidationException(field, "'" + name + "' is not a valid tag or branch name"
                    + " (lowercase letters, digits, '.', '_', '-'; starting with a letter or digit; at most "
                    + MAX_REF_NAME + " characters)");
        }
        if (name.length() >= 8 && isHex(name)) {
            throw new ManifestValidationException(field, "'" + name + "' could be read as a version hash prefix;"
                    + " a tag or branch name must not be all hex digits");
        }
        return name;
    }

    private static boolean isHex(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
                return false;
            }
        }
        return true;
    }

    @Override
    public String toString() {
        return ref instanceof Latest ? id.toString() : id + "@" + ref;
    }
}
