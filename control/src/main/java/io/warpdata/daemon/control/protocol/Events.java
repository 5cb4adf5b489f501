package io.warpdata.daemon.control.protocol;

/** The names an event line carries in its {@code "event"} field. */
public final class Events {
    /** Progress of a long operation (warm, cache.verify, publish). */
    public static final String PROGRESS = "progress";
    /** One batch of rows of {@code table.batches}. */
    public static final String BATCH = "batch";

    private Events() {
    }
}
