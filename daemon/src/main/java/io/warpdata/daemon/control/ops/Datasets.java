package io.warpdata.daemon.control.ops;

import io.warpdata.daemon.control.ControlException;
import io.warpdata.manifest.DatasetRef;
import io.warpdata.manifest.ManifestValidationException;

/** Parsing of the {@code dataset} argument shared by the operations. */
final class Datasets {
    private Datasets() {
    }

    static DatasetRef ref(String text) {
        return parse(text, "name a dataset as workspace/name, or workspace/name@REF (a version prefix of 8+ hex digits,"
                + " a tag or a branch)");
    }

    /** The {@code dataset} of a publish, which makes a version, so is named without one (audit 33). */
    static DatasetRef toPublish(String text) {
        return parse(text, "name the dataset to publish as workspace/name (lowercase letters, digits, '_' and '-', starting with no '-')");
    }

    private static DatasetRef parse(String text, String nextStep) {
        try {
            return DatasetRef.parse(text);
        } catch (ManifestValidationException e) {
            throw new ControlException(ControlException.BAD_REQUEST, "dataset '" + text + "': " + e.getMessage(), nextStep);
        }
    }
}
