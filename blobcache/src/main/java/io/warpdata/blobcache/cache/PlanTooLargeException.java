package io.warpdata.blobcache.cache;

import io.warpdata.manifest.WarpException;

/**
 * An order plan would hold more memory than warpd allows for plans ({@link OrderPrefetcher}), or
 * more members than a plan can have. Nothing of it is kept.
 */
public final class PlanTooLargeException extends WarpException {
    public PlanTooLargeException(String message) {
        super(message, "Send a smaller order: only this rank's share of the epoch, or the epoch in parts"
                + " (plan the first half, and the second half when the reader gets there). A plan costs"
                + " about 8 bytes per member and 12 bytes per MiB of data read.");
    }

    @Override
    public String type() {
        return "PlanTooLarge";
    }
}
