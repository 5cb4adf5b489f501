package io.warpdata.blobcache;

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

    @Override
    public String type() {
        return "DatasetNotFoundError";
    }
}
