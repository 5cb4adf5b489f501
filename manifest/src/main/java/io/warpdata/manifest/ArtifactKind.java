package io.warpdata.manifest;

/** How an artifact's members are stored. */
public enum ArtifactKind {
    /** Tar shards packed by Warp (deterministic headers, content-defined shard boundaries). */
    TAR_SHARDS("tar_shards"),
    /** Existing WebDataset / tar shards indexed as they are. */
    WEBDATASET_SHARDS("webdataset_shards"),
    /**
     * A safetensors dataset (seed 001: {@code dataset_manifest.json} and {@code *.safetensors}
     * files), packed like a folder; every file's header and the dataset manifest were checked at
     * publish. The mount shows each tensor of {@code F.safetensors} as {@code F.tensors/KEY.npy}.
     */
    SAFETENSORS("safetensors"),
    /**
     * A tensor warehouse (seed 003: {@code manifest.json} and the TWH1 shards it lists), packed
     * like a folder; every shard's header and checksum and the manifest were checked at publish.
     * The mount shows the shards as they are, for training to mmap.
     */
    TENSOR_WAREHOUSE("tensor_warehouse");

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
