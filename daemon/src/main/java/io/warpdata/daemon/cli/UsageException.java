package io.warpdata.daemon.cli;

import io.warpdata.manifest.WarpException;

/** The command line is wrong (exit code 2): a missing setting, a malformed argument. */
public final class UsageException extends WarpException {
    public UsageException(String message, String nextStep) {
        super(message, nextStep);
    }

    @Override
    public String type() {
        return "Usage";
    }
}
