package io.warpdata.store;

import io.warpdata.manifest.WarpException;

/** A store operation failed; subclasses say why. Plain instances are unexpected failures. */
public class StoreException extends WarpException {
    public StoreException(String message, String nextStep, Throwable cause) {
        super(message, nextStep, cause);
    }

    @Override
    public String type() {
        return "StoreError";
    }
}
