package io.warpdata.store;

import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;

/**
 * Key names in a store (DESIGN.md section 3). Blobs are spread over 256 prefixes by the first
 * byte of their hash so that S3 can partition the load.
 */
public final class StoreLayout {
    public static final String DATASETS = "datasets/";

    private StoreLayout() {
    }

    public static String blob(BlobId id) {
        return "blobs/sha256/" + id.hex().substring(0, 2) + "/" + id.hex();
    }

    public static String workspace(String workspace) {
        return DATASETS + workspace + "/";
    }

    public static String dataset(DatasetId id) {
        return DATASETS + id.workspace() + "/" + id.name() + "/";
    }

    public static String versions(DatasetId id) {
        return dataset(id) + "versions/";
    }

    public static String version(DatasetId id, VersionHash version) {
        return versions(id) + version.hex() + ".json";
    }

    public static String latest(DatasetId id) {
        return dataset(id) + "latest.json";
    }

    /** Folder of a dataset's tags (immutable named pointers), one {@code <tag>.json} each. */
    public static String tags(DatasetId id) {
        return dataset(id) + "tags/";
    }

    public static String tag(DatasetId id, String tag) {
        return tags(id) + tag + ".json";
    }

    /** Folder of a dataset's branches (movable named pointers), one {@code <branch>.json} each. */
    public static String branches(DatasetId id) {
        return dataset(id) + "branches/";
    }

    public static String branch(DatasetId id, String branch) {
        return branches(id) + branch + ".json";
    }
}
