package io.warpdata.store;

/**
 * The store cannot be reached at all: the connection was refused or timed out, the host is
 * unknown, or an earlier such failure is recent and the store is not tried again before its
 * next probe ({@link StoreHealth}). Unlike a 5xx this says nothing will answer for a while, so
 * the read path fails at once (EIO) instead of retrying until its deadline; lookups answer from
 * the last known good state. A call failed at once because the store stopped answering (a hung
 * store, {@link StoreNotAnsweringException}) is typed {@code StoreNotAnswering}, as the calls that
 * found it so were: the user's next step is the same.
 */
public final class StoreUnreachableException extends StoreUnavailableException {
    private final boolean notAnswering;

    public StoreUnreachableException(String message, Throwable cause) {
        this(message, cause, false);
    }

    private StoreUnreachableException(String message, Throwable cause, boolean notAnswering) {
        this(message, notAnswering ? StoreNotAnsweringException.NEXT_STEP
                : "Check that the store (or --endpoint) is up and reachable (warpctl doctor); cached data"
                        + " and known datasets keep serving, and warpd reconnects by itself.", cause, notAnswering);
    }

    private StoreUnreachableException(String message, String nextStep, Throwable cause, boolean notAnswering) {
        super(message, nextStep, cause);
        this.notAnswering = notAnswering;
    }

    /**
     * A call a warpd in {@code --mode local} does not make: it never contacts the store, so the
     * next step is another mode, not waiting for a reconnect that never comes (audit 31).
     */
    static StoreUnreachableException offline(String message) {
        return new StoreUnreachableException(message, "warpd runs in --mode local and never contacts the store: restart it"
                + " with --mode auto (or hybrid) to read from the store or run 'warpctl warm'.", null, false);
    }

    /** A call not tried because the store is known not to answer (it takes connections, sends nothing). */
    static StoreUnreachableException notAnswering(String message) {
        return new StoreUnreachableException(message, null, true);
    }

    @Override
    public String type() {
        return notAnswering ? "StoreNotAnswering" : "StoreUnreachable";
    }
}
