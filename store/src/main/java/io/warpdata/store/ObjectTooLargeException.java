package io.warpdata.store;

/**
 * An object that should be small (a pointer, a manifest, a block hash list) is larger than such
 * an object can be: the store holds something else there, by mistake or malice. Nothing of it is
 * read beyond the limit.
 */
public final class ObjectTooLargeException extends StoreException {
    public ObjectTooLargeException(String object, long size, long limit) {
        this(object, size, limit, "Check what the store holds at that key: something other than Warp wrote it."
                + " Re-publish the version, or move the pointer again with warpctl.");
    }

    /** As the plain constructor, with the next step that fits where the limit comes from. */
    public ObjectTooLargeException(String object, long size, long limit, String nextStep) {
        super(object + " is " + (size < 0 ? "larger than " + limit : size) + " bytes; no such object may be larger"
                + " than " + limit + " bytes, so it was not read", nextStep, null);
    }

    @Override
    public String type() {
        return "ObjectTooLarge";
    }
}
