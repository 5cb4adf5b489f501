package io.warpdata.store;

/**
 * The store took the connection (or did not refuse it) but sent nothing back within its answer
 * timeout: a stopped server, a blackholed network, a dead NAT, an overloaded gateway. One such
 * call may be a stuck connection to a healthy store, so the read path may retry it; but when no
 * other call was answered while it waited, {@link StoreHealth} takes the store as not answering
 * and fails calls at once, as for a store that refuses connections, until a probe is answered.
 */
public final class StoreNotAnsweringException extends StoreUnavailableException {
    public StoreNotAnsweringException(String message, Throwable cause) {
        super(message, NEXT_STEP, cause);
    }

    static final String NEXT_STEP = "Check the store or --endpoint and the network between (warpctl doctor): it"
            + " accepts connections but does not answer. Cached data and known datasets keep serving, and warpd"
            + " reconnects by itself.";

    @Override
    public String type() {
        return "StoreNotAnswering";
    }
}
