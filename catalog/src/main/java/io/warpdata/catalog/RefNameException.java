package io.warpdata.catalog;

import io.warpdata.manifest.WarpException;

/**
 * A tag or branch name this dataset cannot have (too long to show beside the dataset's name, or
 * {@code latest}): about the command's argument, not about a manifest being published (audit 32:
 * it said "field 'ref'" and "publish again").
 */
public final class RefNameException extends WarpException {
    public RefNameException(String message, String nextStep) {
        super(message, nextStep);
    }

    @Override
    public String type() {
        return "InvalidInput";
    }
}
