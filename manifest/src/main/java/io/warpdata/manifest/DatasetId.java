package io.warpdata.manifest;

/**
 * A dataset's identity: {@code workspace/name}, both matching {@code ^[a-z0-9_][a-z0-9_-]*$}, of at most
 * {@link #MAX_NAME} characters each.
 */
public record DatasetId(String workspace, String name) {
    /** So that the mount's {@code name@<64 hex digits>} fits in one file name (255 bytes). */
    public static final int MAX_NAME = 255 - 1 - 64;

    public DatasetId {
        if (workspace == null || !Names.ID_PART.matcher(workspace).matches()) {
            throw new ManifestValidationException("dataset_id", "bad workspace '" + workspace
                    + "' (use lowercase letters, digits, '_' and '-', not starting with '-')");
        }
        if (name == null || !Names.ID_PART.matcher(name).matches()) {
            throw new ManifestValidationException("dataset_id", "bad dataset name '" + name
                    + "' (use lowercase letters, digits, '_' and '-', not starting with '-')");
        }
        if (workspace.length() > MAX_NAME) {
            throw new ManifestValidationException("dataset_id", "workspace '" + workspace.substring(0, 16) + "...' has "
                    + workspace.length() + " characters; at most " + MAX_NAME + ", as a dataset name");
        }
        if (name.length() > MAX_NAME) {
            throw new ManifestValidationException("dataset_id", "dataset name '" + name.substring(0, 16) + "...' has "
                    + name.length() + " characters; at most " + MAX_NAME + ", so that the mount's name@<version hash>"
                    + " fits in one file name (255 bytes)");
        }
    }

    /** Whether {@code s} is a valid workspace (or dataset name) of an id: what the mount shows of a store's folders. */
    public static boolean isPart(String s) {
        return s != null && s.length() <= MAX_NAME && Names.ID_PART.matcher(s).matches();
    }

    /** Parses {@code ws/name}. */
    public static DatasetId parse(String text) {
        int slash = text == null ? -1 : text.indexOf('/');
        if (slash < 0 || text.indexOf('/', slash + 1) >= 0) {
            throw new ManifestValidationException("dataset_id", "'" + text + "' is not of the form workspace/name");
        }
        return new DatasetId(text.substring(0, slash), text.substring(slash + 1));
    }

    @Override
    public String toString() {
        return workspace + "/" + name;
    }
}
