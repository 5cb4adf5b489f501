package io.warpdata.manifest;

/** A manifest value violates an invariant; names the offending field. */
public final class ManifestValidationException extends WarpException {
    private final String field;

    public ManifestValidationException(String field, String message) {
        super(field + ": " + message,
                "Fix the input that produced '" + field + "' and publish again.");
        this.field = field;
    }

    /** The JSON path of the field that failed validation, e.g. {@code tables.main.shards[0].name}. */
    public String field() {
        return field;
    }

    @Override
    public String type() {
        return "InvalidManifest";
    }
}
