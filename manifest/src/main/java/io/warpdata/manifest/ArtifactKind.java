package io.warpdata.manifest;

/** How an artifact's members are stored. */
public enum ArtifactKind {
    /** Tar shards packed by Warp (deterministic headers, content-defined shard boundaries). */
    TAR_SHARDS("tar_shards"),
    /** Existing WebDataset / tar shards indexed as they are. */
    WEBDATASET_SHARDS("webdataset_shards");

    private final String json;

    ArtifactKind(String json) {
        this.json = json;
    }

    public String json() {
        return json;
    }

    public static ArtifactKind fromJson(String value) {
        for (ArtifactKind k : values()) {
            if (k.json.equals(value)) {
                return k;
            }
        }
        throw new ManifestValidationException("kind", "unknown artifact kind '" + value + "'");
    }
}
