package io.warpdata.manifest;

/**
 * A stored manifest (or a side blob it names) cannot be trusted: it does not parse, fails
 * validation, or its content does not match the hash it is stored under.
 */
public final class ManifestCorruptedException extends WarpException {
    private final String field;

    public ManifestCorruptedException(String source, String field, String message) {
        this(source, field, message, null);
    }

    public ManifestCorruptedException(String source, String field, String message, Throwable cause) {
        super("Manifest " + source + " is corrupted at '" + field + "': " + message,
                "Re-publish the dataset version from its source, or check the store for tampering;"
                        + " run 'warpctl cache gc' if a cached copy is suspect.",
                cause);
        this.field = field;
    }

    /** The field that failed, or {@code "$"} for the whole document. */
    public String field() {
        return field;
    }

    @Override
    public String type() {
        return "ManifestCorrupted";
    }
}
