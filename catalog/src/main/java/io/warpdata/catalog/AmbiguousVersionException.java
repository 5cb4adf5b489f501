package io.warpdata.catalog;

import io.warpdata.store.StoreException;

import java.util.List;

/** A version prefix matches more than one published version; the message lists them. */
public final class AmbiguousVersionException extends StoreException {
    public AmbiguousVersionException(String ref, List<String> candidates) {
        super("Version prefix " + ref + " matches " + candidates.size() + " versions: "
                        + String.join(", ", candidates.subList(0, Math.min(candidates.size(), 20)))
                        + (candidates.size() > 20 ? ", ..." : ""),
                "Use a longer prefix of the version hash (or the full 64 hex digits).", null);
    }

    @Override
    public String type() {
        return "AmbiguousVersion";
    }
}
