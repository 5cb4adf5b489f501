package io.warpdata.manifest;

/** A dataset's identity: {@code workspace/name}, both matching {@code ^[a-z0-9_-]+$}. */
public record DatasetId(String workspace, String name) {
    public DatasetId {
        if (workspace == null || !Names.ID_PART.matcher(workspace).matches()) {
            throw new ManifestValidationException("dataset_id", "bad workspace '" + workspace
                    + "' (use lowercase letters, digits, '_' and '-')");
        }
        if (name == null || !Names.ID_PART.matcher(name).matches()) {
            throw new ManifestValidationException("dataset_id", "bad dataset name '" + name
                    + "' (use lowercase letters, digits, '_' and '-')");
        }
    }

    /** Whether {@code s} is a valid workspace (or dataset name) of an id: what the mount shows of a store's folders. */
    public static boolean isPart(String s) {
        return s != null && Names.ID_PART.matcher(s).matches();
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
