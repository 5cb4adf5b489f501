package io.warpdata.store;

/** The key names no object. */
public final class BlobNotFoundException extends StoreException {
    private final String key;

    public BlobNotFoundException(String store, String key) {
        super("No object " + key + " in " + store,
                "Check the remote URI; if a version's blob is missing, re-publish that version.", null);
        this.key = key;
    }

    public String key() {
        return key;
    }

    @Override
    public String type() {
        return "BlobNotFound";
    }
}
