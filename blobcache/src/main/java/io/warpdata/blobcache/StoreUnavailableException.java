package io.warpdata.blobcache;

/** The store did not answer usefully: network errors, timeouts, 5xx, throttling after retries. */
public final class StoreUnavailableException extends StoreException {
    public StoreUnavailableException(String message, Throwable cause) {
        super(message,
                "Check the network and the endpoint (warpctl doctor); cached data keeps serving, and the"
                        + " read can be retried.",
                cause);
    }

    @Override
    public String type() {
        return "StoreUnavailable";
    }
}
