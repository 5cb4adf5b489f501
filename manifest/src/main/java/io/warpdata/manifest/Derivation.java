package io.warpdata.manifest;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Where a derived version (a view) came from: the parent version, the table its rows were
 * selected from, and the query that selected them. Part of the hashed manifest, so the same
 * query over the same parent is the same version on every machine.
 *
 * @param parent        the parent's dataset id
 * @param parentVersion the parent version the rows were selected from
 * @param table         the parent table the query ran over
 * @param query         the query's terms by name ({@code where}, {@code order_by}, {@code limit},
 *                      {@code sample}, {@code fraction}, {@code stratify_by}, {@code seed}); only
 *                      the terms given
 */
public record Derivation(DatasetId parent, VersionHash parentVersion, String table, SortedMap<String, String> query) {
    /** Longest query term kept: a view's query is a short text, never data. */
    public static final int MAX_TERM_CHARS = 64 * 1024;

    public Derivation {
        Objects.requireNonNull(parent, "parent");
        Objects.requireNonNull(parentVersion, "parentVersion");
        Names.requireComponent("table", table);
        query = Collections.unmodifiableSortedMap(new TreeMap<>(query));
        for (Map.Entry<String, String> e : query.entrySet()) {
            if (!e.getKey().matches("[a-z][a-z_]{0,31}")) {
                throw new ManifestValidationException("query." + e.getKey(), "is not a query term name");
            }
            Objects.requireNonNull(e.getValue(), e.getKey());
            if (e.getValue().length() > MAX_TERM_CHARS) {
                throw new ManifestValidationException("query." + e.getKey(),
                        "is longer than " + MAX_TERM_CHARS + " characters");
            }
        }
    }
}
