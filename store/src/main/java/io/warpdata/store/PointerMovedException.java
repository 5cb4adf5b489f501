package io.warpdata.store;

/**
 * A compare-and-swap write of a pointer (latest, a branch, a tag) lost: the object was changed
 * or created by someone else since it was read, so nothing was written. Two publishers moving
 * one branch at the same time: exactly one wins, the other gets this.
 */
public final class PointerMovedException extends StoreException {
    public PointerMovedException(String pointer, String detail) {
        super(pointer + " was moved by someone else meanwhile" + (detail.isEmpty() ? "" : " (" + detail + ")")
                        + "; nothing was written",
                "Retry: the command reads the pointer again and moves it from where it is now.", null);
        this.details = java.util.Map.of();
    }

    private final java.util.Map<String, String> details;

    /** With a message and next step of the caller's, which knows what the pointer means (a tag, latest). */
    public PointerMovedException(String message, String nextStep, Throwable cause) {
        this(message, nextStep, cause, java.util.Map.of());
    }

    /** ... and {@link #details()}, such as the {@code version} a lost publish made all the same. */
    public PointerMovedException(String message, String nextStep, Throwable cause, java.util.Map<String, String> details) {
        super(message, nextStep, cause);
        this.details = java.util.Map.copyOf(details);
    }

    @Override
    public java.util.Map<String, String> details() {
        return details;
    }

    @Override
    public String type() {
        return "PointerMoved";
    }
}
