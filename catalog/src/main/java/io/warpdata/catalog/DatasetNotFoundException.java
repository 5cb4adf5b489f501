package io.warpdata.catalog;

import io.warpdata.store.StoreException;

import java.util.List;

/** No such dataset or version; the message says what exists. */
public final class DatasetNotFoundException extends StoreException {
    public DatasetNotFoundException(String what, String store, List<String> existing) {
        super(what + " is not published in " + store + "."
                        + (existing.isEmpty() ? " Nothing is published there." : " Existing: " + String.join(", ", existing)
                        + (existing.size() >= 20 ? ", ..." : "") + "."),
                "Check the spelling of workspace/name, the version hash, and the --remote URI;"
                        + " 'warpctl list-remote' lists what is there.", null);
    }

    /**
     * A message of its own, for a dataset that exists but lacks what was asked for (a tag or
     * branch, a latest version): saying "is not published" of it would mislead.
     */
    public DatasetNotFoundException(String message, String nextStep) {
        super(message, nextStep, null);
    }

    @Override
    public String type() {
        return "DatasetNotFoundError";
    }
}
