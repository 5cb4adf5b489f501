package io.warpdata.catalog;

import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The names a dataset's versions go by: latest (the default branch), its tags and its branches,
 * read from the store. A listing: one LIST for tags, one for branches, one GET per pointer.
 *
 * @param latest   the version latest names, or null
 * @param tags     tag -> version
 * @param branches branch -> version
 */
public record RefNames(VersionHash latest, SortedMap<String, VersionHash> tags, SortedMap<String, VersionHash> branches) {
    public static RefNames of(Catalog catalog, DatasetId id) {
        SortedMap<String, VersionHash> tags = new TreeMap<>();
        for (String t : catalog.tags(id)) {
            catalog.tag(id, t).ifPresent(v -> tags.put(t, v));
        }
        SortedMap<String, VersionHash> branches = new TreeMap<>();
        for (String b : catalog.branches(id)) {
            catalog.branch(id, b).ifPresent(v -> branches.put(b, v));
        }
        return new RefNames(catalog.latest(id).orElse(null), tags, branches);
    }

    /** The names of {@code version}: {@code latest}, tag names, {@code branch B}. */
    public List<String> of(VersionHash version) {
        List<String> out = new ArrayList<>();
        if (version.equals(latest)) {
            out.add("latest");
        }
        tags.forEach((t, v) -> {
            if (v.equals(version)) {
                out.add("tag " + t);
            }
        });
        branches.forEach((b, v) -> {
            if (v.equals(version)) {
                out.add("branch " + b);
            }
        });
        return out;
    }

    /** As JSON: {@code {latest, tags: {name: hash}, branches: {name: hash}}}. */
    public Json json() {
        Map<String, String> t = new LinkedHashMap<>();
        tags.forEach((k, v) -> t.put(k, v.hex()));
        Map<String, String> b = new LinkedHashMap<>();
        branches.forEach((k, v) -> b.put(k, v.hex()));
        return new Json(latest == null ? null : latest.hex(), t, b);
    }

    /** The names of a dataset's versions as {@code list-remote --json} prints them. */
    public record Json(String latest, Map<String, String> tags, Map<String, String> branches) {
    }
}
