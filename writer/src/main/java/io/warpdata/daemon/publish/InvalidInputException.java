package io.warpdata.daemon.publish;

import io.warpdata.manifest.WarpException;

/**
 * A publish input cannot be used as it is: a missing path, a file that is not Parquet, a symlink
 * leaving the source root, a device file, a hostile tar member name. Always names the input and
 * is raised before anything is uploaded.
 */
public final class InvalidInputException extends WarpException {
    public InvalidInputException(String message, String nextStep) {
        super(message, nextStep);
    }

    public InvalidInputException(String message, String nextStep, Throwable cause) {
        super(message, nextStep, cause);
    }

    @Override
    public String type() {
        return "InvalidInput";
    }
}
