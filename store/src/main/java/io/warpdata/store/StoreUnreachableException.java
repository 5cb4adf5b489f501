package io.warpdata.store;

/**
 * The store cannot be reached at all: the connection was refused or timed out, the host is
 * unknown, or an earlier such failure is recent and the store is not tried again before its
 * next probe ({@link StoreHealth}). Unlike a 5xx this says nothing will answer for a while, so
 * the read path fails at once (EIO) instead of retrying until its deadline; lookups answer from
 * the last known good state.
 */
public final class StoreUnreachableException extends StoreUnavailableException {
    public StoreUnreachableException(String message, Throwable cause) {
        super(message, "Check that the store (or --endpoint) is up and reachable (warpctl doctor); cached data"
                + " and known datasets keep serving, and warpd reconnects by itself.", cause);
    }

    @Override
    public String type() {
        return "StoreUnreachable";
    }
}
