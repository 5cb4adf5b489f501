package io.warpdata.store;

/**
 * The store did not answer usefully: network errors, timeouts, 5xx, throttling after retries.
 * Worth retrying; cached data and the catalog's last known good answers keep serving meanwhile.
 */
public sealed class StoreUnavailableException extends StoreException
        permits StoreUnreachableException, StoreNotAnsweringException {
    public StoreUnavailableException(String message, Throwable cause) {
        this(message, "Check the network and the endpoint (warpctl doctor); cached data keeps serving, and the"
                + " read can be retried.", cause);
    }

    /** With its own next step (a write: "publish again", not "the read can be retried"). */
    public StoreUnavailableException(String message, String nextStep, Throwable cause) {
        super(message, nextStep, cause);
    }

    @Override
    public String type() {
        return "StoreUnavailable";
    }
}
