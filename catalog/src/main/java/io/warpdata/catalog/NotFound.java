package io.warpdata.catalog;

import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The "not found" errors of a catalog. Each says what does exist, so that a typo is one look
 * away from its fix: the dataset's versions, else its workspace's datasets, else the workspaces;
 * for a name, the dataset's tags and branches.
 */
final class NotFound {
    /** An error lists at most this many names, then "...". */
    private static final int MAX_LISTED = 20;

    private final Catalog catalog;

    NotFound(Catalog catalog) {
        this.catalog = catalog;
    }

    /** "X is not published", listing the versions of the dataset, or else its workspace's datasets. */
    DatasetNotFoundException version(DatasetId id, String what) {
        List<VersionHash> versions = catalog.versions(id);
        List<String> existing;
        if (!versions.isEmpty()) {
            existing = versions.stream().limit(MAX_LISTED).map(v -> id + "@" + v.shortHex(12)).toList();
        } else {
            List<DatasetId> datasets = catalog.datasets(id.workspace());
            existing = datasets.isEmpty()
                    ? catalog.workspaces().stream().limit(MAX_LISTED).map(ws -> ws + "/").toList()
                    : datasets.stream().limit(MAX_LISTED).map(DatasetId::toString).toList();
        }
        return new DatasetNotFoundException(what, catalog.store().describe(), existing);
    }

    /**
     * A dataset with versions but no latest pointer (published without {@code --set-latest}):
     * says so, with its versions and the two ways to read one; without versions, "not published".
     */
    DatasetNotFoundException noLatest(DatasetId id) {
        List<VersionHash> versions = catalog.versions(id);
        if (versions.isEmpty()) {
            return version(id, "A latest version of " + id);
        }
        String example = id + "@" + versions.get(0).shortHex(12);
        return new DatasetNotFoundException(id + " has " + versions.size() + " version(s) in "
                + catalog.store().describe() + " but no latest: none was published with --set-latest. Versions: "
                + versions.stream().limit(MAX_LISTED).map(v -> id + "@" + v.shortHex(12)).collect(Collectors.joining(", "))
                + (versions.size() > MAX_LISTED ? ", ..." : "") + ".",
                "Name a version by its hash (e.g. " + example + "), or make one the latest: publish it again with"
                        + " --set-latest (the same input uploads nothing).");
    }

    /**
     * A name that is neither a tag nor a branch of a dataset that exists: says what the dataset
     * does have (its tags and branches), never that the dataset "is not published".
     */
    DatasetNotFoundException noSuchName(DatasetId id, String name) {
        if (catalog.versions(id).isEmpty()) {
            return version(id, id + "@" + name);
        }
        List<String> refs = refs(id);
        return new DatasetNotFoundException(id + " has no tag or branch '" + name + "' in "
                + catalog.store().describe() + prefixHint(name) + "."
                + (refs.isEmpty() ? " It has no tags or branches." : " Its tags and branches: " + String.join(", ", refs) + "."),
                "Name a version by one of its tags or branches, or by its hash (8 or more hex digits);"
                        + " 'warpctl list-remote " + id + "' lists its versions, tags and branches.");
    }

    /**
     * A tag or branch to delete or move that the dataset does not have: as {@link #noSuchName}
     * ("has no tag or branch X ... It has no tags or branches"), never "Nothing is published there"
     * of a dataset that is.
     */
    DatasetNotFoundException ref(DatasetId id, String name) {
        return noSuchName(id, name);
    }

    private List<String> refs(DatasetId id) {
        List<String> refs = new ArrayList<>();
        catalog.tags(id).stream().limit(MAX_LISTED).forEach(t -> refs.add(id + "@" + t + " (tag)"));
        catalog.branches(id).stream().limit(MAX_LISTED).forEach(b -> refs.add(id + "@" + b + " (branch)"));
        return refs;
    }

    /** A short all-hex name was probably meant as a version prefix, which needs 8 digits. */
    private static String prefixHint(String name) {
        return name.length() < 8 && name.chars().allMatch(c -> Character.digit(c, 16) >= 0)
                ? " (a version prefix needs at least 8 hex digits)" : "";
    }
}
