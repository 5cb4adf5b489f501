package io.warpdata.daemon.control;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/** A flag an operation polls: set when its client goes away or the daemon shuts down. */
public final class Cancellation implements BooleanSupplier {
    private final AtomicBoolean cancelled = new AtomicBoolean();

    public void cancel() {
        cancelled.set(true);
    }

    public boolean isCancelled() {
        return cancelled.get();
    }

    @Override
    public boolean getAsBoolean() {
        return cancelled.get();
    }

    /**
     * @throws ControlException of type {@link ControlException#CANCELLED} if cancelled
     */
    public void throwIfCancelled(String what) {
        if (cancelled.get()) {
            throw new ControlException(ControlException.CANCELLED, what + " was cancelled",
                    "run it again; work already done (cached blocks) is kept");
        }
    }
}
