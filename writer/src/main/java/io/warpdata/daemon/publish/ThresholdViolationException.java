package io.warpdata.daemon.publish;

import io.warpdata.manifest.WarpException;

/**
 * A tensor warehouse whose validation summary exceeds the thresholds its own manifest sets
 * (seed 003: training refuses such a warehouse unless overridden). Raised before anything is
 * uploaded; {@code warpctl publish --allow-threshold-violations} publishes it anyway.
 */
public final class ThresholdViolationException extends WarpException {
    public ThresholdViolationException(String message) {
        super(message, "Rebuild the warehouse from cleaner inputs, or publish it as it is with"
                + " --allow-threshold-violations (training then needs its own override too).");
    }

    @Override
    public String type() {
        return "ThresholdsViolated";
    }
}
